package score

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
)

// What TestLaterEvidence measures: a hub signal applied only to whether
// and where a later result (place 2 on) is shown, so that the first result
// (Recall@1) cannot move, from evidence the index has without traffic: the
// kind of evidence a later result has (none of the request's words in its
// text), its length, where its vector sits among the index's documents
// (TestHubnessDump's measures and nearest lists), and, for comparison,
// its share of the answers to a sample of requests (traffic).

// laterVariant is one family of later-result rules: the rule at weight a
// in world (0 the set alone, 1 with the distractors), or, with near (the
// documents' nearest lists by world), a reordering of the page by
// neighbourhood instead, a read as n.k: a result among the n nearest of k
// earlier results goes behind the rest (crowdNeighbours).
type laterVariant struct {
	name    string
	weights []float64
	rule    func(a float64, world int) *laterRule
	near    [2]map[string][]string
}

// page is q's first page under m with the cut-off cut and the variant at
// weight a.
func (v *laterVariant) page(m *Model, q *fitQuery, cut int, a float64, world int) []int {
	if v.near[world] != nil {
		n := int(a)
		return crowdNeighbours(q, shown(m, q, cut, nil), v.near[world], n, int(math.Round(10*(a-float64(n)))))
	}
	kept := shown(m, q, cut, v.rule(a, world))
	return kept[:min(10, len(kept))]
}

// crowdNeighbours moves each result that neighbours k results already in
// front (one is among the n nearest documents, near, of the other) behind
// the results that do not, as Model.Crowd moves a provider's extra
// results, and returns the first 10. n 0 keeps the order.
func crowdNeighbours(q *fitQuery, kept []int, near map[string][]string, n, k int) []int {
	if n == 0 {
		return kept[:min(10, len(kept))]
	}
	neighbours := func(a, b string) bool {
		return slices.Contains(near[a][:min(n, len(near[a]))], b) || slices.Contains(near[b][:min(n, len(near[b]))], a)
	}
	var front, behind []int
	for _, i := range kept {
		touching := 0
		for _, f := range front {
			touching += int(b2f(neighbours(q.ids[f], q.ids[i])))
		}
		if len(front) > 0 && touching >= k {
			behind = append(behind, i)
			continue
		}
		front = append(front, i)
	}
	out := append(front, behind...)
	return out[:min(10, len(out))]
}

// docMeasure is a per-document measure of one world, less its mean over
// the world's documents.
type docMeasure map[string]float64

// centred subtracts m's mean from each of its values, after tf.
func centred(m docMeasure, tf func(float64) float64) docMeasure {
	var mean float64
	for id, v := range m {
		m[id] = tf(v)
		mean += m[id]
	}
	mean /= float64(max(1, len(m)))
	for id := range m {
		m[id] -= mean
	}
	return m
}

// kOccurrence is log(1 + how many documents of world list each document
// among their k nearest) in the hub dump, centred: how often a document
// is a near neighbour of the index's own documents.
func kOccurrence(d *hubDump, world string, k int) docMeasure {
	out := docMeasure{}
	for id, near := range d.Nearest[world] {
		out[id] += 0
		for _, n := range near[:min(k, len(near))] {
			out[n]++
		}
	}
	return centred(out, math.Log1p)
}

// hubMeasure is the hub dump's measure f of world's documents, centred.
func hubMeasure(d *hubDump, world, f string) docMeasure {
	out := docMeasure{}
	for id, m := range d.Hubness[world] {
		out[id] = m[f]
	}
	return centred(out, func(v float64) float64 { return v })
}

// answerShares is each document's share of the default answers (served
// model) to the requests of kind in qs.
func answerShares(qs []fitQuery, kind string) docMeasure {
	m := Default
	out, n := docMeasure{}, 0
	for i := range qs {
		q := &qs[i]
		if q.kind != kind {
			continue
		}
		n++
		for _, j := range answer(&m, q, m.MinScore) {
			out[q.ids[j]]++
		}
	}
	for id := range out {
		out[id] /= float64(max(n, 1))
	}
	return out
}

// semanticOnly reports whether candidate i's text (its name's included)
// holds none of the request's words.
func semanticOnly(rk *Ranking, i int) bool { return rk.feats[i][rTextCover] == 0 }

// penaltyOf is the later rule taking a times f from a later result's
// utility.
func penaltyOf(a float64, f func(q *fitQuery, rk *Ranking, i int) float64) *laterRule {
	return &laterRule{penalty: func(q *fitQuery, rk *Ranking, i int) float64 { return a * f(q, rk, i) }}
}

