package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	clusterHosts      = 8
	clusterKey        = "cluster-test-master-key-0123456789"
	clusterAdminToken = "cluster-test-admin-token-0123456789"
	clusterPingKey    = "cluster-ping-key-0001"
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
	n.cmd.Env = append(os.Environ(), childEnv+"=1", "MEILI_API_KEY="+clusterKey, "AGENTFINDER_PAGE_TOKEN_KEY=cluster-test-page-token-key-0123456789",
		"AGENTFINDER_ADMIN_TOKEN="+clusterAdminToken)
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

// call sends a request to node n (with the admin token when admin) and
// returns the status, the node that answered for the leader and the body.
func (n *nodeProc) call(method, path string, body any, admin bool) (int, string, []byte) {
	n.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+n.addr+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if admin {
		req.Header.Set("Authorization", "Bearer "+clusterAdminToken)
	}
	resp, err := (&http.Client{Timeout: 40 * time.Second}).Do(req)
	if err != nil {
		n.t.Fatalf("%s %s on %s: %v", method, path, n.name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get(fwdNode), b
}

// ping sends node n an IndexNow ping for host's catalog and wants 200
// from leader.
func (n *nodeProc) ping(host, leader string) {
	n.t.Helper()
	body := map[string]any{"host": host, "key": clusterPingKey, "urlList": []string{"https://" + host + wellKnown}}
	code, by, b := n.call(http.MethodPost, "/indexnow", body, false)
	if code != http.StatusOK || by != leader {
		n.t.Fatalf("ping for %s at %s: %d from %q (%s), want 200 from the leader %s", host, n.name, code, by, b, leader)
	}
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
func newClusterRig(t *testing.T, external bool, schedule string) *clusterRig {
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
		r.web.SetFile(host, "/"+clusterPingKey+".txt", []byte(clusterPingKey))
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
			"--lease-ttl", ttl.String(), "--schedule", schedule, "--crawl-workers", "4", "--seeds", seedFile,
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

// hostAt reports whether node i's search finds host's five agents, all at
// version.
func (r *clusterRig) hostAt(i int, host string, version int) bool {
	ids, err := r.nodes[i].search("cluster agent")
	if err != nil {
		return false
	}
	n := 0
	for _, id := range ids {
		if strings.HasPrefix(id, "urn:ai:"+host+":") {
			if !strings.HasSuffix(id, fmt.Sprintf("version %d.", version)) {
				return false
			}
			n++
		}
	}
	return n == 5
}

// hostIndexed waits until every live node finds host's agents at version.
func (r *clusterRig) hostIndexed(live []int, host string, version int, within time.Duration) {
	r.t.Helper()
	waitUntil(r.t, fmt.Sprintf("%s at version %d on nodes %v", host, version, live), within, func() bool {
		for _, i := range live {
			if !r.hostAt(i, host, version) {
				return false
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

// logStream is the index write log's stream and its state now.
func (r *clusterRig) logStream(js jetstream.JetStream) (jetstream.Stream, jetstream.StreamState) {
	r.t.Helper()
	st, err := js.Stream(r.t.Context(), writelog.Stream)
	if err != nil {
		r.t.Fatal(err)
	}
	info, err := st.Info(r.t.Context())
	if err != nil {
		r.t.Fatal(err)
	}
	return st, info.State
}

// logEnd is the write log's last sequence.
func (r *clusterRig) logEnd(js jetstream.JetStream) uint64 {
	_, state := r.logStream(js)
	return state.LastSeq
}

// wroteSince reports whether a node other than not wrote an index write
// (not a fence) after sequence seq of the log.
func (r *clusterRig) wroteSince(js jetstream.JetStream, seq uint64, not string) bool {
	ctx, cancel := context.WithTimeout(r.t.Context(), 5*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, writelog.Stream)
	if err != nil {
		return false
	}
	info, err := st.Info(ctx)
	if err != nil {
		return false
	}
	for s := seq + 1; s <= info.State.LastSeq; s++ {
		m, err := st.GetMsg(ctx, s)
		if err != nil || m.Subject == writelog.SubjectControl {
			continue
		}
		if m.Header.Get(writelog.HeaderMethod) != writelog.MethodFence && m.Header.Get(writelog.HeaderHolder) != not {
			return true
		}
	}
	return false
}

// checkLog reads the whole index write log: tokens never go down, each
// term's writes follow its fence, and each token is written by one node.
func (r *clusterRig) checkLog(js jetstream.JetStream) map[uint64]string {
	r.t.Helper()
	st, state := r.logStream(js)
	var cur uint64
	holders := map[uint64]string{}
	for seq := state.FirstSeq; seq <= state.LastSeq; seq++ {
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
	t.Parallel() // with TestClusterEmbedded: most of each is waiting on leases and elections
	r := newClusterRig(t, true, "@every 1s")
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
	stoppedAt := r.logEnd(js)
	r.nodes[si].signal(syscall.SIGSTOP)
	waitUntil(t, "a leader while "+second+" is stopped", 10*clusterTTL, func() bool {
		h, tok := r.leader(js)
		return h != "" && h != second && tok > tok2
	})
	// Resume it only once the new leader has written: its own writes,
	// still in flight when it stopped, then come after another term's.
	waitUntil(t, "a write of the new leader while "+second+" is stopped", 60*time.Second, func() bool {
		return r.wroteSince(js, stoppedAt, second)
	})
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
// (--cluster-listen, --cluster-peers), crawling once an hour so that only
// IndexNow pings and admin requests crawl again. Every node answers
// searches; a ping or an admin request at a node that does not lead the
// crawl is answered by the leader, which crawls; and a ping the leader
// accepted is crawled by the next leader when the leader's process (and
// NATS server) is killed before it could finish.
func TestClusterEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three agentfinder processes and two Meilisearch replicas")
	}
	t.Parallel() // with TestClusterFailover
	r := newClusterRig(t, false, "@every 1h")
	all := []int{0, 1, 2}
	r.allIndexed(all, 1, 90*time.Second)
	js := r.connect()
	first, _ := r.leader(js)
	li := r.node(first)
	other := r.nodes[(li+1)%3]

	// IndexNow at a node that does not lead.
	r.web.SetFile("c00.test", wellKnown, clusterCatalog("c00.test", 2))
	other.ping("c00.test", first)
	r.hostIndexed(all, "c00.test", 2, 60*time.Second)

	// The admin endpoints at a node that does not lead.
	if code, _, _ := other.call(http.MethodGet, "/admin/status", nil, false); code != http.StatusUnauthorized {
		t.Errorf("admin status without the token: %d, want 401", code)
	}
	code, by, b := other.call(http.MethodGet, "/admin/status", nil, true)
	var status struct {
		Crawl     bool `json:"crawl"`
		Scheduler struct {
			Seeds []struct{ Seed string } `json:"seeds"`
		} `json:"scheduler"`
	}
	if err := json.Unmarshal(b, &status); err != nil || code != http.StatusOK || by != first ||
		!status.Crawl || len(status.Scheduler.Seeds) != clusterHosts {
		t.Fatalf("admin status at %s: %d from %q, crawl %v, %d seeds (%v); want 200 from %s, crawling %d seeds",
			other.name, code, by, status.Crawl, len(status.Scheduler.Seeds), err, first, clusterHosts)
	}
	r.web.SetFile("c01.test", wellKnown, clusterCatalog("c01.test", 2))
	code, by, b = other.call(http.MethodPost, "/admin/crawl", map[string]any{"seeds": []string{"c01.test"}}, true)
	if code != http.StatusAccepted || by != first || !strings.Contains(string(b), "c01.test") {
		t.Fatalf("admin crawl at %s: %d from %q: %s; want 202 from %s triggering c01.test", other.name, code, by, b, first)
	}
	r.hostIndexed(all, "c01.test", 2, 60*time.Second)

	// A ping the leader accepted, whose crawl it cannot finish (the catalog
	// answers after a minute), survives the leader's death. c03 changes
	// too, unpinged: it stays at version 1, so the crawl of c02 is the
	// ping's, not a recrawl of everything.
	r.web.Script("c02.test", wellKnown, fixtures.Behavior{Delay: time.Minute})
	r.web.SetFile("c02.test", wellKnown, clusterCatalog("c02.test", 2))
	r.web.SetFile("c03.test", wellKnown, clusterCatalog("c03.test", 2))
	asked := catalogRequests(r.web, "c02.test")
	other.ping("c02.test", first)
	waitUntil(t, "the leader fetching c02's catalog", 30*time.Second, func() bool {
		return catalogRequests(r.web, "c02.test") > asked
	})
	r.nodes[li].signal(syscall.SIGKILL)
	r.web.Unscript("c02.test", wellKnown)
	// The killed node was also a NATS server, perhaps the leader of the
	// lease bucket's RAFT group: a new one is elected first (seconds).
	took := waitUntil(t, "a new crawl leader", 30*time.Second, func() bool {
		h, _ := r.leader(js)
		return h != "" && h != first
	})
	t.Logf("crawl leader %s (and its NATS server) killed; another took over after %s (TTL %s)", first, took, embeddedTTL)
	live := without(all, li)
	r.hostIndexed(live, "c02.test", 2, 60*time.Second)
	for _, i := range live {
		if !r.hostAt(i, "c03.test", 1) {
			t.Errorf("%s: c03.test is not at version 1: something but the ping crawled again", r.nodes[i].name)
		}
	}
	r.checkLog(js)
}

// catalogRequests counts the fixture web's requests for host's catalog.
func catalogRequests(web *fixtures.Web, host string) int {
	n := 0
	for _, rq := range web.RequestsFor(host) {
		if rq.Path == wellKnown {
			n++
		}
	}
	return n
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
