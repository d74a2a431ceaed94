package score

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/fixtures/relevance"
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
// cut-off cut (0: every result): the results of m's order that Keep
// admits, crowded by provider (Model.Crowd), the first 10.
func answer(m *Model, q *fitQuery, cut int) []int {
	kept := shown(m, q, cut, nil)
	return kept[:min(10, len(kept))]
}

// laterRule is a change to how later results are scored or shown that
// TestLaterEvidence measures (nil: as served). The first result (the
// ranker's best) is never touched.
type laterRule struct {
	// penalty, when set, is taken from later result i's utility before its
	// score and order (Model.Rank's later utility).
	penalty func(q *fitQuery, rk *Ranking, i int) float64
	// share, when set, is added to the share of the best (Model.Share) a
	// later result i needs to be shown, capped at 1.
	share func(q *fitQuery, rk *Ranking, i int) float64
}

// shown is every result POST /search shows for q under m with the cut-off
// cut, in its order (answer's, not cut to a page), with the later results
// changed by lr.
func shown(m *Model, q *fitQuery, cut int, lr *laterRule) []int {
	rk := rankQuery(m, q)
	if lr != nil && lr.penalty != nil {
		lr.penalise(m, q, rk)
	}
	best := -1
	for _, i := range rk.Order[:min(10, len(rk.Order))] {
		best = max(best, Percent(rk.Scores[i]))
	}
	var kept []int
	for _, i := range rk.Order {
		pct := Percent(rk.Scores[i])
		ok := m.Keep(pct, best, cut)
		if ok && cut > 0 && lr != nil && lr.share != nil && i != rk.top {
			ok = float64(pct) >= math.Min(1, m.Share(best)+lr.share(q, rk, i))*float64(best)
		}
		if ok {
			kept = append(kept, i)
		}
	}
	if m.Crowding > 0 && len(q.providers) == len(q.pool) {
		providers, all := make([]string, len(kept)), make([]bool, len(kept))
		for j, i := range kept {
			providers[j], all[j] = q.providers[i], true
		}
		crowded := make([]int, len(kept))
		for to, from := range m.Crowd(providers, all) {
			crowded[to] = kept[from]
		}
		kept = crowded
	}
	return kept
}

// penalise takes lr's penalty from every later result's utility in rk and
// scores and orders them again as Model.Rank does; the first keeps its
// utility, so it stays first.
func (lr *laterRule) penalise(m *Model, q *fitQuery, rk *Ranking) {
	if len(rk.Order) == 0 {
		return
	}
	for i := range rk.later {
		if i != rk.top {
			rk.later[i] -= lr.penalty(q, rk, i)
			rk.Scores[i] = m.scoreAt(rk, rk.later[i])
		}
	}
	sort.SliceStable(rk.Order, func(a, b int) bool { return rk.later[rk.Order[a]] > rk.later[rk.Order[b]] })
}

