package searchapi

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/api"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
	"github.com/agentfinder/agentfinder/searchapi/searchtest"
)

// The trust fixture (searchtest.TrustOf, searchtest.HealthOf): the acme,
// weather and filler catalogs, some records with trust and health as the
// crawler and prober set them, the others without.
var (
	trustOf  = searchtest.TrustOf
	healthOf = searchtest.HealthOf
)

// newTrustFixture serves the trust fixture; withTrust false serves the
// same records without any trust or health (the score test's baseline).
func newTrustFixture(t testing.TB, withTrust bool, mut func(*Config)) *fixture {
	t.Helper()
	cfg := Config{PublicURL: "https://finder.test.example", RegistryName: "Test Finder", MinScore: new(int),
		PageTokenKey: []byte("test-key"), Now: func() time.Time { return testNow }}
	return serveRecords(t, "trust", fixtureRecords(t), nil, searchtest.MarkTrust(withTrust), cfg, mut)
}

// trustResult is a result or record as the trust tests read it.
type trustResult struct {
	Identifier        string `json:"identifier"`
	Score             int    `json:"score"`
	PublisherVerified bool   `json:"publisherVerified"`
	Trust             *struct {
		Level    string              `json:"level"`
		Signer   string              `json:"signer"`
		Problems []normalize.Problem `json:"problems"`
	} `json:"trust"`
	Health *struct {
		Status    string `json:"status"`
		LatencyMs int64  `json:"latencyMs"`
	} `json:"health"`
	Evidence *struct {
		Trust  *struct{ Level string }  `json:"trust"`
		Health *struct{ Status string } `json:"health"`
	} `json:"evidence"`
}

// wantLevel and wantStatus are what the fixture's record id counts as.
func wantLevel(f *fixture, id string) string {
	if t := trustOf[id]; t != nil {
		return t.Level
	}
	if f.byName[id].PublisherVerified {
		return normalize.TrustDomain
	}
	return normalize.TrustNone
}

func wantStatus(id string) string {
	if h := healthOf[id]; h != nil {
		return h.Status
	}
	return normalize.HealthUnknown
}

