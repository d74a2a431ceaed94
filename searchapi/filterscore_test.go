package searchapi

import (
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/agentfinder/agentfinder/searchapi/query"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// filterOptions are the filters TestFilterKeepsScores draws from: each
// admits part of the fixture world (includeStale is not one: which
// records count as live is part of the scale scores are on).
var filterOptions = []map[string]any{
	{"type": "application/a2a-agent-card+json"},
	{"type": "application/mcp-server+json"},
	{"compliance": "hipaa"},
	{"publisher": "weather.example"},
	{"tags": []string{"forecast", "flights"}},
	{"tags": "weather"},
	{"requiredTags": []string{"healthcare", "claims"}},
	{"excludedTags": []string{"filler"}},
	{"capabilities": "AlertsTool"},
	{"protocols": []string{"mcp"}},
	{"verifiedOnly": true},
}

// TestFilterKeepsScores is a property over random filters against a real
// Meilisearch: a record's score for a request is the same with or without
// a filter that keeps it, with embeddings and keyword only. (Before, the
// keyword side weighed words by their rarity in the filtered subset and
// the confidence came from the filtered pool, so a filter lowered the
// scores of the records it kept.)
func TestFilterKeepsScores(t *testing.T) {
	texts := []string{
		"weather forecast for my flight",
		"healthcare claims and patient records",
		"weather forecast for my flight, healthcare claims and records",
		"insurance claims for patient records",
	}
	for _, mode := range []string{"hybrid", "keyword"} {
		t.Run(mode, func(t *testing.T) {
			var emb search.Embedder
			if mode == "hybrid" {
				emb = &topicEmbedder{}
			}
			f := newFixtureEmbedded(t, func(c *Config) { c.QueryRewriter = query.Rewrite }, emb)
			rng := rand.New(rand.NewPCG(29, 1))
			checked := 0
			for round := range 24 {
				text := texts[round%len(texts)]
				qq := map[string]any{"text": text, "federation": "none"}
				plain := scoresByID(t, f, qq)
				if len(plain) == 0 {
					t.Fatalf("%q: no results without a filter", text)
				}
				for _, k := range rng.Perm(len(filterOptions))[:1+rng.IntN(2)] {
					for key, v := range filterOptions[k] {
						qq[key] = v
					}
				}
				filtered := scoresByID(t, f, qq)
				for id, s := range filtered {
					p, ok := plain[id]
					if !ok {
						t.Errorf("%q with %v: %s kept by the filter, absent without it", text, qq, id)
						continue
					}
					checked++
					if s != p {
						t.Errorf("%q with %v: %s scores %d, %d without the filter", text, qq, id, s, p)
					}
				}
			}
			if checked < 24 {
				t.Fatalf("only %d filtered results compared: not a test", checked)
			}
		})
	}
}

// scoresByID searches qq (minScore 0, every result) and returns each
// result's score.
func scoresByID(t *testing.T, f *fixture, qq map[string]any) map[string]int {
	t.Helper()
	status, out := f.search(map[string]any{"query": qq, "pageSize": 100, "minScore": 0})
	if status != http.StatusOK {
		t.Fatalf("%v: status %d %+v", qq, status, out.Error)
	}
	m := make(map[string]int, len(out.Results))
	for _, r := range out.Results {
		m[r.Identifier] = r.Score
	}
	return m
}