// TestFitWorlds cross-validates a model setting by request in both of make
// eval's worlds: for each of 5 folds the model is fitted (as TestFit fits
// it) on the set alone's other folds, and the held-out dev requests are
// answered as POST /search answers them, in the set alone and in the set
// with the realworld distractors (the dump TestRelevanceDump writes with
// AGENTFINDER_DUMP_DISTRACTORS=1, named by
// AGENTFINDER_SCORE_DUMP_DISTRACTORS; never fitted on), with the default
// cut-off rule and with minScore 0. FIT_LENGTH_NORM, FIT_AGREEMENT,
// FIT_WITHIN and FIT_DECAYS list the length normalisations, agreement
// weights, shares of the best (Within) and decays to compare; for each
// length normalisation it also answers each fold with the setting that did
// best on its training folds (the largest Recall@10 with precision@5 at
// least FIT_P5, 0.30, on the set alone). With AGENTFINDER_SCORE_HUBS
// (searchapi/search's TestHubnessDump) it compares a document-side hub
// correction instead: FIT_HUB_FEATURE names the dump's measure (k5, k10,
// k20, centre, talk, talk5), FIT_HUB_LAMBDA the weights. FIT_INSAMPLE
// "served" also answers every dev request of both worlds with the served
// model (Default) under each rule setting, which gives make eval's figures
// for a rule without a run; "all" does the same with the model fitted on
// every request (as TestFit fits Default). FIT_RANKER holds the ranker's
// weights instead of fitting them (fit). FIT_CROWD lists the crowdings
// (Model.Crowding) to compare, FIT_PROVIDER names what counts as a
// document's provider (providerOf; "served" unless set), and
// FIT_PROVIDER_WEIGHT lowers each hit's semantic similarity by that weight
// times the log of its provider's document count (weighProviders) before
// the pool is drawn. FIT_OMIT and
// FIT_IMPUTE change the fit and the dumps' reading as for TestFit
// (omitted, imputeSemantic). Each line also gives each world's first-result
// AUC, the answers that keep the whole pool and the off-catalog requests
// left empty (firsts); CONF_VEC reads the confidence's semantic features
// from a second request vector (confvector_eval_test.go).
//
//	AGENTFINDER_SCORE_DUMP=/tmp/rel.json AGENTFINDER_SCORE_DUMP_DISTRACTORS=/tmp/reld.json \
//	  FIT_LAMBDA=0.01 go test -count=1 -run TestFitWorlds -v ./searchapi/score
func TestFitWorlds(t *testing.T) {
	path, dpath := os.Getenv("AGENTFINDER_SCORE_DUMP"), os.Getenv("AGENTFINDER_SCORE_DUMP_DISTRACTORS")
	if path == "" || dpath == "" {
		t.Skip("set AGENTFINDER_SCORE_DUMP and AGENTFINDER_SCORE_DUMP_DISTRACTORS to TestRelevanceDump's dumps")
	}
	const folds = 5
	pool := envInt("FIT_POOL", 30)
	mode := envOr("FIT_MODE", "hybrid")
	qs := loadFit(t, path, mode, pool, folds)
	dq := loadFit(t, dpath, mode, pool, folds)
	norms := []float64{0, 0.5}
	if s := os.Getenv("FIT_LENGTH_NORM"); s != "" {
		norms = splitFloats(s)
	}
	g := worldsGrid{
		lambda: envFloat("FIT_LAMBDA", 0.01),
		cut:    envInt("FIT_CUT", Default.MinScore),
		minP5:  envFloat("FIT_P5", 0.30),
		mode:   mode,
	}
	for _, a := range envFloats("FIT_AGREEMENT", Default.Agreement) {
		for _, w := range envFloats("FIT_WITHIN", Default.Within) {
			for _, d := range envFloats("FIT_DECAYS", envFloat("FIT_DECAY", Default.Decay)) {
				for _, c := range envFloats("FIT_CROWD", float64(Default.Crowding)) {
					g.rules = append(g.rules, ruleSetting{a, w, d, int(c)})
				}
			}
		}
	}
	if hubs := loadHubs(t); hubs != nil {
		// A document-side hub correction (hubs_eval_test.go): FIT_HUB_FEATURE
		// names the dump's measure, FIT_HUB_LAMBDA the weights to compare.
		feature := envOr("FIT_HUB_FEATURE", "k10")
		for _, l := range splitFloats(envOr("FIT_HUB_LAMBDA", "0,0.1,0.2")) {
			fmt.Printf("hub correction %s λ %.2f\n", feature, l)
			g.fitWorlds(withHubCorrection(qs, hubs, "set", feature, l), withHubCorrection(dq, hubs, "all", feature, l), norms)
		}
		return
	}
	g.fitWorlds(qs, dq, norms)
}

// ruleSetting is a setting of the later results' rule TestFitWorlds
// compares; crowd is how many results of one provider may come before
// other providers' (Model.Crowding; 0: no crowding).
type ruleSetting struct {
	agreement, within, decay float64
	crowd                    int
}

// worldsGrid is what TestFitWorlds compares: the fit's penalty, the
// cut-off, the rule settings and the least precision@5 a chosen one needs.
type worldsGrid struct {
	lambda float64
	cut    int
	minP5  float64
	mode   string
	rules  []ruleSetting
}

// fitWorlds is TestFitWorlds over the requests qs (the set alone) and dq
// (with the distractors), for each length normalisation of norms.
func (g *worldsGrid) fitWorlds(qs, dq []fitQuery, norms []float64) {
	const folds = 5
	for _, b := range norms {
		results := make([]worldAnswers, len(g.rules))
		var chosen worldAnswers
		for k := range folds {
			m := fit(qs, func(q *fitQuery) bool { return q.fold != k }, g.lambda, Default.Decay, b, g.mode)
			best, bestR10 := -1, -1.0
			for r, st := range g.rules {
				m.Agreement, m.Within, m.Decay, m.Crowding = st.agreement, st.within, st.decay, st.crowd
				var train answers
				for i := range qs {
					if q := &qs[i]; q.fold != k && q.kind == "dev" {
						train.add(q, answer(&m, q, g.cut))
					}
				}
				if n := float64(train.n); train.p5/n >= g.minP5 && train.r10/n > bestR10 {
					best, bestR10 = r, train.r10/n
				}
				results[r].add(&m, qs, dq, k, g.cut)
			}
			if best >= 0 && len(g.rules) > 1 {
				st := g.rules[best]
				m.Agreement, m.Within, m.Decay, m.Crowding = st.agreement, st.within, st.decay, st.crowd
				chosen.add(&m, qs, dq, k, g.cut)
				fmt.Printf("length norm %.2f fold %d: chose agreement %.2f within %.2f decay %.2f\n", b, k, st.agreement, st.within, st.decay)
			}
		}
		if how := os.Getenv("FIT_INSAMPLE"); how != "" {
			g.inSample(qs, dq, how, b)
		}
		for r, st := range g.rules {
			fmt.Printf("length norm %.2f agreement %.2f within %.2f decay %.2f crowd %d %v", b, st.agreement, st.within, st.decay, st.crowd, &results[r])
		}
		if len(g.rules) > 1 {
			fmt.Printf("length norm %.2f chosen on training folds %v", b, &chosen)
		}
	}
}

