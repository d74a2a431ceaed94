package searchapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/fixtures/logbuf"
	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

func TestSearchPagination(t *testing.T) {
	f := newFixture(t, nil)
	body := func(size int, tok string) map[string]any {
		b := map[string]any{"query": map[string]any{"text": "assistant", "federation": "none"}, "pageSize": size}
		if tok != "" {
			b["pageToken"] = tok
		}
		return b
	}
	_, all := f.search(body(100, ""))
	if len(all.Results) < fillerCount || all.PageToken != "" {
		t.Fatalf("one big page: %d results, token %q", len(all.Results), all.PageToken)
	}
	var paged []string
	tok := ""
	for page := 0; ; page++ {
		if page > 20 {
			t.Fatal("pagination does not end")
		}
		status, out := f.search(body(7, tok))
		if status != http.StatusOK {
			t.Fatalf("page %d: %d %+v", page, status, out.Error)
		}
		if len(out.Results) > 7 {
			t.Fatalf("page %d has %d results", page, len(out.Results))
		}
		paged = append(paged, ids(out.Results)...)
		if out.PageToken == "" {
			break
		}
		tok = out.PageToken
	}
	if !slices.Equal(paged, ids(all.Results)) {
		t.Fatalf("pages concatenated differ from one page:\npaged %v\nall   %v", paged, ids(all.Results))
	}
	seen := map[string]bool{}
	for _, id := range paged {
		if seen[id] {
			t.Fatalf("%s repeated", id)
		}
		seen[id] = true
	}
	// A token is bound to its query: same text with another filter is refused,
	// and so is an edited token. Page size may change between pages.
	_, first := f.search(body(5, ""))
	other := map[string]any{"query": map[string]any{"text": "assistant", "federation": "none", "tags": "filler"}, "pageToken": first.PageToken}
	if status, out := f.search(other); status != http.StatusBadRequest || out.Error.Code != door.CodeInvalidRequest {
		t.Fatalf("token for another query: %d %+v", status, out.Error)
	}
	tampered := first.PageToken[:len(first.PageToken)-2] + "AA"
	if status, out := f.search(body(5, tampered)); status != http.StatusBadRequest || out.Error.Code != door.CodeInvalidRequest {
		t.Fatalf("tampered token: %d %+v", status, out.Error)
	}
	if status, out := f.search(body(9, first.PageToken)); status != http.StatusOK || out.Results[0].Identifier != all.Results[5].Identifier {
		t.Fatalf("changing pageSize mid-way: %d %v", status, out.Error)
	}
	// Case and spacing of the text do not change the query.
	same := map[string]any{"query": map[string]any{"text": "  ASSISTANT ", "federation": "none"}, "pageSize": 5, "pageToken": first.PageToken}
	if status, out := f.search(same); status != http.StatusOK {
		t.Fatalf("normalized text: %d %+v", status, out.Error)
	}
}

