package searchapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures/mcpregistry"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/authn"
	"github.com/agentfinder/agentfinder/searchapi/registryapi"
)

// registryContract holds the MCP Registry API's schemas, compiled from the
// published openapi.yaml and server.schema.json (JSON Schema 2020-12 and
// draft-07), so answers are checked by a schema library, not by hand.
type registryContract struct {
	list, server, serverJSON, errorBody *jsonschema.Schema
}

func loadRegistryContract(t testing.TB) *registryContract {
	t.Helper()
	y, err := os.ReadFile(filepath.Join("testdata", "mcp-registry", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(y, &doc); err != nil {
		t.Fatal(err)
	}
	asJSON, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	add := func(u string, raw []byte) {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(u, v); err != nil {
			t.Fatal(err)
		}
	}
	const base = "https://registry.test/openapi.json"
	add(base, asJSON)
	sj, err := os.ReadFile(filepath.Join("testdata", "mcp-registry", "server.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	add("https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json", sj)
	return &registryContract{
		list:       c.MustCompile(base + "#/components/schemas/ServerList"),
		server:     c.MustCompile(base + "#/components/schemas/ServerResponse"),
		serverJSON: c.MustCompile("https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"),
		errorBody:  c.MustCompile(base + "#/paths/~1v0.1~1servers~1{serverName}~1versions/get/responses/404/content/application~1json/schema"),
	}
}

// check validates body against s, and each server.json in it against
// server.schema.json.
func (rc *registryContract) check(t testing.TB, what string, s *jsonschema.Schema, body []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: not JSON: %v: %s", what, err, body)
	}
	if err := s.Validate(v); err != nil {
		t.Fatalf("%s: against the API's schema: %v\n%s", what, err, body)
	}
	var l struct {
		Servers []struct{ Server json.RawMessage } `json:"servers"`
		Server  json.RawMessage                    `json:"server"`
	}
	_ = json.Unmarshal(body, &l)
	servers := []json.RawMessage{l.Server}
	for _, s := range l.Servers {
		servers = append(servers, s.Server)
	}
	for _, raw := range servers {
		if len(raw) == 0 {
			continue
		}
		sv, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err := rc.serverJSON.Validate(sv); err != nil {
			t.Errorf("%s: a server.json against server.schema.json: %v\n%s", what, err, raw)
		}
	}
}

// walkedRegistryRecords walks the fixture MCP registry in process and builds one
// record per server name, as the crawler's registry walk does.
func walkedRegistryRecords(t testing.TB) []normalize.Record {
	t.Helper()
	reg, err := mcpregistry.New(mcpregistry.Config{PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]normalize.RegistryEntry{}
	var names []string
	cursor := ""
	for range 100 {
		rr := httptest.NewRecorder()
		reg.ServeHTTP(rr, httptest.NewRequest("GET", "/v0.1/servers?limit=100&cursor="+url.QueryEscape(cursor), nil))
		page, err := normalize.ReadRegistryPage(rr.Body.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Servers {
			if _, ok := byName[e.Name]; !ok {
				names = append(names, e.Name)
			}
			byName[e.Name] = append(byName[e.Name], e)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	var recs []normalize.Record
	for _, n := range names {
		if rec, _, ok := normalize.RegistryRecord(byName[n], normalize.RegistryOptions{Registry: "https://registry.example", Now: testNow}); ok {
			recs = append(recs, rec)
		}
	}
	return recs
}

// hiddenRegistryRecords are two servers of a registry only HR may see, as
// the crawler marks a registry seed's records with its groups.
func hiddenRegistryRecords(t testing.TB) []normalize.Record {
	t.Helper()
	page := `{"servers": [
	  {"server": {"name": "com.hiddencorp/payroll-mcp", "description": "Payroll runs and salary bands for HR.", "version": "1.2.0",
	   "remotes": [{"type": "streamable-http", "url": "https://mcp.hiddencorp.com/payroll"}]},
	   "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true, "updatedAt": "2026-10-01T00:00:00Z"}}},
	  {"server": {"name": "com.hiddencorp/benefits-mcp", "description": "Benefits enrolment for HR.", "version": "0.3.0"},
	   "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true, "updatedAt": "2026-10-01T00:00:00Z"}}}]}`
	p, err := normalize.ReadRegistryPage([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	var recs []normalize.Record
	for _, e := range p.Servers {
		rec, _, ok := normalize.RegistryRecord([]normalize.RegistryEntry{e}, normalize.RegistryOptions{Registry: "https://hr-registry.example", Now: testNow})
		if !ok {
			t.Fatalf("%s not read", e.Name)
		}
		rec.Visibility = []string{"hr"}
		recs = append(recs, rec)
	}
	return recs
}

// newRegistryFixture serves the fixture registry's servers, the catalog
// fixture's records and two hidden servers, with API keys: "hr-secret" sees
// the HR group.
func newRegistryFixture(t *testing.T, mode AuthMode) *fixture {
	t.Helper()
	return newRegistryFixtureOf(t, mode, walkedRegistryRecords(t))
}

// newRegistryFixtureOf is newRegistryFixture over the registry records
// given.
func newRegistryFixtureOf(t *testing.T, mode AuthMode, registry []normalize.Record) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.json")
	writeKeys(t, path, map[string][]string{"hr-secret": {"hr"}})
	keys, err := authn.LoadKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := append(slices.Clone(registry), fixtureRecords(t)...)
	recs = append(recs, hiddenRegistryRecords(t)...)
	cfg := Config{PublicURL: "https://finder.test.example", PageTokenKey: []byte("k"), Now: func() time.Time { return testNow },
		Auth: mode, Verifiers: []Verifier{keys}}
	f := serveRecords(t, "registryapi", recs, nil, nil, cfg, nil)
	// Every searchable field ingest sets, identifier among them (a
	// search's name matches are looked up on it).
	task, err := f.meili.Client.Index(f.index).UpdateSettings(&meilisearch.Settings{SearchableAttributes: normalize.SearchableFields()})
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(f.meili.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	return f
}

// getAPI sends GET path (with the bearer token when set) and returns the
// status and body.
func (f *fixture) getAPI(path, tok string) (int, []byte) {
	f.t.Helper()
	req, err := http.NewRequest("GET", f.http.URL+path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

type registryList struct {
	Servers []struct {
		Server json.RawMessage            `json:"server"`
		Meta   map[string]json.RawMessage `json:"_meta"`
	} `json:"servers"`
	Metadata struct {
		NextCursor string `json:"nextCursor"`
		Count      int    `json:"count"`
	} `json:"metadata"`
}

func serverName(raw json.RawMessage) string {
	var s struct{ Name string }
	_ = json.Unmarshal(raw, &s)
	return s.Name
}

// walkRegistry walks GET prefix/servers with limit and query, checking
// each page against the contract, and returns the names in order. between
// runs after each page.
func walkRegistry(t *testing.T, f *fixture, rc *registryContract, prefix, query string, limit int, tok string, between func(page int)) []string {
	t.Helper()
	var names []string
	cursor := ""
	for page := 0; ; page++ {
		if page > 5000 {
			t.Fatal("the walk does not end")
		}
		path := fmt.Sprintf("%s/servers?limit=%d%s", prefix, limit, query)
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		code, body := f.getAPI(path, tok)
		if code != 200 {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		rc.check(t, path, rc.list, body)
		var l registryList
		if err := json.Unmarshal(body, &l); err != nil {
			t.Fatal(err)
		}
		if l.Metadata.Count != len(l.Servers) || len(l.Servers) > limit {
			t.Fatalf("GET %s: count %d, %d servers, limit %d", path, l.Metadata.Count, len(l.Servers), limit)
		}
		for _, s := range l.Servers {
			names = append(names, serverName(s.Server))
		}
		if between != nil {
			between(page)
		}
		if cursor = l.Metadata.NextCursor; cursor == "" {
			return names
		}
	}
}

// TestRegistryAPIContract: every answer of the MCP Registry door (lists,
// pages, search, versions, latest, exact versions, 404s, 400s and 501s)
// validates against the published openapi.yaml and server.schema.json;
// the schema's valid examples come back unchanged; the old prefix answers
// the same.
func TestRegistryAPIContract(t *testing.T) {
	meilitest.Connect(t)
	f := newRegistryFixture(t, AuthOptional)
	rc := loadRegistryContract(t)

	all := walkRegistry(t, f, rc, "/v0.1", "", 100, "", nil)
	if len(all) < 470 {
		t.Fatalf("listed %d servers", len(all))
	}
	seen := map[string]bool{}
	for _, n := range all {
		if seen[n] {
			t.Errorf("%s listed twice", n)
		}
		seen[n] = true
	}
	if seen["com.hiddencorp/payroll-mcp"] {
		t.Error("a hidden server is listed to an anonymous caller")
	}
	// A catalog's MCP entries are listed under names built from their
	// publisher, and found by them.
	for _, r := range fixtureRecords(t) {
		if r.Type != normalize.TypeMCP {
			continue
		}
		var built string
		for _, n := range all {
			if strings.HasPrefix(n, registryNamespace(r.Publisher)+"/") {
				built = n
			}
		}
		if built == "" {
			t.Errorf("catalog entry %s (publisher %s) not listed", r.Identifier, r.Publisher)
			continue
		}
		if code, body := f.getAPI("/v0.1/servers/"+url.PathEscape(built)+"/versions/latest", ""); code != 200 {
			t.Errorf("%s (built for %s): %d %s", built, r.Identifier, code, body)
		}
	}
	if old := walkRegistry(t, f, rc, "/v0", "", 100, "", nil); !slices.Equal(old, all) {
		t.Errorf("/v0 lists %d servers, /v0.1 %d", len(old), len(all))
	}

	// The schema's valid examples round-trip unchanged.
	examples, err := mcpregistry.Examples()
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range examples[:3] {
		name, _ := ex["name"].(string)
		for _, v := range []string{"latest", ex["version"].(string)} {
			path := "/v0.1/servers/" + url.PathEscape(name) + "/versions/" + url.PathEscape(v)
			code, body := f.getAPI(path, "")
			if code != 200 {
				t.Fatalf("GET %s: %d %s", path, code, body)
			}
			rc.check(t, path, rc.server, body)
			var got struct {
				Server any                        `json:"server"`
				Meta   map[string]json.RawMessage `json:"_meta"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			want := jsonRoundTrip(t, ex)
			if !jsonEqual(got.Server, want) {
				t.Errorf("%s: server.json changed:\n got %v\nwant %v", path, got.Server, want)
			}
			if _, ok := got.Meta[registryapi.MetaKey]; !ok || got.Meta[normalize.OfficialMeta] != nil {
				t.Errorf("%s: _meta %s", path, keysOf(got.Meta))
			}
		}
		// The name unencoded (its slash as is) finds the same server.
		if code, _ := f.getAPI("/v0.1/servers/"+name+"/versions/latest", ""); code != 200 {
			t.Errorf("%s with its slash unencoded: %d", name, code)
		}
		code, body := f.getAPI("/v0.1/servers/"+url.PathEscape(name)+"/versions", "")
		if code != 200 {
			t.Fatalf("versions of %s: %d %s", name, code, body)
		}
		rc.check(t, "versions", rc.list, body)
	}

	// Errors in the API's own shape.
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/v0.1/servers/" + url.PathEscape("com.example/no-such-server") + "/versions/latest", 404},
		{"GET", "/v0.1/servers/" + url.PathEscape("io.github.user/weather") + "/versions/9.9.9", 404},
		{"GET", "/v0.1/servers/" + url.PathEscape("com.example/no-such-server") + "/versions", 404},
		{"GET", "/v0.1/servers?limit=0", 400},
		{"GET", "/v0.1/servers?limit=101", 400},
		{"GET", "/v0.1/servers?updated_since=yesterday", 400},
		{"GET", "/v0.1/servers?cursor=garbage", 400},
		{"POST", "/v0.1/publish", 501},
		{"DELETE", "/v0.1/servers/" + url.PathEscape("io.github.user/weather") + "/versions/1.0.2", 501},
		{"POST", "/v0/publish", 501},
	} {
		req, _ := http.NewRequest(c.method, f.http.URL+c.path, strings.NewReader(`{"name": "com.example/x"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := f.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, resp.StatusCode, c.want, body)
			continue
		}
		rc.check(t, c.method+" "+c.path, rc.errorBody, body)
		var e struct{ Error string }
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			t.Errorf("%s %s: error body %s", c.method, c.path, body)
		}
	}

	// search: name matches first, then the ranked rest; version filters.
	names := walkRegistry(t, f, rc, "/v0.1", "&search=weather", 100, "", nil)
	if len(names) == 0 || !strings.Contains(names[0], "weather") {
		t.Fatalf("search=weather: %v", names)
	}
	matched := 0
	for _, n := range names {
		if !strings.Contains(strings.ToLower(n), "weather") {
			break
		}
		matched++
	}
	for _, n := range names[matched:] {
		if strings.Contains(strings.ToLower(n), "weather") {
			t.Errorf("search=weather: name match %s listed after a ranked result (%v)", n, names)
		}
	}
	if got := walkRegistry(t, f, rc, "/v0.1", "&version=1.0.2", 100, "", nil); !slices.Contains(got, "io.github.user/weather") || slices.Contains(got, "io.github.user/local-weather") {
		t.Errorf("version=1.0.2: %v", got)
	}
	since := walkRegistry(t, f, rc, "/v0.1", "&updated_since=2999-01-01T00:00:00Z", 100, "", nil)
	if len(since) != 0 {
		t.Errorf("updated_since in the future: %v", since)
	}
}

// TestRegistryAPIWalkUnderWrites walks the list with limit 1, 7 and 100
// while servers are written and deleted between pages: every server that
// stays for the whole walk is listed exactly once, nothing twice.
func TestRegistryAPIWalkUnderWrites(t *testing.T) {
	meilitest.Connect(t)
	f := newRegistryFixtureOf(t, AuthOptional, walkedRegistryRecords(t)[:60])
	rc := loadRegistryContract(t)
	idx := f.meili.Client.Index(f.index)
	before := walkRegistry(t, f, rc, "/v0.1", "", 100, "", nil)
	for _, limit := range []int{1, 7, 100} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			var touched []string
			seq := 0
			write := func(page int) {
				if limit == 1 && page%15 != 0 || limit == 7 && page%3 != 0 {
					return
				}
				seq++
				// A new server, its name sorting among the others, and one of
				// the first listed deleted.
				rec := hiddenRegistryRecords(t)[0]
				rec.Identifier = fmt.Sprintf("io.github.walk/added-%d-%03d", limit, seq)
				rec.Visibility = nil
				rec.Data = json.RawMessage(fmt.Sprintf(`{"name": %q, "description": "Added during a walk.", "version": "1.0.0"}`, rec.Identifier))
				task, err := idx.AddDocuments([]normalize.Document{normalize.NewDocument(rec, testNow)}, nil)
				if err != nil {
					t.Fatal(err)
				}
				victim := before[(seq*37)%len(before)]
				touched = append(touched, rec.Identifier, victim)
				del, err := idx.DeleteDocument(normalize.DocID(victim), nil)
				if err != nil {
					t.Fatal(err)
				}
				// One index's tasks run in order: the deletion done, both are.
				_ = task
				if err := meilitest.Wait(f.meili.Client, del.TaskUID); err != nil {
					t.Fatal(err)
				}
			}
			got := walkRegistry(t, f, rc, "/v0.1", "", limit, "", write)
			count := map[string]int{}
			for _, n := range got {
				count[n]++
				if count[n] > 1 {
					t.Errorf("limit %d: %s listed twice", limit, n)
				}
			}
			for _, n := range before {
				if !slices.Contains(touched, n) && count[n] != 1 {
					t.Errorf("limit %d: %s, present for the whole walk, listed %d times", limit, n, count[n])
				}
			}
			if seq == 0 {
				t.Fatal("no writes during the walk")
			}
			before = walkRegistry(t, f, rc, "/v0.1", "", 100, "", nil)
		})
	}
}

// TestRegistryAPIHidden: with auth required, a caller without the group sees
// none of a hidden registry's servers in lists, search, versions or counts,
// and a hidden name answers as a name that does not exist; the group's key
// sees them.
func TestRegistryAPIHidden(t *testing.T) {
	meilitest.Connect(t)
	f := newRegistryFixture(t, AuthOptional)
	rc := loadRegistryContract(t)
	hidden := []string{"com.hiddencorp/payroll-mcp", "com.hiddencorp/benefits-mcp"}
	anon := walkRegistry(t, f, rc, "/v0.1", "", 100, "", nil)
	hr := walkRegistry(t, f, rc, "/v0.1", "", 100, "hr-secret", nil)
	if len(hr) != len(anon)+2 {
		t.Errorf("HR lists %d, anonymous %d", len(hr), len(anon))
	}
	for _, h := range hidden {
		if slices.Contains(anon, h) || !slices.Contains(hr, h) {
			t.Errorf("%s: anonymous %v, HR %v", h, slices.Contains(anon, h), slices.Contains(hr, h))
		}
	}
	for _, q := range []string{"&search=payroll", "&search=hiddencorp", "&search=salary+bands", "&version=1.2.0"} {
		for _, n := range walkRegistry(t, f, rc, "/v0.1", q, 100, "", nil) {
			if strings.Contains(n, "hiddencorp") {
				t.Errorf("%s shows %s to an anonymous caller", q, n)
			}
		}
	}
	if got := walkRegistry(t, f, rc, "/v0.1", "&search=payroll", 100, "hr-secret", nil); !slices.Contains(got, hidden[0]) {
		t.Errorf("HR's search=payroll: %v", got)
	}
	for _, p := range []string{"/versions/latest", "/versions", "/versions/1.2.0"} {
		codeHidden, bodyHidden := f.getAPI("/v0.1/servers/"+url.PathEscape(hidden[0])+p, "")
		codeNone, bodyNone := f.getAPI("/v0.1/servers/"+url.PathEscape("com.hiddencorp/no-such-server")+p, "")
		if codeHidden != 404 || codeNone != 404 || !bytes.Equal(bodyHidden, bodyNone) {
			t.Errorf("%s: hidden %d %s, missing %d %s", p, codeHidden, bodyHidden, codeNone, bodyNone)
		}
		if code, _ := f.getAPI("/v0.1/servers/"+url.PathEscape(hidden[0])+p, "hr-secret"); code != 200 {
			t.Errorf("%s as HR: %d", p, code)
		}
	}
}

// TestRegistryAPIRequiredAuth: with auth required, the API wants a key; an
// IDE sends it as a bearer token.
func TestRegistryAPIRequiredAuth(t *testing.T) {
	meilitest.Connect(t)
	f := newRegistryFixture(t, AuthRequired)
	if code, _ := f.getAPI("/v0.1/servers", ""); code != 401 {
		t.Errorf("no key: %d", code)
	}
	if code, _ := f.getAPI("/v0.1/servers", "hr-secret"); code != 200 {
		t.Errorf("with a key: %d", code)
	}
}

// registryNamespace is a publisher domain reversed, as a built server
// name's namespace ("acme.test" -> "test.acme").
func registryNamespace(domain string) string {
	labels := strings.Split(domain, ".")
	slices.Reverse(labels)
	return strings.Join(labels, ".")
}

func jsonRoundTrip(t testing.TB, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func keysOf(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestRegistryAPIIngestedByAnotherFinder: a second Agent Finder walks this
// one's MCP Registry API as a registry seed and finds the same servers,
// each under the name it is listed by, with the same server.json.
func TestRegistryAPIIngestedByAnotherFinder(t *testing.T) {
	meilitest.Connect(t)
	a := newRegistryFixtureOf(t, AuthOptional, walkedRegistryRecords(t)[:80])
	rc := loadRegistryContract(t)
	listed := walkRegistry(t, a, rc, "/v0.1", "", 100, "", nil)

	sink := &crawlertest.Collector{}
	b, err := crawler.New(crawler.Config{AllowPrivate: true, Timeout: 10 * time.Second, MaxAttempts: 2, RegistryPageSize: 25,
		UserAgent: "AgentFinderBot/test"}, sink, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if _, err := b.Crawl(t.Context(), []string{"registry " + a.http.URL}); err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, res := range sink.Results() {
		for _, rec := range res.Records {
			found = append(found, rec.Identifier)
			if rec.Trust == nil || rec.Trust.Level != normalize.TrustRegistry {
				t.Errorf("%s: trust %+v", rec.Identifier, rec.Trust)
			}
		}
	}
	slices.Sort(found)
	want := slices.Clone(listed)
	slices.Sort(want)
	if !slices.Equal(found, want) {
		t.Errorf("B found %d servers, A lists %d\nfound %v\nwant  %v", len(found), len(want), found, want)
	}
}