// measured is the penalty family of a per-document measure (its positive
// part), one per world.
func measured(name string, weights []float64, m [2]docMeasure) laterVariant {
	return laterVariant{name: name, weights: weights, rule: func(a float64, world int) *laterRule {
		return penaltyOf(a, func(q *fitQuery, _ *Ranking, i int) float64 { return math.Max(0, m[world][q.ids[i]]) })
	}}
}

// laterVariants lists the families TestLaterEvidence compares, over the
// set alone (qs) and with the distractors (dq); hubs (TestHubnessDump's)
// adds the neighbourhood measures.
func laterVariants(qs, dq []fitQuery, hubs *hubDump) []laterVariant {
	small := []float64{0, 0.02, 0.05, 0.1, 0.2}
	vs := []laterVariant{
		{name: "semantic only: utility less a", weights: small, rule: func(a float64, _ int) *laterRule {
			return penaltyOf(a, func(_ *fitQuery, rk *Ranking, i int) float64 { return b2f(semanticOnly(rk, i)) })
		}},
		{name: "keyword score 0: utility less a", weights: small, rule: func(a float64, _ int) *laterRule {
			return penaltyOf(a, func(q *fitQuery, _ *Ranking, i int) float64 { return b2f(q.pool[i].Keyword == 0) })
		}},
		{name: "semantic only: share of the best + a", weights: []float64{0, 0.05, 0.1, 0.15, 0.2, 0.3}, rule: func(a float64, _ int) *laterRule {
			return &laterRule{share: func(_ *fitQuery, rk *Ranking, i int) float64 { return a * b2f(semanticOnly(rk, i)) }}
		}},
		{name: "longer than the pool's mean: a x log(words/mean)", weights: small, rule: func(a float64, _ int) *laterRule {
			return penaltyOf(a, func(q *fitQuery, rk *Ranking, i int) float64 {
				return math.Max(0, math.Log(float64(wordsOf(&q.pool[i]).count())/rk.meanWords))
			})
		}},
		{name: "longer than 20 words: a x log(words/20)", weights: small, rule: func(a float64, _ int) *laterRule {
			return penaltyOf(a, func(q *fitQuery, _ *Ranking, i int) float64 {
				return math.Max(0, math.Log(float64(wordsOf(&q.pool[i]).count())/20))
			})
		}},
	}
	traffic := []float64{0, 0.1, 0.2, 0.4, 0.8}
	for _, kind := range []string{"terse", "negative", "dev"} {
		vs = append(vs, measured("share of the answers to the "+kind+" requests", traffic, [2]docMeasure{answerShares(qs, kind), answerShares(dq, kind)}))
	}
	if hubs == nil {
		return vs
	}
	for _, k := range []int{5, 10, 20} {
		vs = append(vs, measured(fmt.Sprintf("k-occurrence among the documents' %d nearest", k), small,
			[2]docMeasure{kOccurrence(hubs, "set", k), kOccurrence(hubs, "all", k)}))
	}
	for _, f := range []string{"k10", "centre", "talk", "talk5"} {
		vs = append(vs, measured("hub measure "+f, []float64{0, 0.05, 0.1, 0.2, 0.4}, [2]docMeasure{hubMeasure(hubs, "set", f), hubMeasure(hubs, "all", f)}))
	}
	vs = append(vs, laterVariant{name: "behind k neighbours among the n nearest (a = n.k)", weights: []float64{0, 3.1, 3.2, 3.3, 5.1, 5.2, 5.3, 10.1, 10.2, 10.3, 20.1, 20.2, 20.3},
		near: [2]map[string][]string{hubs.Nearest["set"], hubs.Nearest["all"]}})
	return vs
}

