package normalize_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/fixtures/mcpregistry"
	"github.com/agentfinder/agentfinder/normalize"
)

var registryOpts = normalize.RegistryOptions{Registry: "https://registry.example.com", Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}

// records reads a page and builds the record of each server name on it.
func records(t *testing.T, body []byte) (map[string]normalize.Record, normalize.RegistryPage) {
	t.Helper()
	page, err := normalize.ReadRegistryPage(body)
	if err != nil {
		t.Fatalf("ReadRegistryPage: %v", err)
	}
	byName := map[string][]normalize.RegistryEntry{}
	var order []string
	for _, e := range page.Servers {
		if _, ok := byName[e.Name]; !ok {
			order = append(order, e.Name)
		}
		byName[e.Name] = append(byName[e.Name], e)
	}
	out := map[string]normalize.Record{}
	for _, name := range order {
		rec, _, ok := normalize.RegistryRecord(byName[name], registryOpts)
		if ok {
			out[name] = rec
		}
	}
	return out, page
}

// TestRegistrySeedShapes reads the 471 servers of the May 2025 seed as
// published (snake_case, a bare list) and as converted to the current shape
// (a v0.1 page): every named server becomes one record under its own name,
// with the same description, version and packages in both shapes, and the
// seven servers without a name are problems beside them.
func TestRegistrySeedShapes(t *testing.T) {
	seed, err := mcpregistry.Seed()
	if err != nil {
		t.Fatal(err)
	}
	oldBody, _ := json.Marshal(seed)
	var current []any
	for _, old := range seed {
		server, meta := mcpregistry.Convert(old)
		current = append(current, map[string]any{"server": server, "_meta": map[string]any{normalize.OfficialMeta: meta}})
	}
	newBody, _ := json.Marshal(map[string]any{"servers": current, "metadata": map[string]any{"count": len(current)}})

	oldRecs, oldPage := records(t, oldBody)
	newRecs, newPage := records(t, newBody)
	if len(oldPage.Problems) != 7 || len(newPage.Problems) != 7 {
		t.Errorf("problems: old shape %d, current shape %d; want the 7 servers without a name", len(oldPage.Problems), len(newPage.Problems))
	}
	if len(oldRecs) != 464 || len(newRecs) != 464 {
		t.Fatalf("records: old shape %d, current shape %d; want 464", len(oldRecs), len(newRecs))
	}
	packages := 0
	for name, o := range oldRecs {
		n := newRecs[name]
		if o.Identifier != name || n.Identifier != name {
			t.Fatalf("identifier %q / %q, want the name %q as written", o.Identifier, n.Identifier, name)
		}
		if o.Description != n.Description || o.Version != n.Version || len(o.Bindings) != len(n.Bindings) {
			t.Errorf("%s: old shape %q %q %d bindings, current %q %q %d", name, o.Description, o.Version, len(o.Bindings), n.Description, n.Version, len(n.Bindings))
		}
		if n.Type != normalize.TypeMCP || n.Trust == nil || n.Trust.Level != normalize.TrustRegistry || n.PublisherVerified {
			t.Errorf("%s: type %s trust %+v verified %v", name, n.Type, n.Trust, n.PublisherVerified)
		}
		if !json.Valid(n.Data) || !strings.Contains(string(n.Data), name) {
			t.Errorf("%s: data does not hold the server.json as received: %s", name, n.Data)
		}
		for _, b := range n.Bindings {
			if b.Package != "" {
				packages++
			}
		}
	}
	if packages < 400 {
		t.Errorf("%d package bindings over 464 servers; the seed lists 464 packages", packages)
	}
	mag := newRecs["io.github.21st-dev/magic-mcp"]
	if mag.Publisher != "github.com/21st-dev" || len(mag.Bindings) != 1 || mag.Bindings[0].Package != "npm/@21st-dev/magic@0.0.46" ||
		!slices.Equal(mag.Bindings[0].Env, []string{"API_KEY"}) {
		t.Errorf("magic-mcp: publisher %q bindings %+v", mag.Publisher, mag.Bindings)
	}
}