func TestSearchErrors(t *testing.T) {
	f := newFixture(t, nil)
	long := strings.Repeat("a", 1001)
	tests := []struct {
		name   string
		method string
		path   string
		body   any
		status int
		code   string
	}{
		{"empty body", "POST", "/search", "", 400, door.CodeInvalidRequest},
		{"not json", "POST", "/search", "{nope", 400, door.CodeInvalidRequest},
		{"array body", "POST", "/search", "[]", 400, door.CodeInvalidRequest},
		{"too large", "POST", "/search", `{"query":{"text":"x","pad":"` + strings.Repeat("x", 70<<10) + `"}}`, 400, door.CodeInvalidRequest},
		{"no query", "POST", "/search", `{"pageSize":5}`, 400, door.CodeInvalidRequest},
		{"no text", "POST", "/search", `{"query":{"type":"application/a2a-agent-card+json"}}`, 400, door.CodeInvalidRequest},
		{"empty text", "POST", "/search", `{"query":{"text":""}}`, 400, door.CodeInvalidRequest},
		{"blank text", "POST", "/search", `{"query":{"text":"   "}}`, 400, door.CodeInvalidRequest},
		{"text too long", "POST", "/search", `{"query":{"text":"` + long + `"}}`, 400, door.CodeInvalidRequest},
		{"text wrong type", "POST", "/search", `{"query":{"text":5}}`, 400, door.CodeInvalidRequest},
		{"pageSize 0", "POST", "/search", `{"query":{"text":"x"},"pageSize":0}`, 400, door.CodeInvalidRequest},
		{"pageSize 101", "POST", "/search", `{"query":{"text":"x"},"pageSize":101}`, 400, door.CodeInvalidRequest},
		{"pageSize fraction", "POST", "/search", `{"query":{"text":"x"},"pageSize":1.5}`, 400, door.CodeInvalidRequest},
		{"pageSize string", "POST", "/search", `{"query":{"text":"x"},"pageSize":"10"}`, 400, door.CodeInvalidRequest},
		{"federation unknown", "POST", "/search", `{"query":{"text":"x","federation":"everything"}}`, 400, door.CodeInvalidRequest},
		{"federation root unknown", "POST", "/search", `{"query":{"text":"x"},"federation":"all"}`, 400, door.CodeInvalidRequest},
		{"federation conflict", "POST", "/search", `{"query":{"text":"x","federation":"none"},"federation":"auto"}`, 400, door.CodeInvalidRequest},
		{"type wrong type", "POST", "/search", `{"query":{"text":"x","type":5}}`, 400, door.CodeInvalidRequest},
		{"filter unknown key", "POST", "/search", `{"query":{"text":"x","filter":{"region":["eu"]}}}`, 400, door.CodeUnsupportedFilter},
		{"filter bad value", "POST", "/search", `{"query":{"text":"x","filter":{"tags":{"a":1}}}}`, 400, door.CodeInvalidRequest},
		{"constraint", "POST", "/search", `{"query":{"text":"x","constraints":{"region":"apac"}}}`, 400, door.CodeUnsupportedFilter},
		{"xu constraint at root", "POST", "/search", `{"query":"x","constraints":{"max_results_age_seconds":300}}`, 400, door.CodeUnsupportedFilter},
		{"xu limit too big", "POST", "/search", `{"query":"x","limit":500}`, 400, door.CodeInvalidRequest},
		{"bad token", "POST", "/search", `{"query":{"text":"x"},"pageToken":"abc"}`, 400, door.CodeInvalidRequest},
		{"wrong method", "GET", "/search", nil, 405, door.CodeInvalidRequest},
		{"unknown path", "GET", "/nope", nil, 404, door.CodeNotFound},
		{"agents bad syntax", "GET", "/agents?filter=" + url.QueryEscape(`tags = `), nil, 400, door.CodeInvalidRequest},
		{"agents unbalanced", "GET", "/agents?filter=" + url.QueryEscape(`(tags = a`), nil, 400, door.CodeInvalidRequest},
		{"agents unterminated", "GET", "/agents?filter=" + url.QueryEscape(`tags = "a`), nil, 400, door.CodeInvalidRequest},
		{"agents unknown field", "GET", "/agents?filter=" + url.QueryEscape(`region = eu`), nil, 400, door.CodeUnsupportedFilter},
		{"agents displayName not filterable", "GET", "/agents?filter=" + url.QueryEscape(`displayName = x`), nil, 400, door.CodeUnsupportedFilter},
		{"agents bad operator", "GET", "/agents?filter=" + url.QueryEscape(`tags < b`), nil, 400, door.CodeInvalidRequest},
		{"agents bad time", "GET", "/agents?filter=" + url.QueryEscape(`updatedAt > yesterday`), nil, 400, door.CodeInvalidRequest},
		{"agents bad bool", "GET", "/agents?filter=" + url.QueryEscape(`verified = maybe`), nil, 400, door.CodeInvalidRequest},
		{"agents bad orderBy", "GET", "/agents?orderBy=score", nil, 400, door.CodeInvalidRequest},
		{"agents bad direction", "GET", "/agents?orderBy=displayName%20UP", nil, 400, door.CodeInvalidRequest},
		{"agents pageSize", "GET", "/agents?pageSize=500", nil, 400, door.CodeInvalidRequest},
		{"agents unknown param", "GET", "/agents?limit=5", nil, 400, door.CodeInvalidRequest},
		{"agents bad token", "GET", "/agents?pageToken=v1.x.y", nil, 400, door.CodeInvalidRequest},
		{"agent not found", "GET", "/agents/" + url.PathEscape("urn:ai:nowhere.example:agent:x"), nil, 404, door.CodeNotFound},
		{"explore unknown facet", "POST", "/explore", `{"facets":["region"]}`, 400, door.CodeUnsupportedFilter},
		{"explore bad filter", "POST", "/explore", `{"query":{"filter":{"colour":"red"}}}`, 400, door.CodeUnsupportedFilter},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.t = t
			var out struct {
				Error *door.ErrorDetail `json:"error"`
			}
			resp := f.do(tc.method, tc.path, tc.body, nil, &out)
			if resp.StatusCode != tc.status || out.Error == nil || out.Error.Code != tc.code {
				t.Fatalf("got %d %+v, want %d %s", resp.StatusCode, out.Error, tc.status, tc.code)
			}
			if out.Error.CorrelationID == "" || out.Error.CorrelationID != resp.Header.Get("X-Correlation-ID") {
				t.Fatalf("correlation id %q vs header %q", out.Error.CorrelationID, resp.Header.Get("X-Correlation-ID"))
			}
			if strings.Contains(out.Error.Message, "meilisearch") || strings.Contains(out.Error.Message, "invalid_search_filter") {
				t.Fatalf("message leaks the backend: %q", out.Error.Message)
			}
		})
	}
	// A 405 names the methods the path takes.
	for _, tc := range []struct{ method, path, allow string }{
		{"GET", "/search", "POST"},
		{"DELETE", "/agents/x", "GET, HEAD"},
		{"POST", "/healthz", "GET, HEAD"},
	} {
		resp := f.do(tc.method, tc.path, nil, nil, nil)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d Allow %q, want 405 Allow %q", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), tc.allow)
		}
	}
}

