package search

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/searchapi/query"
	"github.com/agentfinder/agentfinder/searchapi/score"
)

// TestCrowdHits: a federated page is crowded by the provider each entry's
// endpoints and publisher name, whichever registry returned it.
func TestCrowdHits(t *testing.T) {
	hit := func(id, publisher, endpoint string, local bool) federation.Hit {
		e := map[string]json.RawMessage{"publisher": mustJSON(publisher)}
		if endpoint != "" {
			e["bindings"] = mustJSON([]map[string]string{{"protocol": "a2a", "url": endpoint}})
		}
		return federation.Hit{Identifier: id, Entry: e, Local: local}
	}
	hits := []federation.Hit{
		hit("l1", "one.example", "https://hub.directory.example/1", true),
		hit("u1", "two.example", "https://api.directory.example/2", false),
		hit("l2", "three.example", "https://hub.directory.example/3", true),
		hit("x", "other.example", "", true),
		hit("u2", "directory.example", "", false),
	}
	var got []string
	for _, h := range crowdHits(&score.Default, hits) {
		got = append(got, h.Identifier)
	}
	if want := []string{"l1", "u1", "x", "l2", "u2"}; !slices.Equal(got, want) {
		t.Errorf("crowded %v, want %v", got, want)
	}
}

// BenchmarkCrowdPool: what the crowding costs a search, the pool's 30
// documents read for their providers and reordered.
func BenchmarkCrowdPool(b *testing.B) {
	docs := map[string]meiliHit{}
	var seq []query.Scored
	var scores []float64
	for i := range poolSize {
		id := fmt.Sprintf("urn:ai:p%d.example:agent:x%d", i%7, i)
		docs[id] = meiliHit{"publisher": mustJSON(fmt.Sprintf("p%d.example", i%7)),
			"bindings": mustJSON([]map[string]string{{"protocol": "a2a", "url": fmt.Sprintf("https://hub%d.directory.example/agents/x%d", i%3, i)},
				{"protocol": "http", "url": fmt.Sprintf("https://x.example/%d", i)}})}
		seq = append(seq, query.Scored{ID: id})
		scores = append(scores, 1-float64(i)/40)
	}
	for b.Loop() {
		crowdPool(&score.Default, seq, scores, docs, func(float64) bool { return true })
	}
}