// TestRegistryOlderShapes reads the 2025-07-09 API shape (flat servers,
// snake_case, registry metadata inside the server) and the 2025-09-29 one
// (server and _meta apart, camelCase, several versions of one server, a
// bad entry beside good ones).
func TestRegistryOlderShapes(t *testing.T) {
	body, err := os.ReadFile("testdata/registry/v2025-07-09.json")
	if err != nil {
		t.Fatal(err)
	}
	recs, page := records(t, body)
	if page.NextCursor != "abc" {
		t.Errorf("next cursor %q, want abc (next_cursor)", page.NextCursor)
	}
	w := recs["io.github.example/weather"]
	if w.Version != "0.9.0" || w.UpdatedAt != "2025-07-21T10:00:00Z" || w.Publisher != "github.com/example" {
		t.Errorf("weather: version %q updatedAt %q publisher %q", w.Version, w.UpdatedAt, w.Publisher)
	}
	want := normalize.Binding{Protocol: "mcp", Transport: "stdio", Package: "pypi/weather-mcp@0.9.0", Runtime: "uvx",
		Args: []string{"--python", "3.12", "<city>"}, Env: []string{"WEATHER_KEY"}}
	if len(w.Bindings) != 1 || !bindingEqual(w.Bindings[0], want) {
		t.Errorf("weather bindings %+v, want %+v", w.Bindings, want)
	}
	if w.Metadata["websiteUrl"] != "https://weather.example.com" {
		t.Errorf("websiteUrl %v", w.Metadata["websiteUrl"])
	}

	body, err = os.ReadFile("testdata/registry/v2025-09-29.json")
	if err != nil {
		t.Fatal(err)
	}
	recs, page = records(t, body)
	if len(page.Problems) != 2 || len(page.Servers) != 2 {
		t.Fatalf("%d servers, problems %+v; want 2 and 2", len(page.Servers), page.Problems)
	}
	tk := recs["com.example/tickets"]
	if tk.Publisher != "example.com" || tk.Version != "2.0.0" || tk.Status != normalize.RegistryDeprecated || tk.DisplayName != "Tickets" {
		t.Errorf("tickets: publisher %q version %q status %q name %q", tk.Publisher, tk.Version, tk.Status, tk.DisplayName)
	}
	if !slices.Equal(tk.Versions, []string{"2.0.0", "1.5.0"}) {
		t.Errorf("versions %v", tk.Versions)
	}
	var template, kinds []string
	for _, b := range tk.Bindings {
		if b.Template {
			template = append(template, b.URL)
		}
		if b.Package != "" {
			kinds = append(kinds, b.Package[:strings.IndexByte(b.Package, '/')])
		}
	}
	if !slices.Equal(template, []string{"https://mcp.example.com/{tenant}/mcp"}) {
		t.Errorf("template remotes %v", template)
	}
	if !slices.Equal(kinds, []string{"oci", "nuget", "mcpb", "cargo", "go"}) {
		t.Errorf("package kinds %v", kinds)
	}
	if tk.Bindings[0].Headers[0] != "X-API-Key" {
		t.Errorf("remote headers %v", tk.Bindings[0].Headers)
	}
}

func bindingEqual(a, b normalize.Binding) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestRegistryExamples reads the schema's current-shape examples and the
// later seed's records; the invalid examples keep their siblings.
func TestRegistryExamples(t *testing.T) {
	ex, err := mcpregistry.Examples()
	if err != nil {
		t.Fatal(err)
	}
	inv, err := mcpregistry.Invalid()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"servers": append(ex, inv...)})
	recs, page := records(t, body)
	if len(page.Problems) != 1 { // missing-name
		t.Errorf("problems %+v, want the one server without a name", page.Problems)
	}
	rw := recs["io.github.user/remote-weather"]
	if rw.DisplayName != "Remote Weather" || len(rw.Bindings) != 1 || !rw.Bindings[0].Template || rw.Metadata["icons"] == nil {
		t.Errorf("remote-weather: %+v", rw)
	}
	air := recs["io.github.domdomegg/airtable-mcp-server"]
	if air.Version != "1.7.3" || !slices.Contains(air.Versions, "1.7.2") {
		t.Errorf("airtable: version %q versions %v; want the highest semver and both listed", air.Version, air.Versions)
	}
	if _, ok := recs["no-namespace-separator"]; !ok {
		t.Errorf("a server whose name has no namespace is still read (under its name)")
	} else if p := recs["no-namespace-separator"].Publisher; p != "" {
		t.Errorf("publisher %q for a name without a namespace", p)
	}
}

// TestRegistryGarbage: a body that is not a server list is an error, never
// an empty page.
func TestRegistryGarbage(t *testing.T) {
	for _, body := range []string{"", "<html>", `{"servers": "x"}`, `{"data": []}`, "42", `{"servers": [1, 2]`} {
		if _, err := normalize.ReadRegistryPage([]byte(body)); err == nil {
			t.Errorf("ReadRegistryPage(%q): no error", body)
		}
	}
}

// TestRegistryDeleted: a server whose versions are all deleted has no
// record; one deleted version leaves the others.
func TestRegistryDeleted(t *testing.T) {
	e := func(v, status string, latest bool) normalize.RegistryEntry {
		return normalize.RegistryEntry{Name: "com.example/x", Version: v, Status: status, IsLatest: latest, Server: json.RawMessage(`{"name":"com.example/x","version":"` + v + `"}`)}
	}
	if _, _, ok := normalize.RegistryRecord([]normalize.RegistryEntry{e("1.0.0", "deleted", true)}, registryOpts); ok {
		t.Error("a deleted server has a record")
	}
	rec, _, ok := normalize.RegistryRecord([]normalize.RegistryEntry{e("2.0.0", "deleted", true), e("1.0.0", "active", false), e("1.10.0", "active", false)}, registryOpts)
	if !ok || rec.Version != "1.10.0" || !slices.Equal(rec.Versions, []string{"1.0.0", "1.10.0"}) {
		t.Errorf("record %q versions %v ok %v; want 1.10.0 (highest semver of those left)", rec.Version, rec.Versions, ok)
	}
}

func TestRegistryPublisher(t *testing.T) {
	for name, want := range map[string]string{
		"com.example/server":          "example.com",
		"io.github.owner/repo":        "github.com/owner",
		"io.github.Owner/repo":        "github.com/owner",
		"com.example.mcp/server":      "mcp.example.com",
		"ai.smithery/x":               "smithery.ai",
		"no-namespace":                "",
		"localhost/x":                 "",
		"com.exa_mple/x":              "",
		"io.modelcontextprotocol/fs":  "modelcontextprotocol.io",
		"io.github.user.name/weather": "github.com/user.name",
	} {
		if got := normalize.RegistryPublisher(name); got != want {
			t.Errorf("RegistryPublisher(%q) = %q, want %q", name, got, want)
		}
	}
}
