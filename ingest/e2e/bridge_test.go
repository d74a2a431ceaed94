package e2e_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/fixtures/mcpregistry"
	"github.com/agentfinder/agentfinder/normalize"
)

// The bridged web: agents that one source links to another.
//   - chain-a.test's catalog lists an MCP server at endpointA; the
//     registry's io.github.chain/tools has the same remote and the
//     repository chainRepo, which chain-c.test's catalog entry also names.
//     The registry copy is one agent with chain-a's entry (a shared
//     endpoint is the stronger match) and never with chain-c's: two
//     catalogs' identifiers are two agents, so the registry copy cannot be
//     one with both.
//   - chain-p.test's catalog entry points at chain-p's bare card (its
//     artifact URL), and the registry's test.chain-p/desk has the card's
//     endpoint as its remote: all three are one agent, the catalog's.
const (
	chainA, chainC, chainP = "chain-a.test", "chain-c.test", "chain-p.test"
	chainRegistry          = "registry.chain.test"
	endpointA              = "/mcp/tools" // on chain-a.test
	chainRepo              = "https://github.com/chain/tools"
	endpointP              = "/a2a/desk" // on chain-p.test
	chainTools             = "io.github.chain/tools"
	chainDesk              = "test.chain-p/desk"
)

func bridgeWeb(t *testing.T) *fixtures.Web {
	t.Helper()
	var reg http.Handler // made once the web's URLs are known, before any request
	w := crawlertest.Web(t, fixtures.Options{NoWorld: true, Handlers: map[string]http.Handler{
		chainRegistry: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { reg.ServeHTTP(rw, r) }),
	}})
	server := func(name, remote string) map[string]any {
		return map[string]any{"$schema": mcpregistry.SchemaURL, "name": name, "description": "Bridged server " + name + ".", "version": "1.0.0",
			"remotes": []any{map[string]any{"type": "streamable-http", "url": remote}}}
	}
	tools := server(chainTools, w.URL(chainA, endpointA))
	tools["repository"] = map[string]any{"url": chainRepo, "source": "github"}
	r, err := mcpregistry.New(mcpregistry.Config{Servers: []map[string]any{tools, server(chainDesk, w.URL(chainP, endpointP))}})
	if err != nil {
		t.Fatal(err)
	}
	reg = r
	cat := func(entries ...map[string]any) []byte {
		b, _ := json.Marshal(map[string]any{"specVersion": "1.0", "entries": entries})
		return b
	}
	mcpEntry := func(host, name string) map[string]any {
		return map[string]any{"identifier": "urn:ai:" + host + ":mcp:tools", "displayName": name, "type": "application/mcp-server-card+json",
			"description": name + ", bridged.", "updatedAt": "2026-01-01T00:00:00Z",
			"data": server("test."+strings.TrimSuffix(host, ".test")+"/tools", w.URL(host, endpointA))}
	}
	a := mcpEntry(chainA, "Chain A Tools")
	c := mcpEntry(chainC, "Chain C Tools")
	c["data"] = server("test.chain-c/tools", w.URL(chainC, "/mcp/other-tools"))
	c["metadata"] = map[string]any{"repository": chainRepo}
	w.SetFile(chainA, fixtures.PathWellKnown, cat(a))
	w.SetFile(chainC, fixtures.PathWellKnown, cat(c))
	w.SetFile(chainP, fixtures.PathAgentCard, []byte(`{"name":"Chain P Desk","description":"Desk agent, bridged.","version":"1.0",
		"url":"`+w.URL(chainP, endpointP)+`","skills":[{"id":"desk","name":"Desk","tags":["desk"]}]}`))
	w.SetFile(chainP, fixtures.PathWellKnown, cat(map[string]any{"identifier": "urn:ai:chain-p.test:agent:desk", "displayName": "Chain P Desk",
		"type": "application/a2a-agent-card+json", "url": w.URL(chainP, fixtures.PathAgentCard), "description": "Desk agent, bridged.",
		"updatedAt": "2026-01-01T00:00:00Z"}))
	return w
}

// TestBridgedAgentsSameIndexAnyOrder crawls the bridged web one seed at a
// time in two orders into two fresh indexes: in the second, the source
// that bridges two agents, and the weaker of its two matches, come before
// the stronger one. Both indexes must hold the same documents, field by
// field apart from fetch and index times, and the merges the matches call
// for.
func TestBridgedAgentsSameIndexAnyOrder(t *testing.T) {
	w := bridgeWeb(t)
	registry := "registry https://" + chainRegistry
	crawlInOrder := func(name string, crawls ...[]string) map[string]map[string]any {
		st := newStack(t, name, stackOptions{web: w})
		for _, seeds := range crawls {
			st.crawl(t, seeds)
		}
		return readDocs(t, st.s.Client, st.index)
	}
	a := crawlInOrder("bridge_a", []string{chainA, chainC, chainP}, []string{registry})
	b := crawlInOrder("bridge_b", []string{registry}, []string{chainC}, []string{chainA, chainP})

	lost := func(d map[string]any) []string {
		var out []string
		claims, _ := d["lostClaims"].([]any)
		for _, c := range claims {
			m, _ := c.(map[string]any)
			id, _ := m["identifier"].(string)
			out = append(out, id)
		}
		slices.Sort(out)
		return out
	}
	for run, docs := range map[string]map[string]map[string]any{"A": a, "B": b} {
		want := map[string][]string{
			"urn:ai:chain-a.test:mcp:tools":  {chainTools},
			"urn:ai:chain-c.test:mcp:tools":  nil,
			"urn:ai:chain-p.test:agent:desk": {"https://" + chainP + fixtures.PathAgentCard, chainDesk}, // a card's identifier is its URL as the crawler asked for it
		}
		for id, wantLost := range want {
			d, ok := docs[normalize.DocID(id)]
			if !ok {
				t.Errorf("run %s: no document for %s", run, id)
				continue
			}
			if got := lost(d); !slices.Equal(got, wantLost) {
				t.Errorf("run %s: %s has lost claims %v, want %v", run, id, got, wantLost)
			}
		}
		if len(docs) != len(want) {
			var ids []any
			for _, d := range docs {
				ids = append(ids, d["identifier"])
			}
			t.Errorf("run %s: %d documents %v, want %d", run, len(docs), ids, len(want))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(a)) {
		if !reflect.DeepEqual(a[id], b[id]) {
			ja, _ := json.Marshal(a[id])
			jb, _ := json.Marshal(b[id])
			t.Errorf("document %s differs:\nA: %s\nB: %s", id, ja, jb)
		}
	}
}
