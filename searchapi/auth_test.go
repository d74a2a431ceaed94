package searchapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/api"
	"github.com/agentfinder/agentfinder/searchapi/authn"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// visibilityRecords are 3 public, 2 hr and 2 finance records, all tagged
// "payroll" so one query finds them all.
func visibilityRecords() []normalize.Record {
	var recs []normalize.Record
	add := func(name string, n int, groups []string) {
		for i := range n {
			recs = append(recs, normalize.Record{
				Identifier:  fmt.Sprintf("urn:ai:%s.example:agent:payroll-%d", name, i),
				DisplayName: fmt.Sprintf("Payroll helper %s %d", name, i),
				Type:        "application/a2a-agent-card+json",
				Description: "Answers payroll questions.",
				URL:         fmt.Sprintf("https://%s.example/agents/payroll-%d.json", name, i),
				Tags:        []string{"payroll", name},
				Publisher:   name + ".example",
				Visibility:  groups,
				Source:      normalize.Source{Catalog: "https://" + name + ".example/.well-known/ai-catalog.json"},
			})
		}
	}
	add("public", 3, nil)
	add("hr", 2, []string{"hr"})
	add("fin", 2, []string{"finance"})
	return recs
}

// writeKeys writes an API keys file giving each key its groups.
func writeKeys(t *testing.T, path string, keys map[string][]string) {
	t.Helper()
	var parts []string
	for k, g := range keys {
		parts = append(parts, fmt.Sprintf(`{"name": %q, "sha256": %q, "groups": [%s]}`, "key-"+k, authn.HashKey(k), `"`+strings.Join(g, `","`)+`"`))
	}
	if err := os.WriteFile(path, []byte(`{"keys": [`+strings.Join(parts, ",")+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
}

func newAuthFixture(t *testing.T, mode AuthMode, extra ...Verifier) (*fixture, *authn.Keys, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.json")
	writeKeys(t, path, map[string][]string{"hr-secret": {"HR"}, "fin-secret": {"finance"}})
	keys, err := authn.LoadKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{PublicURL: "https://finder.test.example", PageTokenKey: []byte("k"), Now: func() time.Time { return testNow },
		Auth: mode, Verifiers: append([]Verifier{keys}, extra...)}
	return serveRecords(t, "auth", visibilityRecords(), nil, nil, cfg, nil), keys, path
}

func bearerHdr(tok string) map[string]string {
	if tok == "" {
		return nil
	}
	return map[string]string{"Authorization": "Bearer " + tok}
}

// publishersSeen runs every read path as the holder of tok and returns the
// publishers of what it found, failing on any count that disagrees.
func publishersSeen(t *testing.T, f *fixture, tok string) []string {
	t.Helper()
	h := bearerHdr(tok)
	var out searchOut
	if r := f.do("POST", "/search", map[string]any{"query": map[string]any{"text": "payroll", "federation": "none"}, "pageSize": 50}, h, &out); r.StatusCode != 200 {
		t.Fatalf("search as %q: %d", tok, r.StatusCode)
	}
	pubs := map[string]int{}
	for _, r := range out.Results {
		pubs[r.Publisher]++
	}
	var list api.ListResponse
	if r := f.do("GET", "/agents?pageSize=100", nil, h, &list); r.StatusCode != 200 || list.Total != int64(len(out.Results)) || len(list.Items) != len(out.Results) {
		t.Fatalf("list as %q: %d total %d, search found %d", tok, r.StatusCode, list.Total, len(out.Results))
	}
	var ex search.ExploreAnswer
	if r := f.do("POST", "/explore", map[string]any{"query": map[string]any{"text": "payroll"}, "facets": []string{"publisher", "tags"}}, h, &ex); r.StatusCode != 200 || ex.Total != int64(len(out.Results)) {
		t.Fatalf("explore as %q: %d total %d", tok, r.StatusCode, ex.Total)
	}
	for p, n := range ex.Facets["publisher"] {
		if pubs[p] != n {
			t.Errorf("explore as %q counts %d of %s, search found %d", tok, n, p, pubs[p])
		}
	}
	if n := ex.Facets["tags"]["payroll"]; n != len(out.Results) {
		t.Errorf("explore as %q: tag count %d, want %d", tok, n, len(out.Results))
	}
	var seen []string
	for p := range pubs {
		seen = append(seen, p)
	}
	slices.Sort(seen)
	return seen
}

func TestVisibilityByCaller(t *testing.T) {
	f, _, _ := newAuthFixture(t, AuthOptional)
	for tok, want := range map[string][]string{
		"":           {"public.example"},
		"hr-secret":  {"hr.example", "public.example"},
		"fin-secret": {"fin.example", "public.example"},
	} {
		if got := publishersSeen(t, f, tok); !slices.Equal(got, want) {
			t.Errorf("caller %q sees %v, want %v", tok, got, want)
		}
	}
	// The scheme is case-insensitive.
	var out searchOut
	f.do("POST", "/search", map[string]any{"query": map[string]any{"text": "payroll", "federation": "none"}}, map[string]string{"Authorization": "bearer hr-secret"}, &out)
	if len(out.Results) != 5 {
		t.Errorf("lower-case bearer scheme: %d results, want 5", len(out.Results))
	}
}

func TestHiddenRecordLeaksNothing(t *testing.T) {
	f, _, _ := newAuthFixture(t, AuthOptional)
	hidden := "/agents/" + "urn:ai:hr.example:agent:payroll-0"
	missing := "/agents/" + "urn:ai:hr.example:agent:payroll-9"
	var a, b struct{ Error door.ErrorDetail }
	ra := f.do("GET", hidden, nil, bearerHdr("fin-secret"), &a)
	rb := f.do("GET", missing, nil, bearerHdr("fin-secret"), &b)
	// The same 404, but for the identifier each names as the one asked for.
	same := strings.ReplaceAll(a.Error.Message, "payroll-0", "payroll-9") == b.Error.Message
	if ra.StatusCode != 404 || rb.StatusCode != 404 || a.Error.Code != b.Error.Code || !same || !strings.Contains(b.Error.Message, "payroll-9") {
		t.Fatalf("hidden %d %+v, missing %d %+v: must be the same 404", ra.StatusCode, a.Error, rb.StatusCode, b.Error)
	}
	var doc map[string]any
	if r := f.do("GET", hidden, nil, bearerHdr("hr-secret"), &doc); r.StatusCode != 200 {
		t.Fatalf("hr key reading its own record: %d", r.StatusCode)
	}
	if r := f.do("GET", hidden, nil, nil, nil); r.StatusCode != 404 {
		t.Fatalf("anonymous reading a hidden record: %d", r.StatusCode)
	}
	// A page token is bound to its caller's access: the hr caller's token
	// does not continue an anonymous listing, nor the other way round.
	var list api.ListResponse
	f.do("GET", "/agents?pageSize=2", nil, bearerHdr("hr-secret"), &list)
	if list.PageToken == "" || list.Total != 5 {
		t.Fatalf("hr listing: total %d token %q", list.Total, list.PageToken)
	}
	for _, tok := range []string{"", "fin-secret"} {
		if r := f.do("GET", "/agents?pageSize=2&pageToken="+list.PageToken, nil, bearerHdr(tok), nil); r.StatusCode != 400 {
			t.Errorf("hr page token used by %q: %d, want 400", tok, r.StatusCode)
		}
	}
	var s searchOut
	f.do("POST", "/search", map[string]any{"query": map[string]any{"text": "payroll", "federation": "none"}, "pageSize": 2}, bearerHdr("hr-secret"), &s)
	if s.PageToken == "" {
		t.Fatal("hr search: no page token")
	}
	if r := f.do("POST", "/search", map[string]any{"query": map[string]any{"text": "payroll", "federation": "none"}, "pageSize": 2, "pageToken": s.PageToken}, nil, nil); r.StatusCode != 400 {
		t.Errorf("hr search token used anonymously: %d, want 400", r.StatusCode)
	}
}

func TestAuthRequiredAndRevocation(t *testing.T) {
	f, keys, path := newAuthFixture(t, AuthRequired)
	var e struct{ Error door.ErrorDetail }
	r := f.do("POST", "/search", map[string]any{"query": map[string]any{"text": "payroll"}}, nil, &e)
	if r.StatusCode != 401 || e.Error.Code != door.CodeUnauthorized || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") || e.Error.CorrelationID == "" {
		t.Fatalf("no credential: %d %+v %q", r.StatusCode, e.Error, r.Header.Get("WWW-Authenticate"))
	}
	for _, p := range []string{"/agents", "/agents/urn:ai:public.example:agent:payroll-0"} {
		if r := f.do("GET", p, nil, nil, nil); r.StatusCode != 401 {
			t.Errorf("GET %s without a credential: %d, want 401", p, r.StatusCode)
		}
	}
	for _, p := range []string{"/", "/about"} { // pages answer with the HTML error page
		r, err := f.http.Client().Get(f.http.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != 401 || r.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("page %s without a credential: %d, want 401 with WWW-Authenticate", p, r.StatusCode)
		}
	}
	for _, p := range []string{"/healthz", "/.well-known/ai-catalog.json", "/openapi.json"} {
		if r := f.do("GET", p, nil, nil, nil); r.StatusCode != 200 {
			t.Errorf("GET %s must stay public: %d", p, r.StatusCode)
		}
	}
	if r := f.do("GET", "/agents", nil, bearerHdr("not-a-key"), nil); r.StatusCode != 401 || !strings.Contains(r.Header.Get("WWW-Authenticate"), "invalid_token") {
		t.Fatalf("bad key: %d %q", r.StatusCode, r.Header.Get("WWW-Authenticate"))
	}
	if got := publishersSeen(t, f, "hr-secret"); !slices.Equal(got, []string{"hr.example", "public.example"}) {
		t.Fatalf("hr key sees %v", got)
	}
	writeKeys(t, path, map[string][]string{"fin-secret": {"finance"}})
	if err := keys.Reload(); err != nil {
		t.Fatal(err)
	}
	if r := f.do("GET", "/agents", nil, bearerHdr("hr-secret"), nil); r.StatusCode != 401 {
		t.Fatalf("revoked key: %d, want 401", r.StatusCode)
	}
	if r := f.do("GET", "/agents", nil, bearerHdr("fin-secret"), nil); r.StatusCode != 200 {
		t.Fatalf("kept key: %d", r.StatusCode)
	}
	// A broken file keeps the keys loaded before.
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if keys.Reload() == nil {
		t.Fatal("a broken keys file reloaded without error")
	}
	if r := f.do("GET", "/agents", nil, bearerHdr("fin-secret"), nil); r.StatusCode != http.StatusOK {
		t.Fatalf("after a bad reload: %d", r.StatusCode)
	}
}

func TestSelfCatalogSaysAuth(t *testing.T) {
	f, _, _ := newAuthFixture(t, AuthRequired)
	var cat struct {
		Entries []struct {
			Metadata map[string]string `json:"metadata"`
		} `json:"entries"`
	}
	var raw json.RawMessage
	f.do("GET", "/.well-known/ai-catalog.json", nil, nil, &raw)
	checkManifestSchema(t, raw)
	if err := json.Unmarshal(raw, &cat); err != nil {
		t.Fatal(err)
	}
	if len(cat.Entries) == 0 || cat.Entries[0].Metadata["authentication"] != "required" || cat.Entries[0].Metadata["authenticationScheme"] != "bearer" {
		t.Fatalf("self catalog: %+v", cat.Entries)
	}
}