// TestFilterInjection sends values that look like filter syntax through every
// way a client can give filter values: they match literally or not at all,
// and never produce a filter syntax error.
func TestFilterInjection(t *testing.T) {
	f := newFixture(t, nil)
	tricky := "urn:ai:weather.example:agent:tricky"
	literal := []string{`a"b`, `back\slash`, `x OR y`, `tags = weather`, `[bracket]`, `東京`}
	for _, v := range literal {
		t.Run("search tag "+v, func(t *testing.T) {
			f.t = t
			status, out := f.search(map[string]any{"query": map[string]any{"text": "agent", "federation": "none", "tags": []string{v}}})
			if status != http.StatusOK || !slices.Equal(ids(out.Results), []string{tricky}) {
				t.Fatalf("%d %v %+v", status, ids(out.Results), out.Error)
			}
		})
		t.Run("agents tag "+v, func(t *testing.T) {
			f.t = t
			expr := `tags = "` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
			var out struct {
				Items []searchResult `json:"items"`
			}
			resp := f.do("GET", "/agents?filter="+url.QueryEscape(expr), nil, nil, &out)
			if resp.StatusCode != http.StatusOK || !slices.Equal(ids(out.Items), []string{tricky}) {
				t.Fatalf("%s: %d %v", expr, resp.StatusCode, ids(out.Items))
			}
		})
	}
	attacks := []string{
		`weather" OR tags = "forecast`,
		`") OR (stale = true`,
		`x\" OR stale = true OR tags = \"`,
		`\`,
		`"`,
		`weather' OR '1'='1`,
		"\x00null",
		"new\nline OR stale = true",
		`]) OR id EXISTS OR tags IN ([`,
		`_geoRadius(0, 0, 10)`,
	}
	for _, a := range attacks {
		t.Run("search attack "+a, func(t *testing.T) {
			f.t = t
			for _, key := range []string{"tags", "publisher", "type", "compliance", "capabilities"} {
				status, out := f.search(map[string]any{"query": map[string]any{"text": "weather", "federation": "none", key: a}})
				if status != http.StatusOK || len(out.Results) != 0 {
					t.Fatalf("%s=%q: %d %v %+v", key, a, status, ids(out.Results), out.Error)
				}
			}
		})
		t.Run("agents attack "+a, func(t *testing.T) {
			f.t = t
			for _, expr := range []string{
				`tags = "` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(a) + `"`,
				`tags = '` + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(a) + `'`,
			} {
				var out struct {
					Items []searchResult    `json:"items"`
					Error *door.ErrorDetail `json:"error"`
				}
				resp := f.do("GET", "/agents?filter="+url.QueryEscape(expr), nil, nil, &out)
				if resp.StatusCode != http.StatusOK || len(out.Items) != 0 {
					t.Fatalf("%s: %d %v %+v", expr, resp.StatusCode, ids(out.Items), out.Error)
				}
			}
			// Unquoted, the same text is either a syntax error (400) or a
			// filter over known fields; never a 500.
			var out struct {
				Error *door.ErrorDetail `json:"error"`
			}
			resp := f.do("GET", "/agents?filter="+url.QueryEscape("tags = "+a), nil, nil, &out)
			if resp.StatusCode >= 500 {
				t.Fatalf("unquoted %q: %d %+v", a, resp.StatusCode, out.Error)
			}
		})
	}
}

