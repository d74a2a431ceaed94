package searchapi

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/fixtures/mcpregistry"
	"github.com/agentfinder/agentfinder/normalize"
)

// registryRecords are the records an MCP registry walk makes of the
// fixture registry's current-shape examples.
func registryRecords(t testing.TB) []normalize.Record {
	t.Helper()
	ex, err := mcpregistry.Examples()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"servers": ex})
	page, err := normalize.ReadRegistryPage(body)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]normalize.RegistryEntry{}
	for _, e := range page.Servers {
		byName[e.Name] = append(byName[e.Name], e)
	}
	var recs []normalize.Record
	for _, vs := range byName {
		if rec, _, ok := normalize.RegistryRecord(vs, normalize.RegistryOptions{Registry: "https://registry.example.com", Now: testNow}); ok {
			recs = append(recs, rec)
		}
	}
	return recs
}

// TestRegistryRecordDoors: a record read from an MCP registry is found
// under its server name, slash and all, written plainly or percent-encoded,
// as JSON and as a page whose "use it" box holds a client configuration.
func TestRegistryRecordDoors(t *testing.T) {
	cfg := Config{PublicURL: "https://finder.test.example", RegistryName: "Test Finder", MinScore: new(int),
		PageTokenKey: []byte("test-key"), Now: func() time.Time { return testNow }}
	f := serveRecords(t, "registryrec", registryRecords(t), nil, nil, cfg, nil)
	const name = "io.github.user/remote-weather"
	for _, path := range []string{"/agents/" + url.PathEscape(name), "/agents/" + name} {
		var rec map[string]any
		resp := f.do("GET", path, nil, nil, &rec)
		if resp.StatusCode != 200 || rec["identifier"] != name {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, rec["identifier"])
		}
		if tr, _ := rec["trust"].(map[string]any); tr["level"] != normalize.TrustRegistry || rec["publisher"] != "github.com/user" {
			t.Errorf("GET %s: trust %v publisher %v", path, rec["trust"], rec["publisher"])
		}
	}
	if resp := f.do("GET", "/agents/"+url.PathEscape("io.github.user/no-such-server"), nil, nil, nil); resp.StatusCode != 404 {
		t.Errorf("a missing name: %d, want 404", resp.StatusCode)
	}
	p := f.get(t, "/agents/"+url.PathEscape("io.github.user/local-weather"))
	if p.status != 200 || !strings.Contains(p.body, "mcpServers") || !strings.Contains(p.body, "@modelcontextprotocol/server-weather@1.0.0") ||
		!strings.Contains(p.body, "API_KEY") {
		t.Errorf("page of local-weather: %d, use-it box missing the npm launch and its env: %.400s", p.status, p.body)
	}
	p = f.get(t, "/agents/"+name)
	if !strings.Contains(p.body, "https://{host}/mcp") {
		t.Errorf("page of remote-weather does not show its templated remote")
	}
}
