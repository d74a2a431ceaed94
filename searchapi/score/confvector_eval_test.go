package score

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/agentfinder/agentfinder/fixtures/relevance"
)

// A second request vector read only by the confidence (docs/MEASUREMENTS.md,
// tenth round): with CONF_VEC naming a variant of searchapi/search's
// TestConfidenceVectorDump, the dumps' requests carry each pool candidate's
// similarity with that vector (the side files AGENTFINDER_SCORE_CONFVEC, for
// AGENTFINDER_SCORE_DUMP, and AGENTFINDER_SCORE_CONFVEC_DISTRACTORS, for
// AGENTFINDER_SCORE_DUMP_DISTRACTORS), and the confidence's semantic
// features (topZ, topSemantic, poolMean, poolSD, semCover) are computed from
// it: the ranker's order, its utilities and every other feature stay the
// typed vector's, so Recall@1 and the order cannot move; only the first
// result's confidence, and with it every score and the share of the best,
// can. CONF_VEC_FOR says which model reads the second vector's features:
// "both" (the default), "gate" or "conf" (the other keeps the typed
// vector's). Every candidate has its similarity with the second vector, as
// a sub-query restricted to the pool would return it (in the dumps every
// pool candidate has a typed similarity: the pool of 30 lies within the
// semantic list of 50). TestFit, TestFitWorlds and TestServedFigures
// read the requests this way (rankQuery, confRow).

// confVectorFile is what TestConfidenceVectorDump writes.
type confVectorFile struct {
	Variants map[string]map[string][]float64 `json:"variants"`
}

// attachConfVector gives each request of qs, loaded from the dump at path,
// the pool its confidence reads (fitQuery.confPool) when CONF_VEC names a
// variant; it fails when the side file lacks a request or a hit.
func attachConfVector(t *testing.T, path string, qs []fitQuery) {
	t.Helper()
	variant := os.Getenv("CONF_VEC")
	if variant == "" {
		return
	}
	side := os.Getenv("AGENTFINDER_SCORE_CONFVEC")
	if path == os.Getenv("AGENTFINDER_SCORE_DUMP_DISTRACTORS") {
		side = os.Getenv("AGENTFINDER_SCORE_CONFVEC_DISTRACTORS")
	}
	b, err := os.ReadFile(side)
	if err != nil {
		t.Fatalf("CONF_VEC %s: the side file of %s: %v", variant, path, err)
	}
	var f confVectorFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	sims, ok := f.Variants[variant]
	if !ok {
		t.Fatalf("%s holds no variant %q", side, variant)
	}
	if os.Getenv("FIT_IMPUTE") != "" || os.Getenv("FIT_PROVIDER_WEIGHT") != "" {
		t.Fatal("CONF_VEC reads the side file in the dump's order of hits, which FIT_IMPUTE and FIT_PROVIDER_WEIGHT change")
	}
	for i := range qs {
		q := &qs[i]
		row := sims[q.id]
		if len(row) < len(q.pool) {
			t.Fatalf("%s: request %s has %d similarities for a pool of %d", side, q.id, len(row), len(q.pool))
		}
		q.confPool = make([]Candidate, len(q.pool))
		for j, c := range q.pool {
			q.confPool[j] = c
			q.confPool[j].Semantic = row[j]
		}
	}
}

// confUse reports whether the gate (gate true) or the confidence model
// reads the second vector's features (CONF_VEC_FOR).
func confUse(gate bool) bool {
	switch os.Getenv("CONF_VEC_FOR") {
	case "gate":
		return gate
	case "conf":
		return !gate
	}
	return true
}

// confFeaturesOf is the features the gate (gate true) or the confidence
// model reads for q ranked as rk: the second vector's when q carries them
// and CONF_VEC_FOR gives them to that model, the served ones otherwise.
func confFeaturesOf(q *fitQuery, rk *Ranking, gate bool) [numConf]float64 {
	pool := q.pool
	if q.confPool != nil && confUse(gate) {
		pool = q.confPool
	}
	return confidenceFeatures(&q.req, rk, pool, rk.feats)
}