func TestAgentsList(t *testing.T) {
	f := newFixture(t, nil)
	type listOut struct {
		Items     []searchResult `json:"items"`
		Total     int            `json:"total"`
		PageToken string         `json:"pageToken"`
	}
	list := func(t *testing.T, q url.Values) listOut {
		f.t = t
		var out listOut
		resp := f.do("GET", "/agents?"+q.Encode(), nil, nil, &out)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%v: status %d", q, resp.StatusCode)
		}
		return out
	}
	tests := []struct {
		filter string
		want   []string
	}{
		{`type = "application/mcp-server+json"`, []string{"urn:ai:acme.com:mcp:records", "urn:ai:weather.example:mcp:forecast"}},
		{`type:application/mcp-server-card+json`, []string{"urn:ai:acme.com:mcp:records", "urn:ai:weather.example:mcp:forecast"}},
		{`type = application/ai-registry`, []string{"urn:ai:acme.com:registry:internal"}},
		{`publisher:acme.com AND compliance:hipaa`, []string{"urn:ai:acme.com:agent:claims", "urn:ai:acme.com:agent:scheduler"}},
		{`publisher = "Acme Health" compliance = SOC2`, []string{"urn:ai:acme.com:agent:claims"}},
		{`tags:weather -tags:forecast`, []string{"urn:air:weather.example:skill:umbrella"}},
		{`tags:healthcare AND NOT (tags:records OR tags:scheduling)`, []string{"urn:ai:acme.com:agent:claims"}},
		{`(type:application/ai-registry OR type:application/ai-skill) AND verified = false`, []string{"urn:air:weather.example:skill:umbrella"}},
		{`identifier IN ("urn:ai:acme.com:agent:claims", 'urn:ai:weather.example:mcp:forecast')`, []string{"urn:ai:acme.com:agent:claims", "urn:ai:weather.example:mcp:forecast"}},
		{`updatedAt >= 2026-04-01 AND NOT tags:filler`, []string{"urn:ai:acme.com:agent:claims", "urn:ai:acme.com:agent:scheduler", "urn:ai:weather.example:mcp:forecast"}},
		{`capabilities:BookFlight OR capability = ReadRecord`, []string{"urn:ai:weather.example:agent:flights", "urn:ai:acme.com:mcp:records"}},
		{`protocol:mcp AND publisherVerified = true`, []string{"urn:ai:acme.com:mcp:records"}},
		{`tags:radar`, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.filter, func(t *testing.T) {
			out := list(t, url.Values{"filter": {tc.filter}, "pageSize": {"100"}})
			got, want := ids(out.Items), slices.Clone(tc.want)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) || out.Total != len(tc.want) {
				t.Fatalf("got %v (total %d), want %v", got, out.Total, want)
			}
		})
	}
	t.Run("includeStale", func(t *testing.T) {
		out := list(t, url.Values{"filter": {"tags:radar OR tags:storms"}, "includeStale": {"true"}})
		if out.Total != 2 {
			t.Fatalf("total %d, want the stale and the expired record", out.Total)
		}
	})
	t.Run("order and pages", func(t *testing.T) {
		q := url.Values{"filter": {"tags:filler"}, "orderBy": {"updatedAt DESC"}, "pageSize": {"10"}}
		var got []string
		for page := 0; ; page++ {
			out := list(t, q)
			if out.Total != fillerCount {
				t.Fatalf("total %d", out.Total)
			}
			got = append(got, ids(out.Items)...)
			if out.PageToken == "" {
				break
			}
			q.Set("pageToken", out.PageToken)
			if page > 10 {
				t.Fatal("no end")
			}
		}
		if len(got) != fillerCount {
			t.Fatalf("paged %d items, want %d", len(got), fillerCount)
		}
		for i, id := range got { // assistant-00 is the newest
			if want := "urn:ai:filler.example:agent:assistant-" + twoDigits(i); id != want {
				t.Fatalf("item %d = %s, want %s", i, id, want)
			}
		}
		out := list(t, url.Values{"filter": {"tags:filler"}, "orderBy": {"displayName"}, "pageSize": {"3"}})
		if ids(out.Items)[0] != "urn:ai:filler.example:agent:assistant-00" {
			t.Fatalf("by name: %v", ids(out.Items))
		}
		// A token from one listing does not continue another.
		f.t = t
		var e struct{ Error *door.ErrorDetail }
		resp := f.do("GET", "/agents?filter=tags:weather&pageToken="+url.QueryEscape(out.PageToken), nil, nil, &e)
		if resp.StatusCode != 400 {
			t.Fatalf("foreign token: %d", resp.StatusCode)
		}
	})
}

