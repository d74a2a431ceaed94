package score

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestServedFigures prints, for each dump named by AGENTFINDER_SCORE_DUMP
// and AGENTFINDER_SCORE_DUMP_DISTRACTORS, what the served model (Default)
// gives at its cut-off: the first result's AUC, the off-catalog requests
// and generated negatives left empty, the terse requests' Recall@1 and how
// many are kept (docs/MEASUREMENTS.md, tenth round: what a variant of the
// query vector does to the confidence).
func TestServedFigures(t *testing.T) {
	if os.Getenv("AGENTFINDER_SCORE_DUMP") == "" && os.Getenv("AGENTFINDER_SCORE_DUMP_DISTRACTORS") == "" {
		t.Skip("set AGENTFINDER_SCORE_DUMP or AGENTFINDER_SCORE_DUMP_DISTRACTORS to TestRelevanceDump's dumps")
	}
	for _, env := range []string{"AGENTFINDER_SCORE_DUMP", "AGENTFINDER_SCORE_DUMP_DISTRACTORS"} {
		path := os.Getenv(env)
		if path == "" {
			continue
		}
		qs := loadFit(t, path, "hybrid", 30, 5)
		m := Default
		e := evaluate(&m, subset(qs, func(*fitQuery) bool { return true }), m.MinScore)
		if e.nDev == 0 || e.nOff == 0 {
			t.Fatalf("%s: %d dev and %d off-catalog requests: not a dump of TestRelevanceDump", path, e.nDev, e.nOff)
		}
		fmt.Printf("%s: AUC %.3f  off-catalog empty %d of %d  negatives empty %.3f  terse R@1 %.3f kept %.3f\n",
			path, e.auc, int(e.offEmpty*float64(e.nOff)+0.5), e.nOff, e.negEmpty, e.terseR1, e.terseKept)
	}
}

// TestCompareDumps prints the dev requests whose gold place in the served
// answer (cut-off and minScore 0) differs between the dumps QVEC_A and
// QVEC_B (the same world, two query vectors).
func TestCompareDumps(t *testing.T) {
	pa, pb := os.Getenv("QVEC_A"), os.Getenv("QVEC_B")
	if pa == "" || pb == "" {
		t.Skip("set QVEC_A and QVEC_B")
	}
	a, b := loadFit(t, pa, "hybrid", 30, 5), loadFit(t, pb, "hybrid", 30, 5)
	if len(a) != len(b) {
		t.Fatalf("%s holds %d requests, %s %d: not the same world", pa, len(a), pb, len(b))
	}
	for i := range a {
		if a[i].id != b[i].id || a[i].kind != b[i].kind {
			t.Fatalf("request %d is %s (%s) in %s and %s (%s) in %s", i, a[i].id, a[i].kind, pa, b[i].id, b[i].kind, pb)
		}
	}
	m := Default
	place := func(q *fitQuery, cut int) (int, string) {
		kept := answer(&m, q, cut)
		first := ""
		if len(kept) > 0 {
			first = q.ids[kept[0]]
		}
		for k, i := range kept {
			if q.gold[i] {
				return k + 1, first
			}
		}
		return 0, first
	}
	for i := range a {
		if a[i].kind != "dev" {
			continue
		}
		for _, cut := range []int{m.MinScore, 0} {
			x, fx := place(&a[i], cut)
			y, fy := place(&b[i], cut)
			if x != y {
				fmt.Printf("cut %2d: %d -> %d (first %s -> %s) %q\n", cut, x, y, short(fx), short(fy), a[i].text)
			}
		}
	}
}

func short(id string) string {
	if k := strings.LastIndex(id, ":"); k >= 0 {
		return id[k+1:]
	}
	return id
}