// rankQuery is m.Rank of q, with the first result's confidence, and so
// every score, read from confFeaturesOf; the order is Rank's.
func rankQuery(m *Model, q *fitQuery) *Ranking {
	rk := m.Rank(&q.req, q.pool)
	if q.confPool == nil || len(rk.Order) == 0 {
		return rk
	}
	g, c := confFeaturesOf(q, rk, true), confFeaturesOf(q, rk, false)
	rk.conf = m.confidence(g, c)
	for i := range rk.Scores {
		rk.Scores[i] = m.scoreAt(rk, rk.later[i])
	}
	return rk
}

// TestConfVectorFeatures prints, for each dump, how well each semantic
// feature of the confidence tells a right first result of the served
// model (Default's order) from a wrong one over the dev requests (AUC),
// read from the typed vector and from the second vector CONF_VEC names,
// and the same for the served confidence (Default's Gate and Conf over the
// features each reads, rankQuery).
//
//	AGENTFINDER_SCORE_DUMP=/tmp/rel.json AGENTFINDER_SCORE_DUMP_DISTRACTORS=/tmp/reld.json \
//	  AGENTFINDER_SCORE_CONFVEC=/tmp/cv.json AGENTFINDER_SCORE_CONFVEC_DISTRACTORS=/tmp/cvd.json \
//	  CONF_VEC=strip:0.3 go test -count=1 -run TestConfVectorFeatures -v ./searchapi/score
func TestConfVectorFeatures(t *testing.T) {
	if os.Getenv("CONF_VEC") == "" {
		t.Skip("set CONF_VEC and the dumps and side files (confvector_eval_test.go)")
	}
	features := []int{cTopSemantic, cTopZ, cPoolMean, cPoolSD, cSemCover}
	for _, env := range []string{"AGENTFINDER_SCORE_DUMP", "AGENTFINDER_SCORE_DUMP_DISTRACTORS"} {
		qs := loadFit(t, os.Getenv(env), "hybrid", 30, 5)
		m := Default
		right, wrong := map[int][2][]float64{}, map[int][2][]float64{}
		var confRight, confWrong []float64
		for i := range qs {
			q := &qs[i]
			if q.kind != "dev" {
				continue
			}
			rk := m.Rank(&q.req, q.pool)
			if len(rk.Order) == 0 {
				t.Fatalf("%s: an empty pool", q.id)
			}
			typed := confidenceFeatures(&q.req, rk, q.pool, rk.feats)
			second := confidenceFeatures(&q.req, rk, q.confPool, rk.feats)
			if os.Getenv("CONF_VEC") == "typed" { // the side file's similarities round to 1e-7; topZ divides by the pool's spread
				for _, k := range features {
					if math.Abs(typed[k]-second[k]) > 1e-4*max(1, math.Abs(typed[k])) {
						t.Fatalf("%s: the typed variant's %s is %g, the dump's %g", q.id, confNames[k], second[k], typed[k])
					}
				}
			}
			ok := q.gold[rk.Order[0]]
			to := wrong
			if ok {
				to = right
			}
			for _, k := range features {
				to[k] = [2][]float64{append(to[k][0], typed[k]), append(to[k][1], second[k])}
			}
			if top := rankQuery(&m, q).conf; ok {
				confRight = append(confRight, top)
			} else {
				confWrong = append(confWrong, top)
			}
		}
		fmt.Printf("%s (%d right, %d wrong first results), AUC typed / %s:\n", os.Getenv(env), len(right[cTopSemantic][0]), len(wrong[cTopSemantic][0]), os.Getenv("CONF_VEC"))
		for _, k := range features {
			fmt.Printf("  %-12s %.3f / %.3f\n", confNames[k], relevance.AUC(right[k][0], wrong[k][0]), relevance.AUC(right[k][1], wrong[k][1]))
		}
		fmt.Printf("  served confidence with the second vector's features (not refitted) %.3f\n", relevance.AUC(confRight, confWrong))
	}
}