func twoDigits(i int) string { return string([]byte{byte('0' + i/10), byte('0' + i%10)}) }

func TestAgentGet(t *testing.T) {
	f := newFixture(t, nil)
	for _, id := range []string{"urn:ai:acme.com:agent:claims", "urn:air:weather.example:skill:umbrella", "urn:ai:weather.example:agent:old-radar"} {
		var rec map[string]any
		resp := f.do("GET", "/agents/"+url.PathEscape(id), nil, nil, &rec)
		if resp.StatusCode != 200 || rec["identifier"] != id {
			t.Fatalf("%s: %d %v", id, resp.StatusCode, rec["identifier"])
		}
		if rec["source"] != "https://finder.test.example" {
			t.Errorf("source %v", rec["source"])
		}
		prov, _ := rec["provenance"].(map[string]any)
		if prov == nil || prov["catalog"] == "" {
			t.Errorf("provenance %v", rec["provenance"])
		}
		for _, k := range []string{"id", "contentHash", "publisherNames", "updatedAtTs"} {
			if _, ok := rec[k]; ok {
				t.Errorf("exposes %s", k)
			}
		}
	}
	// Unencoded colons work too.
	var rec map[string]any
	if resp := f.do("GET", "/agents/urn:ai:acme.com:agent:claims", nil, nil, &rec); resp.StatusCode != 200 {
		t.Fatalf("unencoded: %d", resp.StatusCode)
	}
	// Every spelling of one identifier finds the record as published; the
	// name is case-sensitive, so another name is another identifier.
	for _, c := range []struct {
		ask, want string
		status    int
	}{
		{"urn:air:acme.com:agent:claims", "urn:ai:acme.com:agent:claims", 200},
		{"urn:ai:ACME.com:agent:claims", "urn:ai:acme.com:agent:claims", 200},
		{"URN:AIR:Acme.Com.:agent:claims", "urn:ai:acme.com:agent:claims", 200},
		{"urn:ai:weather.example:skill:umbrella", "urn:air:weather.example:skill:umbrella", 200},
		{"urn:ai:acme.com:agent:CLAIMS", "", 404},
		{"urn:ai:acme.org:agent:claims", "", 404},
	} {
		rec = nil
		resp := f.do("GET", "/agents/"+url.PathEscape(c.ask), nil, nil, &rec)
		if resp.StatusCode != c.status || (c.want != "" && rec["identifier"] != c.want) {
			t.Errorf("GET /agents/%s: %d %v, want %d %q", c.ask, resp.StatusCode, rec["identifier"], c.status, c.want)
		}
	}
}

