package score

import (
	"encoding/json"
	"os"
	"testing"
)

// hubDump is what searchapi/search's TestHubnessDump writes: for each
// world ("set" alone, "all" with the distractors) and document, how near
// it sits to the rest of its world (k5, k10, k20: its mean cosine with its
// k nearest other documents; centre: its cosine with the world's mean).
// Nearest lists each document's 20 nearest other documents, nearest
// first, by world.
type hubDump struct {
	Hubness map[string]map[string]map[string]float64 `json:"hubness"`
	Nearest map[string]map[string][]string           `json:"nearest"`
}

// loadHubs reads the dump AGENTFINDER_SCORE_HUBS names (nil when unset).
func loadHubs(t *testing.T) *hubDump {
	t.Helper()
	path := os.Getenv("AGENTFINDER_SCORE_HUBS")
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d hubDump
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

// withHubCorrection returns a copy of qs whose candidates' semantic
// similarity is lowered by lambda times how much nearer the rest of the
// world (feature of world's dump) the document sits than the world's mean
// document: a document-side hub correction.
func withHubCorrection(qs []fitQuery, d *hubDump, world, feature string, lambda float64) []fitQuery {
	w := d.Hubness[world]
	var mean float64
	for _, f := range w {
		mean += f[feature]
	}
	mean /= float64(max(len(w), 1))
	out := make([]fitQuery, len(qs))
	for i, q := range qs {
		q.pool = append([]Candidate(nil), q.pool...)
		for j := range q.pool {
			if f, ok := w[q.ids[j]]; ok && q.pool[j].Semantic > 0 {
				q.pool[j].Semantic -= lambda * (f[feature] - mean)
			}
		}
		out[i] = q
	}
	return out
}