// TestLaterEvidence measures later-result rules from evidence the index
// has (laterVariants) on TestRelevanceDump's dumps, with the served model:
// in sample for every weight and share of the best (LATER_WITHIN; make
// eval's figures for a rule), and cross-validated by request (the weight
// and share chosen on the set alone's training folds: the largest
// Recall@10 with precision@5 at least 0.30). It checks what the rules
// promise: at weight 0 every page is the served one, and no rule moves a
// first result. LATER_VARIANT keeps the families whose name holds it.
//
//	AGENTFINDER_SCORE_DUMP=/tmp/rel.json AGENTFINDER_SCORE_DUMP_DISTRACTORS=/tmp/reld.json \
//	  AGENTFINDER_SCORE_HUBS=/tmp/hubs.json LATER_WITHIN=0.1,0.15,0.2 \
//	  go test -count=1 -run TestLaterEvidence -v ./searchapi/score
func TestLaterEvidence(t *testing.T) {
	path, dpath := os.Getenv("AGENTFINDER_SCORE_DUMP"), os.Getenv("AGENTFINDER_SCORE_DUMP_DISTRACTORS")
	if path == "" || dpath == "" {
		t.Skip("set AGENTFINDER_SCORE_DUMP and AGENTFINDER_SCORE_DUMP_DISTRACTORS to TestRelevanceDump's dumps")
	}
	worlds := [2][]fitQuery{loadFit(t, path, "hybrid", 30, 5), loadFit(t, dpath, "hybrid", 30, 5)}
	withins := envFloats("LATER_WITHIN", Default.Within)
	for _, v := range laterVariants(worlds[0], worlds[1], loadHubs(t)) {
		if only := os.Getenv("LATER_VARIANT"); only != "" && !strings.Contains(v.name, only) {
			continue
		}
		checkLater(t, &v, worlds)
		for _, a := range v.weights {
			for _, w := range withins {
				m := Default
				m.Within = w
				var set, dis, dis0 answers
				for k := range 5 {
					set.add2(&v, &m, worlds[0], 0, k, m.MinScore, a)
					dis.add2(&v, &m, worlds[1], 1, k, m.MinScore, a)
					dis0.add2(&v, &m, worlds[1], 1, k, 0, a)
				}
				fmt.Printf("%s, a %g, within %.2f, in sample\n   set alone: %v\n   distractors: %v | minScore 0: %v\n   hubs with distractors: %s\n",
					v.name, a, w, &set, &dis, &dis0, topHubs(&dis, 5))
			}
		}
		crossValidateLater(&v, worlds, withins)
	}
}

// add2 answers the dev requests of fold k of qs (world) under m and the
// variant at weight a.
func (a *answers) add2(v *laterVariant, m *Model, qs []fitQuery, world, k, cut int, w float64) {
	for i := range qs {
		if q := &qs[i]; q.kind == "dev" && q.fold == k {
			a.add(q, v.page(m, q, cut, w, world))
		}
	}
}

// checkLater fails when v at weight 0 changes a served page or, at any
// weight, a first result.
func checkLater(t *testing.T, v *laterVariant, worlds [2][]fitQuery) {
	t.Helper()
	m := Default
	for world, qs := range worlds {
		for i := range qs {
			q := &qs[i]
			if q.kind != "dev" {
				continue
			}
			served := answer(&m, q, m.MinScore)
			if got := v.page(&m, q, m.MinScore, 0, world); !slices.Equal(got, served) {
				t.Errorf("%s at weight 0, %s: page %v, served %v", v.name, q.id, got, served)
			}
			for _, a := range v.weights {
				if got := v.page(&m, q, m.MinScore, a, world); len(served) > 0 && (len(got) == 0 || got[0] != served[0]) {
					t.Errorf("%s at weight %g, %s: first result %v, served %d", v.name, a, q.id, got, served[0])
				}
			}
		}
	}
}

// crossValidateLater answers each fold's held-out dev requests with the
// weight and share of the best chosen on the set alone's other folds.
func crossValidateLater(v *laterVariant, worlds [2][]fitQuery, withins []float64) {
	var set, dis, dis0 answers
	var picks []string
	for k := range 5 {
		bestA, bestW, bestR10 := 0.0, Default.Within, -1.0
		for _, a := range v.weights {
			for _, w := range withins {
				m := Default
				m.Within = w
				var train answers
				for f := range 5 {
					if f != k {
						train.add2(v, &m, worlds[0], 0, f, m.MinScore, a)
					}
				}
				if n := float64(train.n); train.p5/n >= 0.30 && train.r10/n > bestR10+1e-9 {
					bestA, bestW, bestR10 = a, w, train.r10/n
				}
			}
		}
		picks = append(picks, fmt.Sprintf("a %g within %.2f", bestA, bestW))
		m := Default
		m.Within = bestW
		set.add2(v, &m, worlds[0], 0, k, m.MinScore, bestA)
		dis.add2(v, &m, worlds[1], 1, k, m.MinScore, bestA)
		dis0.add2(v, &m, worlds[1], 1, k, 0, bestA)
	}
	fmt.Printf("%s, chosen on training folds (%s)\n   set alone: %v\n   distractors: %v | minScore 0: %v\n",
		v.name, strings.Join(picks, "; "), &set, &dis, &dis0)
}

// topHubs names the n documents in the most answers of a, with their
// counts.
func topHubs(a *answers, n int) string {
	ids := make([]string, 0, len(a.in))
	for id := range a.in {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(x, y int) bool {
		if a.in[ids[x]] != a.in[ids[y]] {
			return a.in[ids[x]] > a.in[ids[y]]
		}
		return ids[x] < ids[y]
	})
	var b strings.Builder
	for k, id := range ids[:min(n, len(ids))] {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", short(id), a.in[id])
	}
	return b.String()
}
