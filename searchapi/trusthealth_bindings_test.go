package searchapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/adp"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/haidip"
	"github.com/agentfinder/agentfinder/searchapi/search"
	"github.com/agentfinder/agentfinder/searchapi/searchtest"
)

// bindingsText matches the trust fixture's acme and weather records
// broadly (searchtest.BindingsText).
const bindingsText = searchtest.BindingsText

// TestTrustHealthBindings: xu (constraints signed_only, live_only), HAIDIP
// (filters trust_level, health, signed_only, live_only) and ADP
// (signed_only, live_only) keep exactly the results POST /search keeps
// with the same option, and each result shows the record's trust and
// health in the binding's shape.
func TestTrustHealthBindings(t *testing.T) {
	f := newTrustFixture(t, true, nil)
	searchIDs := func(t *testing.T, opt string) []string {
		q := map[string]any{"text": bindingsText, "federation": "none"}
		if opt != "" {
			q[opt] = true
		}
		code, out := f.trustSearch(t, map[string]any{"query": q, "pageSize": 100})
		if code != 200 {
			t.Fatalf("search %s: %d", opt, code)
		}
		return resultIDs(out.Results)
	}
	type shown struct {
		id     string
		trust  *door.Trust
		health *door.Health
	}
	check := func(t *testing.T, name string, got []shown, want []string) {
		t.Helper()
		ids := make([]string, len(got))
		for i, g := range got {
			ids[i] = g.id
			if g.trust == nil || g.trust.Level != wantLevel(f, g.id) || g.health == nil || g.health.Status != wantStatus(g.id) {
				t.Errorf("%s: %s shows trust %+v health %+v", name, g.id, g.trust, g.health)
			}
		}
		slices.Sort(ids)
		if len(want) == 0 || !slices.Equal(ids, want) {
			t.Errorf("%s: got %v, want %v", name, ids, want)
		}
	}
	xu := func(t *testing.T, constraints map[string]any) []shown {
		f.t = t
		resp, out, _ := f.discover(map[string]any{"query": bindingsText, "limit": 100, "federation": "none", "constraints": constraints})
		if resp.StatusCode != 200 {
			t.Fatalf("xu %v: %d %s", constraints, resp.StatusCode, out.Message)
		}
		for k, v := range constraints {
			if c, _ := out.AppliedFilters["constraints"].(map[string]any); c[k] != v {
				t.Errorf("applied_filters %v lacks %s", out.AppliedFilters, k)
			}
		}
		var got []shown
		for _, c := range out.Candidates {
			got = append(got, shown{c.ID, c.Trust, c.Health})
		}
		return got
	}
	haidip := func(t *testing.T, filters map[string]any) []shown {
		f.t = t
		var out haidip.Response
		resp := f.do(http.MethodPost, "/agents/search", map[string]any{"query": bindingsText, "top": 100, "federation": "none", "filters": filters}, nil, &out)
		if resp.StatusCode != 200 {
			t.Fatalf("haidip %v: %d", filters, resp.StatusCode)
		}
		var got []shown
		for _, r := range out.Results {
			got = append(got, shown{r.ID, r.Trust, r.Health})
		}
		return got
	}
	adp := func(t *testing.T, body map[string]any) []shown {
		f.t = t
		body["query"], body["limit"], body["federation"] = bindingsText, 100, "none"
		var out adp.Response
		if resp := f.do(http.MethodPost, "/adp/discover", body, nil, &out); resp.StatusCode != 200 {
			t.Fatalf("adp %v: %d", body, resp.StatusCode)
		}
		var got []shown
		for _, r := range out.Results {
			var card struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(r.AgentCard, &card)
			got = append(got, shown{card.ID, r.Trust, r.Health})
		}
		return got
	}
	for _, opt := range []string{"", "signedOnly", "liveOnly"} {
		t.Run("option "+opt, func(t *testing.T) {
			want := searchIDs(t, opt)
			snake := map[string]string{"signedOnly": "signed_only", "liveOnly": "live_only"}[opt]
			xuC, hd, ad := map[string]any{}, map[string]any{}, map[string]any{}
			if snake != "" {
				xuC[snake], hd[snake], ad[snake] = true, true, true
			}
			check(t, "xu", xu(t, xuC), want)
			check(t, "haidip", haidip(t, hd), want)
			check(t, "adp", adp(t, ad), want)
		})
	}
	t.Run("haidip filters", func(t *testing.T) {
		all := searchIDs(t, "")
		var want []string
		for _, id := range all {
			if wantLevel(f, id) != normalize.TrustNone && wantStatus(id) != normalize.HealthUp {
				want = append(want, id)
			}
		}
		check(t, "haidip", haidip(t, map[string]any{"trust_level": []string{"signed", "domain"}, "health": []string{"down", "auth_required", "unknown"}}), want)
	})
	t.Run("bad values", func(t *testing.T) {
		f.t = t
		if resp, _, _ := f.discover(map[string]any{"query": "x", "constraints": map[string]any{"signed_only": "yes"}}); resp.StatusCode != 400 {
			t.Errorf("xu signed_only \"yes\": %d", resp.StatusCode)
		}
		if resp := f.do(http.MethodPost, "/agents/search", map[string]any{"query": "x", "filters": map[string]any{"health": "alive"}}, nil, nil); resp.StatusCode != 400 {
			t.Errorf("haidip health alive: %d", resp.StatusCode)
		}
	})
}

// TestTrustHealthMCP: the MCP search tool takes signedOnly and liveOnly
// (and the trust and health filters) in its filter argument, its
// structured content is POST /search's answer with trust and health, its
// text says both, and explore counts them.
func TestTrustHealthMCP(t *testing.T) {
	f := newTrustFixture(t, true, nil)
	cs := searchtest.MCPSession(t, f.http.URL+"/mcp", f.http.Client())
	var out trustSearchOut
	res := callTool(t, cs, "search", map[string]any{"text": bindingsText, "federation": "none", "pageSize": 100,
		"filter": map[string]any{"signedOnly": true}}, &out)
	if res.IsError || !slices.Equal(resultIDs(out.Results), []string{"urn:ai:acme.com:agent:claims"}) {
		t.Fatalf("signedOnly: error %v, results %v", res.IsError, resultIDs(out.Results))
	}
	if text := toolText(res); !strings.Contains(text, "trust: signed by did:web:acme.com; health: up (42 ms)") {
		t.Fatalf("text lacks trust and health:\n%s", text)
	}
	out = trustSearchOut{}
	res = callTool(t, cs, "search", map[string]any{"text": bindingsText, "federation": "none", "pageSize": 100,
		"filter": map[string]any{"health": []string{"auth_required"}, "trust": []string{"none"}}}, &out)
	if res.IsError || !slices.Equal(resultIDs(out.Results), []string{"urn:ai:acme.com:mcp:records"}) {
		t.Fatalf("health auth_required, trust none: %v", resultIDs(out.Results))
	}
	if text := toolText(res); !strings.Contains(text, "trust: none (bad_signature); health: auth_required") {
		t.Fatalf("text:\n%s", text)
	}
	var ex search.ExploreAnswer
	res = callTool(t, cs, "explore", map[string]any{"facets": []string{"trust", "health"}}, &ex)
	if res.IsError || ex.Facets["trust"]["signed"] != 1 || ex.Facets["health"]["up"] != 2 {
		t.Fatalf("explore: %+v", ex.Facets)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"text": "x", "filter": map[string]any{"trust": []string{"verified"}}}})
	if err == nil && !res.IsError {
		t.Fatal("a trust level outside the schema's enum was accepted")
	}
}