func TestExplore(t *testing.T) {
	f := newFixture(t, nil)
	var out search.ExploreAnswer
	resp := f.do("POST", "/explore", map[string]any{"query": map[string]any{"text": "healthcare"}}, nil, &out)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if out.Total != 3 || out.Facets["publisher"]["acme.com"] != 3 || out.Facets["compliance"]["hipaa"] != 2 || out.Facets["tags"]["healthcare"] != 3 {
		t.Fatalf("facets %+v total %d", out.Facets, out.Total)
	}
	if out.Facets["type"]["application/a2a-agent-card+json"] != 2 {
		t.Fatalf("type facet %v", out.Facets["type"])
	}
	out = search.ExploreAnswer{}
	resp = f.do("POST", "/explore", map[string]any{"query": map[string]any{"filter": map[string]any{"tags": "filler"}}, "facets": []string{"type"}}, nil, &out)
	if resp.StatusCode != 200 || out.Total != fillerCount || len(out.Facets) != 1 {
		t.Fatalf("explore without text: %d %+v", resp.StatusCode, out)
	}
}

func TestSelfCatalogHealthAndOpenAPI(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.ReadyDetails = map[string]string{"embeddings": "off: model files not found"} })
	var cat struct {
		Entries []map[string]any `json:"entries"`
	}
	f.do("GET", "/.well-known/ai-catalog.json", nil, nil, &cat)
	if len(cat.Entries) != 2 {
		t.Fatalf("entries %v", cat.Entries)
	}
	e := cat.Entries[0]
	if e["identifier"] != "urn:ai:finder.test.example:registry:test-finder" || e["type"] != "application/ai-registry+json" || e["url"] != "https://finder.test.example/search" {
		t.Fatalf("self entry %v", e)
	}
	// The MCP endpoint is an entry of its own that normalize reads as an MCP
	// server with a streamable-HTTP remote.
	b, _ := json.Marshal(map[string]any{"specVersion": "1.0", "entries": cat.Entries})
	res := normalize.Catalog(b, normalize.Options{})
	if len(res.Records) != 2 || len(res.Problems) != 0 {
		t.Fatalf("self catalog normalizes to %d records, problems %+v", len(res.Records), res.Problems)
	}
	mcpRec := res.Records[1]
	if mcpRec.Identifier != "urn:ai:finder.test.example:mcp:test-finder" || mcpRec.Type != "application/mcp-server+json" ||
		len(mcpRec.Bindings) != 1 || mcpRec.Bindings[0].URL != "https://finder.test.example/mcp" || mcpRec.Bindings[0].Transport != "streamable-http" {
		t.Fatalf("MCP entry %+v", mcpRec)
	}
	var h map[string]any
	if resp := f.do("GET", "/healthz", nil, nil, &h); resp.StatusCode != 200 {
		t.Fatalf("healthz %d", resp.StatusCode)
	}
	var r readyResponse
	if resp := f.do("GET", "/readyz", nil, nil, &r); resp.StatusCode != 200 || r.Details["embeddings"] == "" {
		t.Fatalf("readyz %d %+v", resp.StatusCode, r)
	}
	f.srv.SetReadyDetail("embeddings", "on")
	f.do("GET", "/readyz", nil, nil, &r)
	if r.Details["embeddings"] != "on" {
		t.Fatalf("details %+v", r.Details)
	}
	var doc map[string]any
	if resp := f.do("GET", "/openapi.json", nil, nil, &doc); resp.StatusCode != 200 || doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi %d %v", resp.StatusCode, doc["openapi"])
	}
	paths := doc["paths"].(map[string]any)
	for _, p := range []string{"/search", "/agents", "/agents/{identifier}", "/explore", "/.well-known/ai-catalog.json", "/healthz", "/readyz",
		"/mcp", "/discover", "/agents/search", "/adp/discover"} {
		if paths[p] == nil {
			t.Errorf("openapi.json lacks %s", p)
		}
	}
	resp, err := f.http.Client().Get(f.http.URL + "/")
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("page: %v %v", err, resp)
	}
	resp.Body.Close()
}

