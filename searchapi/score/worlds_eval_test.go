package score

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// answers tallies make eval's figures of the answers to dev requests:
// Recall@1, Recall@10, precision@5 (the share of gold among the first
// min(5, n) results, 0 for an empty answer) and how many answers each
// document is in (hubs).
type answers struct {
	n           int
	r1, r10, p5 float64
	in          map[string]int
}

// add scores one answer (pool indexes, best first) to q.
func (a *answers) add(q *fitQuery, kept []int) {
	if a.in == nil {
		a.in = map[string]int{}
	}
	a.n++
	for k, i := range kept {
		a.in[q.ids[i]]++
		if !q.gold[i] {
			continue
		}
		a.r10 += b2f(k < 10)
		a.r1 += b2f(k == 0)
		if k < 5 {
			a.p5 += 1 / float64(min(5, len(kept)))
		}
	}
}

func (a *answers) String() string {
	n := float64(max(a.n, 1))
	hub, id := 0, ""
	for d, c := range a.in {
		if c > hub || (c == hub && d < id) {
			hub, id = c, d
		}
	}
	return fmt.Sprintf("R@1 %.3f R@10 %.3f P@5 %.3f top hub %d (%.3f)", a.r1/n, a.r10/n, a.p5/n, hub, float64(hub)/n)
}

// answer is the first page POST /search returns for q under m with the
// cut-off cut (0: every result): the first 10 of m's order that Keep
// admits.
func answer(m *Model, q *fitQuery, cut int) []int {
	rk := m.Rank(&q.req, q.pool)
	page := rk.Order[:min(10, len(rk.Order))]
	best := -1
	for _, i := range page {
		best = max(best, Percent(rk.Scores[i]))
	}
	var kept []int
	for _, i := range page {
		if m.Keep(Percent(rk.Scores[i]), best, cut) {
			kept = append(kept, i)
		}
	}
	return kept
}

// TestFitWorlds cross-validates a model setting by request in both of make
// eval's worlds: for each of 5 folds the model is fitted (as TestFit fits
// it) on the set alone's other folds, and the held-out dev requests are
// answered as POST /search answers them, in the set alone and in the set
// with the realworld distractors (the dump TestRelevanceDump writes with
// AGENTFINDER_DUMP_DISTRACTORS=1, named by
// AGENTFINDER_SCORE_DUMP_DISTRACTORS; never fitted on), with the default
// cut-off rule and with minScore 0. FIT_LENGTH_NORM lists the length
// normalisations to compare. With AGENTFINDER_SCORE_HUBS (searchapi/search's
// TestHubnessDump) it compares a document-side hub correction instead:
// FIT_HUB_FEATURE names the dump's measure (k5, k10, k20, centre, talk,
// talk5), FIT_HUB_LAMBDA the weights. FIT_OMIT and FIT_IMPUTE change the
// fit and the dumps' reading as for TestFit (omitted, imputeSemantic).
//
//	AGENTFINDER_SCORE_DUMP=/tmp/rel.json AGENTFINDER_SCORE_DUMP_DISTRACTORS=/tmp/reld.json \
//	  FIT_LAMBDA=0.01 FIT_DECAY=2 go test -count=1 -run TestFitWorlds -v ./searchapi/score
func TestFitWorlds(t *testing.T) {
	path, dpath := os.Getenv("AGENTFINDER_SCORE_DUMP"), os.Getenv("AGENTFINDER_SCORE_DUMP_DISTRACTORS")
	if path == "" || dpath == "" {
		t.Skip("set AGENTFINDER_SCORE_DUMP and AGENTFINDER_SCORE_DUMP_DISTRACTORS to TestRelevanceDump's dumps")
	}
	const folds = 5
	pool := envInt("FIT_POOL", 30)
	lambda := envFloat("FIT_LAMBDA", 0.01)
	decay := envFloat("FIT_DECAY", 2)
	within := envFloat("FIT_WITHIN", Default.Within)
	cut := envInt("FIT_CUT", Default.MinScore)
	mode := envOr("FIT_MODE", "hybrid")
	qs := loadFit(t, path, mode, pool, folds)
	dq := loadFit(t, dpath, mode, pool, folds)
	norms := []float64{0, 0.5}
	if s := os.Getenv("FIT_LENGTH_NORM"); s != "" {
		norms = splitFloats(s)
	}
	if hubs := loadHubs(t); hubs != nil {
		// A document-side hub correction (hubs_eval_test.go): FIT_HUB_FEATURE
		// names the dump's measure, FIT_HUB_LAMBDA the weights to compare.
		feature := envOr("FIT_HUB_FEATURE", "k10")
		for _, l := range splitFloats(envOr("FIT_HUB_LAMBDA", "0,0.1,0.2")) {
			fmt.Printf("hub correction %s λ %.2f\n", feature, l)
			fitWorlds(withHubCorrection(qs, hubs, "set", feature, l), withHubCorrection(dq, hubs, "all", feature, l), norms, lambda, decay, within, cut, mode)
		}
		return
	}
	fitWorlds(qs, dq, norms, lambda, decay, within, cut, mode)
}

// fitWorlds is TestFitWorlds over the requests qs (the set alone) and dq
// (with the distractors), for each length normalisation of norms.
func fitWorlds(qs, dq []fitQuery, norms []float64, lambda, decay, within float64, cut int, mode string) {
	const folds = 5
	for _, b := range norms {
		var set, setAll, dis, disAll answers
		for k := range folds {
			m := fit(qs, func(q *fitQuery) bool { return q.fold != k }, lambda, decay, b, mode)
			m.Within = within
			for _, w := range []struct {
				qs        []fitQuery
				def, zero *answers
			}{{qs, &set, &setAll}, {dq, &dis, &disAll}} {
				for i := range w.qs {
					if q := &w.qs[i]; q.fold == k && q.kind == "dev" {
						w.def.add(q, answer(&m, q, cut))
						w.zero.add(q, answer(&m, q, 0))
					}
				}
			}
		}
		fmt.Printf("length norm %.2f  set alone: %v | minScore 0: %v\n", b, &set, &setAll)
		fmt.Printf("length norm %.2f  distractors: %v | minScore 0: %v\n", b, &dis, &disAll)
	}
}

// splitFloats reads a comma-separated list of numbers.
func splitFloats(s string) []float64 {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		var v float64
		if _, err := fmt.Sscan(f, &v); err == nil {
			out = append(out, v)
		}
	}
	return out
}
