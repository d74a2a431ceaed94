package searchapi

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestSearchFilters(t *testing.T) {
	f := newFixture(t, nil)
	q := func(text string, extra map[string]any) map[string]any {
		qq := map[string]any{"text": text, "federation": "none"}
		for k, v := range extra {
			qq[k] = v
		}
		return map[string]any{"query": qq, "pageSize": 50}
	}
	tests := []struct {
		name    string
		body    any
		want    []string // exactly these identifiers, in any order
		wantAny []string // at least these
	}{
		{name: "text only", body: q("flight booking", nil), wantAny: []string{"urn:ai:weather.example:agent:flights"}},
		{name: "type a2a", body: q("healthcare", map[string]any{"type": "application/a2a-agent-card+json"}),
			want: []string{"urn:ai:acme.com:agent:claims", "urn:ai:acme.com:agent:scheduler"}},
		{name: "type mcp canonical finds card spelling", body: q("records", map[string]any{"type": "application/mcp-server+json"}),
			want: []string{"urn:ai:acme.com:mcp:records"}},
		{name: "type mcp card spelling", body: q("records", map[string]any{"type": "application/mcp-server-card+json"}),
			want: []string{"urn:ai:acme.com:mcp:records"}},
		{name: "type case and parameters ignored", body: q("weather", map[string]any{"type": "Application/MCP-Server+JSON; charset=utf-8"}),
			want: []string{"urn:ai:weather.example:mcp:forecast"}},
		{name: "registry with +json", body: q("search", map[string]any{"type": "application/ai-registry+json"}),
			want: []string{"urn:ai:acme.com:registry:internal"}},
		{name: "registry without +json", body: q("search", map[string]any{"type": "application/ai-registry"}),
			want: []string{"urn:ai:acme.com:registry:internal"}},
		{name: "unknown vendor type", body: q("umbrella", map[string]any{"type": "application/ai-skill"}),
			want: []string{"urn:air:weather.example:skill:umbrella"}},
		{name: "compliance family", body: q("healthcare", map[string]any{"compliance": "hipaa"}),
			want: []string{"urn:ai:acme.com:agent:claims", "urn:ai:acme.com:agent:scheduler"}},
		{name: "compliance exact", body: q("healthcare", map[string]any{"compliance": "SOC2-Type2"}),
			want: []string{"urn:ai:acme.com:agent:claims"}},
		{name: "publisher domain", body: q("weather", map[string]any{"publisher": "weather.example"}),
			wantAny: []string{"urn:ai:weather.example:mcp:forecast", "urn:ai:weather.example:agent:flights"}},
		{name: "publisher excludes others", body: q("healthcare", map[string]any{"publisher": "weather.example"}), want: []string{}},
		{name: "publisher urn:air", body: q("umbrella", map[string]any{"publisher": "weather.example"}),
			want: []string{"urn:air:weather.example:skill:umbrella"}},
		{name: "publisher host display name", body: q("claims", map[string]any{"publisher": "Acme Health"}),
			want: []string{"urn:ai:acme.com:agent:claims"}},
		{name: "publisher url", body: q("claims", map[string]any{"publisher": "https://ACME.com/"}),
			want: []string{"urn:ai:acme.com:agent:claims"}},
		{name: "verifiedOnly", body: q("healthcare", map[string]any{"verifiedOnly": true}),
			want: []string{"urn:ai:acme.com:agent:claims", "urn:ai:acme.com:agent:scheduler", "urn:ai:acme.com:mcp:records"}},
		{name: "verifiedOnly excludes mirrored", body: q("weather", map[string]any{"verifiedOnly": true}), want: []string{}},
		{name: "tags any", body: q("weather", map[string]any{"tags": []string{"forecast", "flights"}}),
			want: []string{"urn:ai:weather.example:mcp:forecast", "urn:ai:weather.example:agent:flights"}},
		{name: "requiredTags all", body: q("healthcare", map[string]any{"requiredTags": []string{"healthcare", "claims"}}),
			want: []string{"urn:ai:acme.com:agent:claims"}},
		{name: "excludedTags", body: q("healthcare", map[string]any{"excludedTags": []string{"records", "scheduling"}}),
			want: []string{"urn:ai:acme.com:agent:claims"}},
		{name: "capabilities", body: q("weather", map[string]any{"capabilities": "AlertsTool"}),
			want: []string{"urn:ai:weather.example:mcp:forecast"}},
		{name: "protocols", body: q("weather", map[string]any{"protocols": []string{"mcp"}}),
			want: []string{"urn:ai:weather.example:mcp:forecast"}},
		{name: "ARD filter object", body: map[string]any{"query": map[string]any{"text": "weather", "filter": map[string]any{
			"type": []string{"application/mcp-server+json", "application/ai-skill"}, "publisher": []string{"acme.com", "weather.example"}}}, "federation": "none"},
			want: []string{"urn:air:weather.example:skill:umbrella", "urn:ai:weather.example:mcp:forecast"}},
		{name: "ARD filter AND across keys", body: map[string]any{"query": map[string]any{"text": "healthcare", "filter": map[string]any{
			"type": []string{"application/mcp-server+json"}, "publisher": "acme.com"}}, "federation": "none"},
			want: []string{"urn:ai:acme.com:mcp:records"}},
		{name: "combined type compliance publisher", body: q("healthcare", map[string]any{
			"type": "application/a2a-agent-card+json", "compliance": "soc2", "publisher": "acme.com"}),
			want: []string{"urn:ai:acme.com:agent:claims"}},
		{name: "stale excluded", body: q("radar", nil), want: []string{}},
		{name: "stale included", body: q("radar", map[string]any{"includeStale": true}), want: []string{"urn:ai:weather.example:agent:old-radar"}},
		{name: "expired excluded", body: q("storm hurricanes", nil), want: []string{}},
		{name: "expired included", body: map[string]any{"query": map[string]any{"text": "storm hurricanes"}, "includeStale": true, "federation": "none"},
			want: []string{"urn:ai:weather.example:agent:expired-storm"}},
		{name: "xu string query", body: map[string]any{"query": "umbrella", "federation": "none"}, want: []string{"urn:air:weather.example:skill:umbrella"}},
		{name: "xu shape", body: map[string]any{"query": "healthcare", "federation": "none", "required_tags": []string{"claims"}, "limit": 5},
			want: []string{"urn:ai:acme.com:agent:claims"}},
		{name: "xu excluded_tags in query object", body: q("healthcare", map[string]any{"excluded_tags": []string{"records", "scheduling"}}),
			want: []string{"urn:ai:acme.com:agent:claims"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.t = t
			status, out := f.search(tc.body)
			if status != http.StatusOK {
				t.Fatalf("status %d: %+v", status, out.Error)
			}
			got := ids(out.Results)
			if tc.want != nil {
				a, b := slices.Clone(got), slices.Clone(tc.want)
				slices.Sort(a)
				slices.Sort(b)
				if !slices.Equal(a, b) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
			for _, w := range tc.wantAny {
				if !slices.Contains(got, w) {
					t.Fatalf("got %v, want it to contain %s", got, w)
				}
			}
			for _, r := range out.Results {
				if r.Score < 0 || r.Score > 100 || r.Source != "https://finder.test.example" {
					t.Fatalf("result %s: score %d source %q", r.Identifier, r.Score, r.Source)
				}
			}
		})
	}
}

func TestSearchResultShape(t *testing.T) {
	f := newFixture(t, nil)
	var raw map[string]any
	f.do(http.MethodPost, "/search", map[string]any{"query": map[string]any{"text": "triage insurance claim", "federation": "none"}}, nil, &raw)
	results := raw["results"].([]any)
	if len(results) == 0 {
		t.Fatal("no results")
	}
	first := results[0].(map[string]any)
	if first["identifier"] != "urn:ai:acme.com:agent:claims" {
		t.Fatalf("first result %v, want the claims agent", first["identifier"])
	}
	for _, k := range []string{"identifier", "displayName", "type", "url", "description", "tags", "capabilities", "representativeQueries", "version", "updatedAt", "trustManifest", "score", "source", "publisher", "publisherVerified"} {
		if _, ok := first[k]; !ok {
			t.Errorf("result lacks %q: %v", k, first)
		}
	}
	for _, k := range []string{"id", "contentHash", "stale", "publisherNames", "sourceCatalog", "updatedAtTs", "indexedAtTs", "expiresAtTs", "_vectors", "_rankingScore", "examples"} {
		if _, ok := first[k]; ok {
			t.Errorf("result exposes internal field %q", k)
		}
	}
	if _, ok := raw["upstreams"]; ok {
		t.Errorf("federation none answered upstreams")
	}
	if refs, ok := raw["referrals"].([]any); !ok || len(refs) != 0 {
		t.Errorf("referrals = %v, want []", raw["referrals"])
	}
}

func TestSearchEvidence(t *testing.T) {
	f := newFixture(t, nil)
	status, out := f.search(map[string]any{"query": map[string]any{"text": "book a flight to Tokyo", "federation": "none",
		"preferredTags": []string{"travel"}}, "includeEvidence": true})
	if status != http.StatusOK || len(out.Results) == 0 {
		t.Fatalf("status %d results %v", status, out.Results)
	}
	top := out.Results[0]
	if top.Identifier != "urn:ai:weather.example:agent:flights" {
		t.Fatalf("top %s", top.Identifier)
	}
	ev := top.Evidence
	if ev == nil {
		t.Fatal("no evidence")
	}
	if !slices.Contains(ev.MatchedTags, "flights") || !slices.Contains(ev.MatchedTags, "travel") {
		t.Errorf("matchedTags %v, want flights (query word) and travel (preferred)", ev.MatchedTags)
	}
	if len(ev.MatchedExamples) == 0 || ev.MatchedExamples[0].Text != "book a flight to Tokyo" || ev.MatchedExamples[0].Score != 1 {
		t.Errorf("matchedExamples %+v, want the representative query first with score 1", ev.MatchedExamples)
	}
	for _, k := range []string{"tag", "context", "example"} {
		v, ok := ev.ScoreComponents[k]
		if !ok || v < 0 || v > 1 {
			t.Errorf("scoreComponents[%s] = %v, %v", k, v, ok)
		}
	}
	if ev.ScoreComponents["context"] == 0 {
		t.Errorf("context component is 0 for a keyword match: %v", ev.ScoreComponents)
	}
	if ev.Freshness.MetadataUpdatedAt != "2026-02-01" || !strings.HasPrefix(ev.Freshness.IndexedAt, "2026-06-01T11:30:00") {
		t.Errorf("freshness %+v", ev.Freshness)
	}
	// Preferred tags boost without excluding: "weather" preferring "travel"
	// lifts the flight agent (tagged travel, a weak match) to second place,
	// behind the perfect match, and keeps every other result.
	_, out = f.search(map[string]any{"query": map[string]any{"text": "weather", "federation": "none", "preferredTags": []string{"travel"}}, "pageSize": 20})
	_, plain := f.search(map[string]any{"query": map[string]any{"text": "weather", "federation": "none"}, "pageSize": 20})
	if len(out.Results) < 2 || out.Results[1].Identifier != "urn:ai:weather.example:agent:flights" ||
		out.Results[0].Identifier != plain.Results[0].Identifier || len(out.Results) != len(plain.Results) {
		t.Fatalf("preferred travel: %v; plain: %v", ids(out.Results), ids(plain.Results))
	}
	if i := slices.Index(ids(plain.Results), "urn:ai:weather.example:agent:flights"); i < 2 {
		t.Fatalf("the flight agent is at %d even without the boost: %v", i, ids(plain.Results))
	}
	for i := range out.Results {
		if out.Results[i].Identifier == plain.Results[i].Identifier && out.Results[i].Score != plain.Results[i].Score {
			t.Errorf("boost changed the shown score of %s", out.Results[i].Identifier)
		}
	}
	// Without includeEvidence there is none.
	_, out = f.search(map[string]any{"query": map[string]any{"text": "book a flight to Tokyo", "federation": "none"}})
	if len(out.Results) == 0 || out.Results[0].Evidence != nil {
		t.Fatalf("evidence without includeEvidence: %+v", out.Results)
	}
}