// TestMeilisearchDown: an unreachable Meilisearch is 503 unavailable for the
// API and for /readyz, with nothing of the cause shown.
func TestMeilisearchDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var logs logbuf.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := New(Config{Index: "x", Meili: meili.New("http://"+addr, ""), PublicURL: "http://127.0.0.1:1"}, logger)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, srv: srv}
	f.http = httptest.NewServer(srv.Handler())
	t.Cleanup(f.http.Close)
	var out searchOut
	resp := f.do("POST", "/search", map[string]any{"query": map[string]any{"text": "x", "federation": "none"}}, nil, &out)
	if resp.StatusCode != 503 || out.Error == nil || out.Error.Code != door.CodeUnavailable || strings.Contains(out.Error.Message, addr) {
		t.Fatalf("search: %d %+v", resp.StatusCode, out.Error)
	}
	if resp.Header.Get("Retry-After") == "" {
		t.Errorf("no Retry-After")
	}
	if !strings.Contains(logs.String(), `"correlationId":"`+out.Error.CorrelationID+`"`) || !strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("log lacks the error with correlation id %s:\n%s", out.Error.CorrelationID, logs.String())
	}
	var r readyResponse
	if resp := f.do("GET", "/readyz", nil, nil, &r); resp.StatusCode != 503 || r.Status != "unavailable" {
		t.Fatalf("readyz %d %+v", resp.StatusCode, r)
	}
}

