package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/ingest/writelog"
	"github.com/agentfinder/agentfinder/scheduler/lease"
	"github.com/agentfinder/agentfinder/scheduler/natsnode"
)

// The cluster test runs three agentfinder processes (an embedded NATS
// cluster among them) over two Meilisearch replicas, all on loopback, and
// stops each by PID: SIGKILL, SIGSTOP/SIGCONT.

// clusterTTL is the lease TTL over the test's own NATS cluster;
// embeddedTTL over the nodes' embedded one, whose RAFT groups also live in
// the processes the test stops. A renewal must land within TTL*3/4, which
// takes longer under the race detector on a loaded machine.
var clusterTTL, embeddedTTL = ttlFor(raceEnabled)

func ttlFor(race bool) (time.Duration, time.Duration) {
	if race {
		return 5 * time.Second, 6 * time.Second
	}
	return 2 * time.Second, 4 * time.Second
}

const (
	clusterHosts = 8
	clusterKey   = "cluster-test-master-key-0123456789"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// clusterCatalog is host's catalog: five agents, the first described by
// version.
func clusterCatalog(host string, version int) []byte {
	var entries []map[string]any
	for i := range 5 {
		entries = append(entries, map[string]any{
			"identifier": fmt.Sprintf("urn:ai:%s:agent:a%d", host, i), "displayName": fmt.Sprintf("Agent %d of %s", i, host),
			"type": "application/a2a-agent-card+json", "url": fmt.Sprintf("https://%s/agents/%d.json", host, i),
			"description": fmt.Sprintf("Cluster agent %d, version %d.", i, version), "updatedAt": fmt.Sprintf("2026-0%d-01T00:00:00Z", version),
		})
	}
	b, _ := json.Marshal(map[string]any{"specVersion": "1.0", "entries": entries})
	return b
}

// meiliProc is a Meilisearch replica the test started and stops by PID.
type meiliProc struct {
	t    *testing.T
	name string
	url  string
	dir  string
	port int
	cmd  *exec.Cmd
}

func startMeiliReplica(t *testing.T, name string) *meiliProc {
	t.Helper()
	m := &meiliProc{t: t, name: name, dir: t.TempDir(), port: freePort(t)}
	m.url = "http://127.0.0.1:" + strconv.Itoa(m.port)
	m.start()
	t.Cleanup(func() { m.kill() })
	return m
}

func (m *meiliProc) start() {
	m.t.Helper()
	m.cmd = exec.Command(meilitest.Bin(m.t), "--http-addr", "127.0.0.1:"+strconv.Itoa(m.port), "--db-path", filepath.Join(m.dir, "db"),
		"--no-analytics", "--env", "development", "--log-level", "WARN", "--experimental-replication-parameters")
	m.cmd.Env = append(os.Environ(), "MEILI_MASTER_KEY="+clusterKey)
	if err := m.cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	waitUntil(m.t, "meilisearch "+m.name+" healthy", 30*time.Second, func() bool {
		resp, err := http.Get(m.url + "/health")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})
}

func (m *meiliProc) kill() {
	if m.cmd != nil && m.cmd.Process != nil {
		_ = m.cmd.Process.Signal(syscall.SIGKILL)
		_ = m.cmd.Wait()
		m.cmd = nil
	}
}

// nodeProc is one agentfinder serve process of the cluster.
type nodeProc struct {
	t    *testing.T
	name string
	addr string
	args []string
	logf string
	cmd  *exec.Cmd
}

func (n *nodeProc) start() {
	n.t.Helper()
	logf, err := os.OpenFile(n.logf, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		n.t.Fatal(err)
	}
	n.cmd = exec.Command(os.Args[0], n.args...)
	n.cmd.Env = append(os.Environ(), childEnv+"=1", "MEILI_API_KEY="+clusterKey, "AGENTFINDER_PAGE_TOKEN_KEY=cluster-test-page-token-key-0123456789")
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	if err := n.cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	go func() { _ = n.cmd.Wait(); logf.Close() }()
}

func (n *nodeProc) signal(sig syscall.Signal) {
	if n.cmd != nil && n.cmd.Process != nil {
		_ = n.cmd.Process.Signal(sig)
	}
}

func (n *nodeProc) logs() string {
	b, _ := os.ReadFile(n.logf)
	return string(b)
}

// search asks node n for text and returns the identifiers, or an error.
func (n *nodeProc) search(text string) ([]string, error) {
	body, _ := json.Marshal(map[string]any{"query": map[string]any{"text": text, "federation": "none"}, "pageSize": 50, "minScore": 0})
	hc := &http.Client{Timeout: 5 * time.Second}
	resp, err := hc.Post("http://"+n.addr+"/search", "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	var r struct {
		Results []struct {
			Identifier  string `json:"identifier"`
			Description string `json:"description"`
		} `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	var ids []string
	for _, x := range r.Results {
		ids = append(ids, x.Identifier+" "+x.Description)
	}
	return ids, nil
}

func waitUntil(t *testing.T, what string, within time.Duration, ok func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !ok() {
		if time.Since(start) > within {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

type clusterRig struct {
	t     *testing.T
	web   *fixtures.Web
	nodes []*nodeProc
	reps  []*meiliProc
	nats  []*natsnode.Node // the NATS cluster, when the nodes use --nats-url
	urls  []string         // client URLs of the NATS servers
}

// startNATSCluster runs a three-node NATS cluster in the test process.
func (r *clusterRig) startNATSCluster() {
	t := r.t
	routes := make([]string, 3)
	for i := range routes {
		routes[i] = "127.0.0.1:" + strconv.Itoa(freePort(t))
	}
	nodes := make([]*natsnode.Node, 3)
	errs := make(chan error, 3)
	for i := range nodes {
		go func() {
			n, err := natsnode.Start(natsnode.Config{Name: "nats" + strconv.Itoa(i), StoreDir: t.TempDir(),
				ClusterListen: routes[i], Peers: routes, ReadyTimeout: 30 * time.Second})
			nodes[i] = n
			errs <- err
		}()
	}
	for range nodes {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range nodes {
		t.Cleanup(n.Shutdown)
		r.urls = append(r.urls, n.ClientURL())
	}
	r.nats = nodes
}

// newClusterRig starts two Meilisearch replicas and three agentfinder
// nodes over a NATS cluster of their own (embedded) or of the test's
// (external, --nats-url).
func newClusterRig(t *testing.T, external bool) *clusterRig {
	t.Helper()
	r := &clusterRig{t: t}
	ttl := embeddedTTL
	if external {
		ttl = clusterTTL
		r.startNATSCluster()
	}
	r.web = crawlertest.Web(t, fixtures.Options{NoWorld: true})
	var seeds []string
	for i := range clusterHosts {
		host := fmt.Sprintf("c%02d.test", i)
		r.web.SetFile(host, wellKnown, clusterCatalog(host, 1))
		seeds = append(seeds, host)
	}
	dir := t.TempDir()
	seedFile := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seedFile, []byte(strings.Join(seeds, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		r.reps = append(r.reps, startMeiliReplica(t, "r"+strconv.Itoa(i)))
	}
	clusterPorts := make([]string, 3)
	for i := range clusterPorts {
		clusterPorts[i] = "127.0.0.1:" + strconv.Itoa(freePort(t))
	}
	fx := newFixturesInfo(r.web, false).Flags
	for i := range 3 {
		n := &nodeProc{t: t, name: "n" + strconv.Itoa(i), addr: "127.0.0.1:" + strconv.Itoa(freePort(t)),
			logf: filepath.Join(dir, fmt.Sprintf("n%d.log", i))}
		n.args = []string{"serve", "--addr", n.addr, "--data-dir", filepath.Join(dir, n.name), "--node-name", n.name,
			"--meili-replica", "r0=" + r.reps[0].url, "--meili-replica", "r1=" + r.reps[1].url,
			"--lease-ttl", ttl.String(), "--schedule", "@every 1s", "--crawl-workers", "4", "--seeds", seedFile,
			"--no-embeddings", "--probe=false", "--min-score", "0", "--shutdown-timeout", "3s", "--log-level", "info"}
		if external {
			n.args = append(n.args, "--nats-url", strings.Join(r.urls, ","), "--cluster-replicas", "3")
		} else {
			natsPort := freePort(t)
			r.urls = append(r.urls, "nats://127.0.0.1:"+strconv.Itoa(natsPort))
			n.args = append(n.args, "--cluster-listen", clusterPorts[i], "--cluster-peers", strings.Join(clusterPorts, ","),
				"--nats-listen", "127.0.0.1:"+strconv.Itoa(natsPort))
		}
		n.args = append(n.args, fx...)
		r.nodes = append(r.nodes, n)
	}
	for _, n := range r.nodes {
		n.start()
	}
	t.Cleanup(func() {
		for _, n := range r.nodes {
			n.signal(syscall.SIGCONT)
			n.signal(syscall.SIGKILL)
		}
		if t.Failed() {
			for _, n := range r.nodes {
				t.Logf("--- %s log (tail, without NATS and HTTP lines) ---\n%s", n.name, tail(quiet(n.logs()), 6000))
			}
		}
	})
	return r
}

// quiet drops the NATS server's and the access log's lines.
func quiet(logs string) string {
	var b strings.Builder
	for l := range strings.Lines(logs) {
		if !strings.Contains(l, "component=nats") && !strings.Contains(l, "component=http") && !strings.Contains(l, "msg=\"crawl ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// connect opens a JetStream client on the nodes' embedded servers; it
// moves to another node when the one it uses dies.
func (r *clusterRig) connect() jetstream.JetStream {
	r.t.Helper()
	nc, err := natsnode.Connect(strings.Join(r.urls, ","), "cluster-test")
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(nc.Close)
	js, err := natsnode.JetStream(nc)
	if err != nil {
		r.t.Fatal(err)
	}
	return js
}

// leader is the crawl lease's holder and token as node i's server sees it.
func (r *clusterRig) leader(js jetstream.JetStream) (string, uint64) {
	ctx, cancel := context.WithTimeout(r.t.Context(), 2*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, lease.DefaultBucket)
	if err != nil {
		return "", 0
	}
	e, err := kv.Get(ctx, "crawl")
	if err != nil {
		return "", 0
	}
	var v struct {
		Holder string `json:"holder"`
	}
	_ = json.Unmarshal(e.Value(), &v)
	return v.Holder, e.Revision()
}

func (r *clusterRig) node(name string) int {
	for i, n := range r.nodes {
		if n.name == name {
			return i
		}
	}
	r.t.Fatalf("no node %q", name)
	return -1
}

// allIndexed waits until every live node's search finds all hosts' agents
// at version.
func (r *clusterRig) allIndexed(live []int, version int, within time.Duration) {
	r.t.Helper()
	want := fmt.Sprintf("version %d.", version)
	waitUntil(r.t, fmt.Sprintf("every catalog at version %d searchable on nodes %v", version, live), within, func() bool {
		for _, i := range live {
			ids, err := r.nodes[i].search("cluster agent")
			if err != nil || len(ids) != clusterHosts*5 {
				return false
			}
			for _, id := range ids {
				if !strings.HasSuffix(id, want) {
					return false
				}
			}
		}
		return true
	})
}

// setVersion publishes every catalog at version.
func (r *clusterRig) setVersion(version int) {
	for i := range clusterHosts {
		host := fmt.Sprintf("c%02d.test", i)
		r.web.SetFile(host, wellKnown, clusterCatalog(host, version))
	}
}

// checkLog reads the whole index write log: tokens never go down, each
// term's writes follow its fence, and each token is written by one node.
func (r *clusterRig) checkLog(js jetstream.JetStream) map[uint64]string {
	r.t.Helper()
	st, err := js.Stream(r.t.Context(), writelog.Stream)
	if err != nil {
		r.t.Fatal(err)
	}
	info, err := st.Info(r.t.Context())
	if err != nil {
		r.t.Fatal(err)
	}
	var cur uint64
	holders := map[uint64]string{}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(r.t.Context(), seq)
		if err != nil || m.Subject == writelog.SubjectControl {
			continue
		}
		tok, _ := strconv.ParseUint(m.Header.Get(writelog.HeaderToken), 10, 64)
		holder := m.Header.Get(writelog.HeaderHolder)
		if tok < cur {
			r.t.Errorf("log %d: token %d from %s after token %d: two writers", seq, tok, holder, cur)
		}
		if m.Header.Get(writelog.HeaderMethod) == writelog.MethodFence {
			holders[tok] = holder
		} else if holders[tok] != holder {
			r.t.Errorf("log %d: a write of %s with token %d, whose term's fence is %q's", seq, holder, tok, holders[tok])
		}
		cur = max(cur, tok)
	}
	return holders
}

// TestClusterFailover runs the three nodes over a NATS cluster of the
// test's own, so that stopping a node's process never stops a NATS server:
// SIGKILL the crawl leader mid-crawl, SIGSTOP the next one past its TTL,
// then take a NATS server away.
func TestClusterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three agentfinder processes and two Meilisearch replicas")
	}
	r := newClusterRig(t, true)
	all := []int{0, 1, 2}
	r.allIndexed(all, 1, 90*time.Second)
	js := r.connect()

	// SIGKILL the crawl leader mid-crawl (a recrawl runs every second).
	first, _ := r.leader(js)
	li := r.node(first)
	r.setVersion(2)
	r.nodes[li].signal(syscall.SIGKILL)
	took := waitUntil(t, "a new crawl leader", 10*clusterTTL, func() bool {
		h, _ := r.leader(js)
		return h != "" && h != first
	})
	t.Logf("crawl leader %s killed; another took over after %s (TTL %s)", first, took, clusterTTL)
	if took > 2*clusterTTL {
		t.Errorf("take-over took %s, want at most 2x the TTL (%s)", took, 2*clusterTTL)
	}
	r.allIndexed(without(all, li), 2, 60*time.Second) // nothing lost: every catalog's new version is indexed
	r.nodes[li].start()                               // it comes back on the same data

	// SIGSTOP the leader past its TTL, then SIGCONT: its late writes are refused.
	second, tok2 := r.leader(js)
	si := r.node(second)
	r.setVersion(3)
	r.nodes[si].signal(syscall.SIGSTOP)
	waitUntil(t, "a leader while "+second+" is stopped", 10*clusterTTL, func() bool {
		h, tok := r.leader(js)
		return h != "" && h != second && tok > tok2
	})
	time.Sleep(2 * clusterTTL)
	r.nodes[si].signal(syscall.SIGCONT)
	r.allIndexed(all, 3, 90*time.Second)
	waitUntil(t, second+" to see its term was over", 20*time.Second, func() bool {
		return strings.Contains(r.nodes[si].logs(), "lease lost")
	})
	if holders := r.checkLog(js); len(holders) < 3 {
		t.Errorf("the log shows %d terms (%v), want at least 3", len(holders), holders)
	}

	// A NATS server goes away: search keeps answering on every node, and
	// crawling goes on (after a pause while JetStream elects new leaders).
	r.nats[1].Shutdown()
	for _, n := range r.nodes {
		if _, err := n.search("cluster agent"); err != nil {
			t.Errorf("%s: search failed with a NATS server down: %v", n.name, err)
		}
	}
	r.setVersion(4)
	r.allIndexed(all, 4, 90*time.Second)
	r.checkLog(js)
}

// TestClusterEmbedded runs the three nodes as their own NATS cluster
// (--cluster-listen, --cluster-peers): they crawl, every one answers
// searches, and when the crawl leader's process (and NATS server) is
// killed, another node takes over and indexes what changed.
func TestClusterEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three agentfinder processes and two Meilisearch replicas")
	}
	r := newClusterRig(t, false)
	all := []int{0, 1, 2}
	r.allIndexed(all, 1, 90*time.Second)
	js := r.connect()
	first, _ := r.leader(js)
	li := r.node(first)
	r.setVersion(2)
	r.nodes[li].signal(syscall.SIGKILL)
	// The killed node was also a NATS server, perhaps the leader of the
	// lease bucket's RAFT group: a new one is elected first (seconds).
	took := waitUntil(t, "a new crawl leader", 30*time.Second, func() bool {
		h, _ := r.leader(js)
		return h != "" && h != first
	})
	t.Logf("crawl leader %s (and its NATS server) killed; another took over after %s (TTL %s)", first, took, embeddedTTL)
	r.allIndexed(without(all, li), 2, 60*time.Second)
	r.checkLog(js)
}

func without(list []int, x int) []int {
	var out []int
	for _, v := range list {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}