// inSample answers every dev request of qs (the set alone) and dq (with
// distractors) under each rule setting with the served model (how
// "served": KeywordOnly in keyword mode) or the model fitted on every
// request of qs at length normalisation b (how "all").
func (g *worldsGrid) inSample(qs, dq []fitQuery, how string, b float64) {
	const folds = 5
	m := Default
	if g.mode == "keyword" {
		m = KeywordOnly
	}
	if how != "served" {
		m = fit(qs, func(*fitQuery) bool { return true }, g.lambda, Default.Decay, b, g.mode)
	}
	for _, st := range g.rules {
		m.Agreement, m.Within, m.Decay, m.Crowding = st.agreement, st.within, st.decay, st.crowd
		var all worldAnswers
		for k := range folds {
			all.add(&m, qs, dq, k, g.cut)
		}
		fmt.Printf("in sample (%s) agreement %.2f within %.2f decay %.2f crowd %d %v", how, st.agreement, st.within, st.decay, st.crowd, &all)
	}
}

// worldAnswers tallies the held-out answers in both worlds, with the
// cut-off rule and with minScore 0, and how well the first result's score
// tells a right first result from a wrong one (firsts) and the off-catalog
// requests left empty at the cut-off, in each world.
type worldAnswers struct {
	set, setAll, dis, disAll answers
	setFirst, disFirst       firsts
}

// firsts holds the first results' scores of dev requests, right and wrong,
// how many dev answers keep every candidate of the pool (all), and how many
// off-catalog requests were answered and left empty.
type firsts struct {
	right, wrong  []float64
	all           int
	off, offEmpty int
}

// add tallies q's answer under m at the cut-off cut.
func (f *firsts) add(m *Model, q *fitQuery, cut int) {
	switch q.kind {
	case "dev":
		rk := rankQuery(m, q)
		if len(rk.Order) == 0 {
			f.wrong = append(f.wrong, 0)
		} else if top := float64(Percent(rk.Scores[rk.Order[0]])); q.gold[rk.Order[0]] {
			f.right = append(f.right, top)
		} else {
			f.wrong = append(f.wrong, top)
		}
		if len(shown(m, q, cut, nil)) == len(q.pool) {
			f.all++
		}
	case "offcatalog":
		f.off++
		if len(answer(m, q, cut)) == 0 {
			f.offEmpty++
		}
	}
}

func (f *firsts) String() string {
	return fmt.Sprintf("first-result AUC %.3f, answers keeping the whole pool %d, off-catalog empty %d of %d",
		relevance.AUC(f.right, f.wrong), f.all, f.offEmpty, f.off)
}

// add answers the dev requests of fold k of qs (the set alone) and dq (with
// distractors) under m.
func (w *worldAnswers) add(m *Model, qs, dq []fitQuery, k, cut int) {
	for _, world := range []struct {
		qs        []fitQuery
		def, zero *answers
		first     *firsts
	}{{qs, &w.set, &w.setAll, &w.setFirst}, {dq, &w.dis, &w.disAll, &w.disFirst}} {
		for i := range world.qs {
			q := &world.qs[i]
			if q.fold != k {
				continue
			}
			world.first.add(m, q, cut)
			if q.kind == "dev" {
				world.def.add(q, answer(m, q, cut))
				world.zero.add(q, answer(m, q, 0))
			}
		}
	}
}

func (w *worldAnswers) String() string {
	return fmt.Sprintf("\n   set alone: %v | minScore 0: %v\n     %v\n   distractors: %v | minScore 0: %v\n     %v\n",
		&w.set, &w.setAll, &w.setFirst, &w.dis, &w.disAll, &w.disFirst)
}

// envFloats reads a comma-separated list of numbers from the environment
// variable k, def when it is unset.
func envFloats(k string, def float64) []float64 {
	if s := os.Getenv(k); s != "" {
		return splitFloats(s)
	}
	return []float64{def}
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