// blockingEmbedder holds every query until released, so a test can fill the
// server's concurrency limit deterministically.
type blockingEmbedder struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blockingEmbedder) Dimensions() int { return 3 }
func (b *blockingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	b.entered <- struct{}{}
	select {
	case <-b.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return nil, errors.New("test embedder: no vectors")
}

func TestConcurrencyLimitAndCancel(t *testing.T) {
	emb := &blockingEmbedder{entered: make(chan struct{}, 4), release: make(chan struct{})}
	f := newFixture(t, func(c *Config) { c.Embedder = emb; c.MaxConcurrent = 2 })
	body := map[string]any{"query": map[string]any{"text": "weather", "federation": "none"}}
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i := range 2 {
		wg.Go(func() {
			var out searchOut
			statuses[i] = f.do("POST", "/search", body, nil, &out).StatusCode
		})
	}
	<-emb.entered
	<-emb.entered
	var out searchOut
	resp := f.do("POST", "/search", body, nil, &out)
	if resp.StatusCode != http.StatusTooManyRequests || out.Error.Code != door.CodeRateLimited {
		t.Fatalf("third request: %d %+v", resp.StatusCode, out.Error)
	}
	close(emb.release)
	wg.Wait()
	for _, s := range statuses {
		if s != 200 { // the embedder failed: keyword search still answers
			t.Fatalf("held requests: %v", statuses)
		}
	}
	// A request whose client goes away gets nothing written.
	ctx, cancel := context.WithCancel(context.Background())
	emb2 := &blockingEmbedder{entered: make(chan struct{}, 1), release: make(chan struct{})}
	srv, err := New(Config{Index: f.index, Meili: f.meili.Client, Embedder: emb2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{header: http.Header{}}
	req, _ := http.NewRequestWithContext(ctx, "POST", "/search", strings.NewReader(`{"query":{"text":"weather","federation":"none"}}`))
	done := make(chan struct{})
	go func() { srv.Handler().ServeHTTP(rec, req); close(done) }()
	<-emb2.entered
	cancel()
	<-done
	if rec.status != 0 || rec.body.Len() != 0 {
		t.Fatalf("cancelled request wrote %d %q", rec.status, rec.body.String())
	}
}

type recorder struct {
	header http.Header
	status int
	body   strings.Builder
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(s int)           { r.status = s }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }

// TestFederationModes uses the real federation.Federator with no upstreams:
// auto and referrals answer locally with upstreams and referrals present, a
// Via naming this registry is answered locally, and our Via is added.
func TestFederationModes(t *testing.T) {
	fed, err := federation.New(federation.Config{Name: "https://finder.test.example"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *Config) { c.Federation = fed })
	for _, mode := range []string{"auto", "referrals", "referral", ""} {
		t.Run("mode "+mode, func(t *testing.T) {
			f.t = t
			q := map[string]any{"text": "weather"}
			if mode != "" {
				q["federation"] = mode
			}
			var raw map[string]json.RawMessage
			resp := f.do("POST", "/search", map[string]any{"query": q, "pageSize": 2}, nil, &raw)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, raw["error"])
			}
			if string(raw["upstreams"]) != "[]" || raw["referrals"] == nil {
				t.Fatalf("upstreams %s referrals %s", raw["upstreams"], raw["referrals"])
			}
			var results []searchResult
			_ = json.Unmarshal(raw["results"], &results)
			if len(results) != 2 || results[0].Source != "https://finder.test.example" {
				t.Fatalf("results %+v", results)
			}
			if !strings.Contains(resp.Header.Get("Via"), "finder.test.example") {
				t.Fatalf("Via %q", resp.Header.Get("Via"))
			}
			var tok string
			_ = json.Unmarshal(raw["pageToken"], &tok)
			if tok == "" {
				t.Fatal("no pageToken")
			}
			var next searchOut
			resp = f.do("POST", "/search", map[string]any{"query": q, "pageSize": 2, "pageToken": tok}, nil, &next)
			if resp.StatusCode != 200 || len(next.Results) == 0 || slices.Contains(ids(results), next.Results[0].Identifier) {
				t.Fatalf("next page: %d %v %+v", resp.StatusCode, ids(next.Results), next.Error)
			}
		})
	}
	t.Run("bad token", func(t *testing.T) {
		f.t = t
		for _, tok := range []string{"garbage", "v1.AAAA.BBBB"} {
			status, out := f.search(map[string]any{"query": map[string]any{"text": "weather", "federation": "auto"}, "pageToken": tok})
			if status != 400 || out.Error.Code != door.CodeInvalidRequest {
				t.Fatalf("token %q: %d %+v", tok, status, out.Error)
			}
		}
	})
	t.Run("loop", func(t *testing.T) {
		f.t = t
		var raw map[string]json.RawMessage
		resp := f.do("POST", "/search", map[string]any{"query": map[string]any{"text": "weather", "federation": "auto"}}, map[string]string{"Via": "1.1 other.example, 1.1 finder.test.example"}, &raw)
		if resp.StatusCode != 200 || raw["upstreams"] != nil {
			t.Fatalf("looped request: %d upstreams %s", resp.StatusCode, raw["upstreams"])
		}
	})
}

// TestServeShutsDownGracefully: on the server NewHTTPServer builds, a
// request in flight when Shutdown starts still gets its answer.
func TestServeShutsDownGracefully(t *testing.T) {
	emb := &blockingEmbedder{entered: make(chan struct{}, 1), release: make(chan struct{})}
	f := newFixture(t, func(c *Config) { c.Embedder = emb })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := HTTPConfig{}
	hs := NewHTTPServer(f.srv.Handler(), cfg, nil)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(cfg.Listener(ln)) }()
	status := make(chan int, 1)
	go func() {
		resp, err := http.Post("http://"+ln.Addr().String()+"/search", "application/json", strings.NewReader(`{"query":{"text":"weather","federation":"none"}}`))
		if err != nil {
			status <- -1
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	<-emb.entered
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(context.Background()) }()
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Serve: %v", err)
	}
	close(emb.release)
	if s := <-status; s != http.StatusOK {
		t.Fatalf("in-flight request: %d", s)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}