// liveIDs are the fixture's records a search or listing shows by default
// (not stale, not expired), sorted.
func liveIDs(f *fixture, keep func(id string) bool) []string {
	var out []string
	for id, d := range f.byName {
		if d.Stale || strings.HasSuffix(id, ":expired-storm") {
			continue
		}
		if keep(id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

type trustSearchOut struct {
	Results   []trustResult     `json:"results"`
	PageToken string            `json:"pageToken"`
	Error     *door.ErrorDetail `json:"error"`
}

func (f *fixture) trustSearch(t *testing.T, body map[string]any) (int, trustSearchOut) {
	t.Helper()
	f.t = t
	var out trustSearchOut
	resp := f.do(http.MethodPost, "/search", body, nil, &out)
	return resp.StatusCode, out
}

func resultIDs(rs []trustResult) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Identifier
	}
	slices.Sort(out)
	return out
}

// TestTrustHealthListFilters: GET /agents filters on trust.level and
// health (and their other spellings) and takes signedOnly and liveOnly;
// records without trust or health count as the rule says; every item
// shows both.
func TestTrustHealthListFilters(t *testing.T) {
	f := newTrustFixture(t, true, nil)
	list := func(t *testing.T, q url.Values) (int, []trustResult, *door.ErrorDetail) {
		f.t = t
		q.Set("pageSize", "100")
		var out struct {
			Items []trustResult     `json:"items"`
			Total int               `json:"total"`
			Error *door.ErrorDetail `json:"error"`
		}
		resp := f.do("GET", "/agents?"+q.Encode(), nil, nil, &out)
		if resp.StatusCode == 200 && out.Total != len(out.Items) {
			t.Fatalf("total %d, %d items", out.Total, len(out.Items))
		}
		return resp.StatusCode, out.Items, out.Error
	}
	level := func(l string) func(string) bool { return func(id string) bool { return wantLevel(f, id) == l } }
	status := func(s string) func(string) bool { return func(id string) bool { return wantStatus(id) == s } }
	tests := []struct {
		name string
		q    url.Values
		keep func(string) bool
	}{
		{"signed", url.Values{"filter": {"trust.level = signed"}}, level(normalize.TrustSigned)},
		{"domain counts verified records without trust", url.Values{"filter": {"trust:domain"}}, level(normalize.TrustDomain)},
		{"none counts unverified records without trust", url.Values{"filter": {"trust.level = NONE"}}, level(normalize.TrustNone)},
		{"not none", url.Values{"filter": {"NOT trust.level = none"}}, func(id string) bool { return wantLevel(f, id) != normalize.TrustNone }},
		{"in", url.Values{"filter": {"trust.level IN (signed, none)"}}, func(id string) bool { return wantLevel(f, id) != normalize.TrustDomain }},
		{"up", url.Values{"filter": {"health = up"}}, status(normalize.HealthUp)},
		{"unknown counts records never probed", url.Values{"filter": {"health.status:unknown"}}, status(normalize.HealthUnknown)},
		{"health not unknown", url.Values{"filter": {"health != unknown"}}, func(id string) bool { return wantStatus(id) != normalize.HealthUnknown }},
		{"signedOnly", url.Values{"signedOnly": {"true"}}, level(normalize.TrustSigned)},
		{"liveOnly", url.Values{"liveOnly": {"true"}}, status(normalize.HealthUp)},
		{"liveOnly and trust none", url.Values{"liveOnly": {"1"}, "filter": {"trust.level = none"}}, func(id string) bool {
			return wantStatus(id) == normalize.HealthUp && wantLevel(f, id) == normalize.TrustNone
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, items, e := list(t, tc.q)
			if code != 200 {
				t.Fatalf("status %d: %+v", code, e)
			}
			want := liveIDs(f, tc.keep)
			if got := resultIDs(items); len(want) == 0 || !slices.Equal(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
			for _, it := range items {
				if it.Trust == nil || it.Trust.Level != wantLevel(f, it.Identifier) || it.Health == nil || it.Health.Status != wantStatus(it.Identifier) {
					t.Fatalf("%s shows trust %+v health %+v", it.Identifier, it.Trust, it.Health)
				}
			}
		})
	}
	for _, bad := range []url.Values{{"filter": {"trust.level = verified"}}, {"filter": {"health IN (up, alive)"}}, {"liveOnly": {"maybe"}}} {
		if code, _, e := list(t, bad); code != 400 || e == nil || e.Code != door.CodeInvalidRequest {
			t.Errorf("%v: %d %+v, want 400 invalid_request", bad, code, e)
		}
	}
}

// TestTrustHealthSearch: POST /search's signedOnly and liveOnly options
// and trust/health filters keep exactly the results of the unfiltered
// search that have that level or status; results and evidence show both;
// a bad value is a 400.
func TestTrustHealthSearch(t *testing.T) {
	f := newTrustFixture(t, true, nil)
	const text = "healthcare weather forecast flights claims records appointment"
	code, all := f.trustSearch(t, map[string]any{"query": map[string]any{"text": text, "includeEvidence": true}, "pageSize": 100})
	if code != 200 || len(all.Results) < 6 {
		t.Fatalf("unfiltered: %d, %d results", code, len(all.Results))
	}
	for _, r := range all.Results {
		if r.Trust == nil || r.Trust.Level != wantLevel(f, r.Identifier) || r.Health == nil || r.Health.Status != wantStatus(r.Identifier) {
			t.Fatalf("%s shows trust %+v health %+v", r.Identifier, r.Trust, r.Health)
		}
		if r.Evidence == nil || r.Evidence.Trust == nil || r.Evidence.Trust.Level != r.Trust.Level || r.Evidence.Health == nil || r.Evidence.Health.Status != r.Health.Status {
			t.Fatalf("%s evidence %+v", r.Identifier, r.Evidence)
		}
		if r.Identifier == "urn:ai:acme.com:agent:claims" && (r.Trust.Signer != "did:web:acme.com" || r.Health.LatencyMs != 42) {
			t.Fatalf("claims: trust %+v health %+v", r.Trust, r.Health)
		}
		if r.Identifier == "urn:ai:acme.com:mcp:records" && (len(r.Trust.Problems) != 1 || r.Trust.Problems[0].Code != normalize.CodeBadSignature) {
			t.Fatalf("records: trust %+v", r.Trust)
		}
	}
	subset := func(keep func(trustResult) bool) []string {
		var out []string
		for _, r := range all.Results {
			if keep(r) {
				out = append(out, r.Identifier)
			}
		}
		slices.Sort(out)
		return out
	}
	tests := []struct {
		name  string
		query map[string]any
		keep  func(trustResult) bool
	}{
		{"signedOnly", map[string]any{"signedOnly": true}, func(r trustResult) bool { return r.Trust.Level == normalize.TrustSigned }},
		{"liveOnly in the filter object", map[string]any{"filter": map[string]any{"liveOnly": true}}, func(r trustResult) bool { return r.Health.Status == normalize.HealthUp }},
		{"signedOnly false", map[string]any{"signedOnly": false}, func(trustResult) bool { return true }},
		{"trust filter", map[string]any{"filter": map[string]any{"trust": []string{"domain", "signed"}}}, func(r trustResult) bool { return r.Trust.Level != normalize.TrustNone }},
		{"health filter", map[string]any{"filter": map[string]any{"health": "unknown"}}, func(r trustResult) bool { return r.Health.Status == normalize.HealthUnknown }},
		{"both options", map[string]any{"signedOnly": true, "liveOnly": true}, func(r trustResult) bool {
			return r.Trust.Level == normalize.TrustSigned && r.Health.Status == normalize.HealthUp
		}},
		{"option and a filter that contradicts it", map[string]any{"liveOnly": true, "filter": map[string]any{"health.status": "down"}}, func(trustResult) bool { return false }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := map[string]any{"text": text}
			for k, v := range tc.query {
				q[k] = v
			}
			code, out := f.trustSearch(t, map[string]any{"query": q, "pageSize": 100})
			if code != 200 {
				t.Fatalf("status %d: %+v", code, out.Error)
			}
			if got, want := resultIDs(out.Results), subset(tc.keep); !slices.Equal(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
		})
	}
	if got := subset(func(r trustResult) bool { return r.Trust.Level == normalize.TrustSigned }); !slices.Equal(got, []string{"urn:ai:acme.com:agent:claims"}) {
		t.Fatalf("signed results of the unfiltered search: %v", got)
	}
	for _, bad := range []map[string]any{
		{"text": text, "filter": map[string]any{"trust.level": "trusted"}},
		{"text": text, "signedOnly": "yes"},
		{"text": text, "filter": map[string]any{"liveOnly": 1}},
	} {
		if code, out := f.trustSearch(t, map[string]any{"query": bad}); code != 400 || out.Error == nil || out.Error.Code != door.CodeInvalidRequest {
			t.Errorf("%v: %d %+v, want 400 invalid_request", bad, code, out.Error)
		}
	}
}

// TestTrustHealthPages: a filtered search pages through every match once,
// and a page token continues only the search it came from.
func TestTrustHealthPages(t *testing.T) {
	f := newTrustFixture(t, true, nil)
	q := map[string]any{"text": "general assistant", "filter": map[string]any{"trust.level": "domain", "health": "unknown"}}
	var got []string
	tok := ""
	for page := 0; ; page++ {
		body := map[string]any{"query": q, "pageSize": 10}
		if tok != "" {
			body["pageToken"] = tok
		}
		code, out := f.trustSearch(t, body)
		if code != 200 {
			t.Fatalf("page %d: %d %+v", page, code, out.Error)
		}
		for _, r := range out.Results {
			if r.Trust.Level != normalize.TrustDomain || r.Health.Status != normalize.HealthUnknown {
				t.Fatalf("page %d: %s is %s/%s", page, r.Identifier, r.Trust.Level, r.Health.Status)
			}
			got = append(got, r.Identifier)
		}
		if tok = out.PageToken; tok == "" {
			break
		}
		if page > 10 {
			t.Fatal("no end")
		}
		if page == 0 {
			other := map[string]any{"text": "general assistant", "liveOnly": true}
			if code, out := f.trustSearch(t, map[string]any{"query": other, "pageSize": 10, "pageToken": tok}); code != 400 {
				t.Fatalf("a token used for another filter: %d %+v", code, out.Error)
			}
		}
	}
	sorted := slices.Clone(got)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(got) || len(got) < fillerCount {
		t.Fatalf("paged %d results (%d distinct), want the %d fillers at least once each", len(got), len(slices.Compact(sorted)), fillerCount)
	}
}

// TestTrustHealthExplore: /explore counts trust levels and health statuses
// over every match, records without them under the value they count as.
func TestTrustHealthExplore(t *testing.T) {
	f := newTrustFixture(t, true, nil)
	count := func(key func(string) string) map[string]int {
		m := map[string]int{}
		for _, id := range liveIDs(f, func(string) bool { return true }) {
			m[key(id)]++
		}
		return m
	}
	wantTrust := count(func(id string) string { return wantLevel(f, id) })
	wantHealth := count(wantStatus)
	var out search.ExploreAnswer
	resp := f.do("POST", "/explore", map[string]any{"facets": []string{"trust", "health", "type"}}, nil, &out)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if !mapsEqual(out.Facets["trust"], wantTrust) || !mapsEqual(out.Facets["health"], wantHealth) {
		t.Fatalf("trust %v (want %v), health %v (want %v)", out.Facets["trust"], wantTrust, out.Facets["health"], wantHealth)
	}
	// Filtered: among the unverified publisher's records.
	out = search.ExploreAnswer{}
	f.do("POST", "/explore", map[string]any{"query": map[string]any{"publisher": "weather.example", "liveOnly": true}, "facets": []string{"trust"}}, nil, &out)
	if out.Total != 1 || !mapsEqual(out.Facets["trust"], map[string]int{"none": 1}) {
		t.Fatalf("weather.example, liveOnly: total %d trust %v", out.Total, out.Facets["trust"])
	}
	// ARD's shape counts the same.
	var ard api.ARDExploreResponse
	f.do("POST", "/explore", map[string]any{"resultType": map[string]any{"facets": []map[string]any{{"field": "health"}}}}, nil, &ard)
	n := 0
	for _, b := range ard.Facets["health"].Buckets {
		n += b.Count
		if b.Count != wantHealth[b.Value] {
			t.Errorf("ARD health bucket %s = %d, want %d", b.Value, b.Count, wantHealth[b.Value])
		}
	}
	if n != len(liveIDs(f, func(string) bool { return true })) {
		t.Fatalf("ARD health buckets count %d records", n)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestScoreIgnoresTrustHealth: the same records with and without trust and
// health get the same results and scores for the same queries (§7.1: the
// score is not a trust rating).
func TestScoreIgnoresTrustHealth(t *testing.T) {
	with := newTrustFixture(t, true, nil)
	without := newTrustFixture(t, false, nil)
	compared := 0
	for _, text := range []string{"claims triage", "weather forecast", "medical records", "book a flight", "general assistant"} {
		body := map[string]any{"query": map[string]any{"text": text}, "pageSize": 20}
		c1, a := with.trustSearch(t, body)
		c2, b := without.trustSearch(t, body)
		if c1 != 200 || c2 != 200 || len(a.Results) == 0 || len(a.Results) != len(b.Results) {
			t.Fatalf("%q: %d/%d, %d vs %d results", text, c1, c2, len(a.Results), len(b.Results))
		}
		for i := range a.Results {
			if a.Results[i].Identifier != b.Results[i].Identifier || a.Results[i].Score != b.Results[i].Score {
				t.Fatalf("%q #%d: %s %d with trust and health, %s %d without", text, i, a.Results[i].Identifier, a.Results[i].Score, b.Results[i].Identifier, b.Results[i].Score)
			}
			compared++
		}
	}
	if compared < 10 {
		t.Fatalf("compared %d results", compared)
	}
}

// TestTrustHealthFederated: an upstream's results pass signedOnly, liveOnly
// and verifiedOnly by the trust, health and publisherVerified it reports;
// a configured upstream's are relayed as it sent them.
func TestTrustHealthFederated(t *testing.T) {
	up := newTrustFixture(t, true, func(c *Config) { c.PublicURL = "https://upstream.test.example" })
	fed, err := federation.New(federation.Config{
		Name: "https://finder.test.example", Upstreams: []string{up.http.URL + "/search"},
		Budget: 5 * time.Second, TokenKey: []byte("fed-key"), AllowPrivate: true,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fed.Close)
	// The front registry holds other records: every acme and weather result
	// is the upstream's.
	body, err := os.ReadFile(filepath.Join("testdata", "bindings.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{PublicURL: "https://finder.test.example", RegistryName: "Front", MinScore: new(int), PageTokenKey: []byte("test-key"),
		Now: func() time.Time { return testNow }, Federation: fed}
	front := serveRecords(t, "trustfront", catalogRecords(t, body, "https://lingo.example/.well-known/ai-catalog.json"), nil, nil, cfg, nil)
	for _, tc := range []struct {
		name string
		opt  string
		want string
	}{{"signedOnly", "signedOnly", "urn:ai:acme.com:agent:claims"}, {"liveOnly", "liveOnly", "urn:ai:weather.example:mcp:forecast"},
		{"verifiedOnly", "verifiedOnly", "urn:ai:acme.com:agent:claims"}} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := front.trustSearch(t, map[string]any{"query": map[string]any{"text": "claims weather forecast", tc.opt: true, "federation": "auto"}, "pageSize": 50})
			if code != 200 {
				t.Fatalf("status %d: %+v", code, out.Error)
			}
			found := false
			for _, r := range out.Results {
				switch {
				case tc.opt == "signedOnly" && r.Trust.Level != normalize.TrustSigned,
					tc.opt == "liveOnly" && r.Health.Status != normalize.HealthUp,
					tc.opt == "verifiedOnly" && !r.PublisherVerified:
					t.Fatalf("%s passed %s with trust %+v health %+v", r.Identifier, tc.opt, r.Trust, r.Health)
				}
				found = found || r.Identifier == tc.want
			}
			if !found {
				t.Fatalf("the upstream's %s is missing: %v", tc.want, resultIDs(out.Results))
			}
		})
	}
	code, out := front.trustSearch(t, map[string]any{"query": map[string]any{"text": "claims triage", "federation": "auto"}, "pageSize": 50})
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	for _, r := range out.Results {
		if r.Identifier == "urn:ai:acme.com:agent:claims" {
			if r.Trust.Signer != "did:web:acme.com" || r.Health.LatencyMs != 42 {
				t.Fatalf("relayed trust %+v health %+v", r.Trust, r.Health)
			}
			return
		}
	}
	t.Fatalf("no upstream claims result: %v", resultIDs(out.Results))
}
