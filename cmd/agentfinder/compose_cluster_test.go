package main

import (
	"flag"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// docker-compose.yml's cluster profile cannot be run here (no Docker
// engine), so this test reads it as compose would and checks what a typo
// would break: every node's settings are flags of this binary's serve and
// parse into a valid cluster configuration, the nodes name each other as
// NATS peers consistently, and the replicas they read and write are the
// profile's Meilisearch services, started for replication.

// composeFile is the part of a compose file the test reads.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

type composeService struct {
	Profiles    []string          `yaml:"profiles"`
	Image       string            `yaml:"image"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	DependsOn   map[string]any    `yaml:"depends_on"`
}

// composeTestEnv is the shell environment the profile is interpolated with:
// the variables its comment tells the user to set.
var composeTestEnv = map[string]string{
	"MEILI_MASTER_KEY":           "compose-test-master-key-0123456789",
	"AGENTFINDER_PAGE_TOKEN_KEY": "compose-test-page-token-key-0123456789",
}

// composeVarRE matches ${NAME}, ${NAME:-default} and ${NAME:?message}.
var composeVarRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|:\?)([^}]*))?\}`)

// interpolate expands s as compose does with env; a ${NAME:?message} whose
// NAME is unset or empty fails the test with message.
func interpolate(t *testing.T, s string, env map[string]string) string {
	t.Helper()
	return composeVarRE.ReplaceAllStringFunc(s, func(m string) string {
		p := composeVarRE.FindStringSubmatch(m)
		v := env[p[1]]
		switch {
		case v != "":
			return v
		case p[2] == ":-":
			return p[3]
		case p[2] == ":?":
			t.Errorf("compose would refuse to start: %s", p[3])
		}
		return ""
	})
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return f
}

// clusterProfile returns the cluster profile's agentfinder nodes and
// Meilisearch services, each by service name.
func clusterProfile(t *testing.T, f composeFile) (nodes, meilis map[string]composeService) {
	t.Helper()
	nodes, meilis = map[string]composeService{}, map[string]composeService{}
	for name, s := range f.Services {
		if !slices.Contains(s.Profiles, "cluster") {
			continue
		}
		switch {
		case strings.HasPrefix(s.Image, "agentfinder:"):
			nodes[name] = s
		case strings.HasPrefix(s.Image, "getmeili/meilisearch:"):
			meilis[name] = s
		default:
			t.Errorf("cluster service %s: image %q is neither agentfinder nor Meilisearch", name, s.Image)
		}
	}
	if len(nodes) != 3 || len(meilis) != 2 {
		t.Fatalf("the cluster profile has nodes %v and Meilisearch services %v; want three nodes and two replicas (README)", keys(nodes), keys(meilis))
	}
	return nodes, meilis
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// nodeOptions parses node's settings as serve does: its command's flags
// (the image's default is plain serve) and its environment, interpolated.
// Every AGENTFINDER_ variable must be one serve reads.
func nodeOptions(t *testing.T, name string, s composeService) serveOptions {
	t.Helper()
	var o serveOptions
	c := serveCLI(&o)
	known := map[string]bool{"MEILI_URL": true, "MEILI_API_KEY": true}
	c.fs.VisitAll(func(f *flag.Flag) {
		if e := c.envFor(f.Name); e != "" {
			known[e] = true
		}
	})
	for _, e := range c.extraEnv {
		known[e[0]] = true
	}
	env := map[string]string{}
	for k, v := range s.Environment {
		if !known[k] {
			t.Errorf("%s: environment %s is no setting of agentfinder serve", name, k)
		}
		env[k] = interpolate(t, v, composeTestEnv)
	}
	args := s.Command
	if len(args) == 0 {
		args = []string{"serve"} // the Dockerfile's CMD
	}
	if args[0] != "serve" {
		t.Fatalf("%s: command %q, want serve", name, args)
	}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if err := c.parse(args[1:], getenv); err != nil {
		t.Fatalf("%s: serve refuses its settings: %v", name, err)
	}
	o.adminToken, o.pageTokenKey = env["AGENTFINDER_ADMIN_TOKEN"], env["AGENTFINDER_PAGE_TOKEN_KEY"]
	if !o.cluster.on() {
		t.Fatalf("%s: not in cluster mode (no --cluster-listen, --cluster-peers or --nats-url)", name)
	}
	if err := o.cluster.check(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return o
}

func TestComposeClusterProfile(t *testing.T) {
	nodes, meilis := clusterProfile(t, readCompose(t))
	var peers0, replicas0 []string
	published := map[string]string{}
	for _, name := range keys(nodes) {
		s := nodes[name]
		o := nodeOptions(t, name, s)
		if o.cluster.node != name {
			t.Errorf("%s: --node-name %q, want its service name (its peers reach it by that name)", name, o.cluster.node)
		}
		if o.pageTokenKey == "" {
			t.Errorf("%s: no AGENTFINDER_PAGE_TOKEN_KEY: page tokens would not work across nodes", name)
		}
		if o.meiliKey != composeTestEnv["MEILI_MASTER_KEY"] {
			t.Errorf("%s: MEILI_API_KEY is not the replicas' MEILI_MASTER_KEY", name)
		}
		peers := o.cluster.peerList()
		checkPeers(t, name, peers, nodes, o.cluster.listen)
		replicas := checkReplicas(t, name, o, meilis)
		for r := range meilis {
			if _, ok := s.DependsOn[r]; !ok {
				t.Errorf("%s: does not depend on replica %s", name, r)
			}
		}
		if peers0 == nil {
			peers0, replicas0 = sorted(peers), replicas
		} else {
			if !slices.Equal(sorted(peers), peers0) {
				t.Errorf("%s: peers %v, another node's %v: every node must list the same peers", name, peers, peers0)
			}
			if !slices.Equal(replicas, replicas0) {
				t.Errorf("%s: replicas %v, another node's %v: every node must list the same replicas", name, replicas, replicas0)
			}
		}
		checkPublished(t, name, s.Ports, o.addr, published)
	}
	for name, m := range meilis {
		if !slices.Contains(m.Command, "--experimental-replication-parameters") {
			t.Errorf("%s: command %q lacks --experimental-replication-parameters (task ids from the write log)", name, m.Command)
		}
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

// checkPeers checks that node's peers are exactly the profile's nodes, each
// named by service and at the port that node's --cluster-listen binds.
func checkPeers(t *testing.T, node string, peers []string, nodes map[string]composeService, listen string) {
	t.Helper()
	_, ownPort, err := net.SplitHostPort(listen)
	if err != nil {
		t.Errorf("%s: --cluster-listen %q: %v", node, listen, err)
	}
	var named []string
	for _, p := range peers {
		host, port, err := net.SplitHostPort(p)
		if err != nil {
			t.Errorf("%s: peer %q is not host:port", node, p)
			continue
		}
		other, ok := nodes[host]
		if !ok {
			t.Errorf("%s: peer %q is no node of the cluster profile (%v)", node, p, keys(nodes))
			continue
		}
		if l := other.Environment["AGENTFINDER_CLUSTER_LISTEN"]; l != "" {
			if _, lp, _ := net.SplitHostPort(l); lp != port {
				t.Errorf("%s: peer %q, but %s listens for peers on %q", node, p, host, l)
			}
		} else if port != ownPort {
			t.Errorf("%s: peer %q, but %s listens for peers on port %s", node, p, host, ownPort)
		}
		named = append(named, host)
	}
	if !slices.Equal(sorted(named), keys(nodes)) {
		t.Errorf("%s: peers name %v, want every node once: %v", node, named, keys(nodes))
	}
}

// checkReplicas checks that node's --meili-replica list names each of the
// profile's Meilisearch services once, at the port Meilisearch listens on
// in its container; it returns the list.
func checkReplicas(t *testing.T, node string, o serveOptions, meilis map[string]composeService) []string {
	t.Helper()
	reps, err := o.cluster.replicaList(o.meiliKey)
	if err != nil {
		t.Fatalf("%s: %v", node, err)
	}
	var hosts, out []string
	for _, r := range reps {
		u, err := url.Parse(r.URL)
		if err != nil || u.Scheme != "http" {
			t.Errorf("%s: replica %s=%s is no http URL", node, r.Name, r.URL)
			continue
		}
		if _, ok := meilis[u.Hostname()]; !ok {
			t.Errorf("%s: replica %s=%s names no Meilisearch service of the profile (%v)", node, r.Name, r.URL, keys(meilis))
		}
		if u.Port() != "7700" { // Meilisearch's default --http-addr in the image
			t.Errorf("%s: replica %s=%s: Meilisearch listens on 7700 in its container", node, r.Name, r.URL)
		}
		hosts = append(hosts, u.Hostname())
		out = append(out, r.Name+"="+r.URL)
	}
	if !slices.Equal(sorted(hosts), keys(meilis)) {
		t.Errorf("%s: replicas on %v, want each of %v once", node, hosts, keys(meilis))
	}
	return out
}

// checkPublished checks that node publishes the port its --addr binds, on a
// host port no other node uses.
func checkPublished(t *testing.T, node string, ports []string, addr string, taken map[string]string) {
	t.Helper()
	_, apiPort, _ := net.SplitHostPort(addr)
	if len(ports) != 1 {
		t.Errorf("%s: ports %v, want one (the API)", node, ports)
		return
	}
	host, container, ok := strings.Cut(ports[0], ":")
	if !ok || container != apiPort {
		t.Errorf("%s: publishes %q, but the API listens on %s", node, ports[0], addr)
	}
	if other, dup := taken[host]; dup {
		t.Errorf("%s and %s both publish host port %s", node, other, host)
	}
	taken[host] = node
}
