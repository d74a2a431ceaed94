package search

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/searchapi/query"
)

// TestConfidenceVectorDump writes, for every hybrid request of a dump
// TestRelevanceDump wrote (AGENTFINDER_CONFVEC_DUMP), each of its hits'
// similarity with a second request vector, (1 + cosine)/2 as Meilisearch
// reports the semantic side, for each variant CONFVEC_VARIANTS lists
// (variantVector's names; "typed,strip:0.3,mix:0.8" unless set), to the
// JSON file AGENTFINDER_CONFVEC_OUT ({"variants": {variant: {request id:
// [similarity of each hit, in the dump's order]}}}). searchapi/score reads
// it (AGENTFINDER_SCORE_CONFVEC) to compute the confidence's semantic
// features from that vector while the order stays the typed vector's
// (docs/MEASUREMENTS.md, tenth round: a second vector for the confidence).
// It fails when the typed variant's similarities are not the dump's own
// (the documents' entry vectors embedded here are the index's). No
// Meilisearch: the entry vectors are embedded offline (embedWorld).
//
//	AGENTFINDER_CONFVEC_DUMP=/tmp/rel.json AGENTFINDER_CONFVEC_OUT=/tmp/cv.json \
//	  AGENTFINDER_MODEL_DIR=$PWD/.cache/model go test -count=1 -run TestConfidenceVectorDump ./searchapi/search
func TestConfidenceVectorDump(t *testing.T) {
	in, out := os.Getenv("AGENTFINDER_CONFVEC_DUMP"), os.Getenv("AGENTFINDER_CONFVEC_OUT")
	if in == "" || out == "" {
		t.Skip("set AGENTFINDER_CONFVEC_DUMP (TestRelevanceDump's dump) and AGENTFINDER_CONFVEC_OUT")
	}
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var d struct{ Queries []dumpQuery }
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	w := embedWorld(t, envOr("AGENTFINDER_RELEVANCE_DIR", "../../fixtures/relevance"))
	docs := make(map[string][]float32, len(w.ids))
	for i, id := range w.ids {
		docs[id] = w.docs[i]
	}
	e := &Engine{cfg: Config{Embedder: w.model, QueryRewriter: query.Rewrite}}
	variants := strings.Split(envOr("CONFVEC_VARIANTS", "typed,strip:0.3,mix:0.8"), ",")
	if !slices.Contains(variants, "typed") {
		variants = append(variants, "typed") // the check below
	}
	sims := map[string]map[string][]float64{}
	for _, v := range variants {
		sims[v] = map[string][]float64{}
	}
	var worst float64
	for _, q := range d.Queries {
		if q.Mode != "hybrid" {
			continue
		}
		for _, v := range variants {
			vec := variantVector(t, e, q.Text, v)
			row := make([]float64, len(q.Hits))
			for i, h := range q.Hits {
				dv, ok := docs[h.ID]
				if !ok {
					t.Fatalf("%s: hit %s is no document of the world", q.ID, h.ID)
				}
				row[i] = (1 + cosine(vec, dv)) / 2
				if v == "typed" && h.Semantic > 0 {
					worst = math.Max(worst, math.Abs(row[i]-h.Semantic))
				}
			}
			sims[v][q.ID] = row
		}
	}
	fmt.Printf("typed: largest difference from the dump's semantic similarity %.2g\n", worst)
	if worst > 1e-3 {
		t.Fatalf("the typed vector's similarities differ from the dump's by %.3g: not the index's vectors", worst)
	}
	b, err = json.Marshal(map[string]any{"variants": sims})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
