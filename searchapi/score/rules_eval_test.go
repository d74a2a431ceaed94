package score

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"testing"
)

// What a later result's score could be, compared by TestRuleFrontier:
// each alternative scores every candidate of a ranked request (the first
// keeps the confidence model's score), the results follow the scores, and
// a rule with a parameter grid decides which of the first 10 are shown.

// Features of a candidate that alternatives to the ranker's utility read.
const (
	xUtility   = iota // the ranker's utility
	xSemantic         // the semantic similarity
	xSemZ             // the semantic similarity against the pool's (z-score)
	xNameCover        // how much of the request the name covers
	xTextCover        // how much of the request the text covers (length-normalised)
	xKeyword          // the keyword side's score
	xLength           // log(1 + the number of words of the entry)
	xFused            // log(1 + its place in the fused ranking)
	numX
)

// view is one dev request ranked by a fold's model.
type view struct {
	q     *fitQuery
	rk    *Ranking
	x     [][numX]float64
	world int // 0 the set alone, 1 with the distractors
}

func views(m *Model, qs []fitQuery, world int, keep func(*fitQuery) bool) []view {
	var out []view
	for i := range qs {
		q := &qs[i]
		if q.kind != "dev" || !keep(q) {
			continue
		}
		rk := m.Rank(&q.req, q.pool)
		v := view{q: q, rk: rk, world: world}
		var sum, sq float64
		for _, c := range q.pool {
			sum += c.Semantic
			sq += c.Semantic * c.Semantic
		}
		n := float64(len(q.pool))
		mean, sd := sum/n, math.Sqrt(math.Max(0, sq/n-sum*sum/n/n))
		for i, c := range q.pool {
			var x [numX]float64
			x[xUtility], x[xSemantic] = rk.later[i], c.Semantic
			if sd > 0 {
				x[xSemZ] = (c.Semantic - mean) / sd
			}
			x[xNameCover], x[xTextCover] = rk.feats[i][rNameCover], rk.feats[i][rTextCover]
			x[xKeyword] = c.Keyword
			x[xLength] = math.Log1p(float64(wordsOf(&q.pool[i]).count()))
			x[xFused] = math.Log1p(float64(i))
			v.x = append(v.x, x)
		}
		out = append(out, v)
	}
	return out
}

// decayed scores v's candidates as Model.Rank does, with the later utility
// util in place of the ranker's: the first's score times
// exp(-decay·(util(first) - util)), never above it.
func (v *view) decayed(util func(i int) float64, decay float64) []float64 {
	top := v.rk.top
	s := make([]float64, len(v.x))
	for i := range s {
		s[i] = v.rk.conf * math.Exp(-decay*math.Max(0, util(top)-util(i)))
	}
	s[top] = v.rk.conf
	return s
}

// shown is the answer to v with scores s: the first 10 in score order
// (ties in the ranker's) that keep admits (k the place, best the best
// score of the 10 in percent).
func (v *view) shown(s []float64, keep func(k int, p float64, best int) bool) []int {
	order := slices.Clone(v.rk.Order)
	sort.SliceStable(order, func(a, b int) bool { return v.rk.utility[order[a]] > v.rk.utility[order[b]] })
	sort.SliceStable(order, func(a, b int) bool { return s[order[a]] > s[order[b]] })
	page := order[:min(10, len(order))]
	best := Percent(s[page[0]])
	var kept []int
	for k, i := range page {
		if keep(k, s[i], best) {
			kept = append(kept, i)
		}
	}
	return kept
}

// alternative is one way to score later results: fit reads the training
// requests and returns, for each point of its grid, how to answer a
// request.
type alternative struct {
	name string
	fit  func(train, trainD []view) []setting
}

type setting struct {
	label  string
	answer func(v *view) []int
}

// shareRule is Keep: the cut-off, and a share of the best growing from
// within at a best of 0 to all of it at 100.
func shareRule(within float64, cut int) func(int, float64, int) bool {
	m := Model{Within: within}
	return func(_ int, p float64, best int) bool { return m.Keep(Percent(p), best, cut) }
}

// decayGrid is the settings of a later utility: every decay and Within.
func decayGrid(prefix string, util func(v *view) func(i int) float64, cut int) []setting {
	var out []setting
	for _, d := range []float64{0.1, 0.2, 0.3, 0.5, 1, 1.5, 2, 3, 4} {
		for _, w := range []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9} {
			out = append(out, setting{fmt.Sprintf("%sdecay %.1f within %.1f", prefix, d, w), func(v *view) []int {
				return v.shown(v.decayed(util(v), d), shareRule(w, cut))
			}})
		}
	}
	return out
}

func alternatives(cut int) []alternative {
	utility := func(v *view) func(int) float64 { return func(i int) float64 { return v.x[i][xUtility] } }
	return []alternative{
		{"ranker's utility (served)", func(_, _ []view) []setting { return decayGrid("", utility, cut) }},
		{"utility - g·log(1+fused place)", func(_, _ []view) []setting {
			var out []setting
			for _, g := range []float64{0.02, 0.05, 0.1} {
				out = append(out, decayGrid(fmt.Sprintf("g %.2f ", g), func(v *view) func(int) float64 {
					return func(i int) float64 { return v.x[i][xUtility] - g*v.x[i][xFused] }
				}, cut)...)
			}
			return out
		}},
		{"conditional logit over the features", func(train, _ []view) []setting {
			w := fitLogit(train)
			return decayGrid("", func(v *view) func(int) float64 {
				return func(i int) float64 { return dot(w, v.x[i][:]) }
			}, cut)
		}},
		{"utility - b·(share of training top 10s)", func(train, trainD []view) []setting {
			// Each world's shares from its own training requests.
			var share [2]map[string]float64
			for w, vs := range [][]view{train, trainD} {
				share[w] = map[string]float64{}
				for _, v := range vs {
					for _, i := range v.rk.Order[:min(10, len(v.rk.Order))] {
						share[w][v.q.ids[i]] += 1 / float64(len(vs))
					}
				}
			}
			var out []setting
			for _, b := range []float64{0.1, 0.2, 0.4} {
				out = append(out, decayGrid(fmt.Sprintf("b %.1f ", b), func(v *view) func(int) float64 {
					return func(i int) float64 { return v.x[i][xUtility] - b*share[v.world][v.q.ids[i]] }
				}, cut)...)
			}
			return out
		}},
		{"calibrated chance (logistic), >= a·best", func(train, _ []view) []setting {
			w := fitChance(train)
			var out []setting
			for _, a := range []float64{0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3} {
				out = append(out, setting{fmt.Sprintf("a %.2f", a), func(v *view) []int {
					s := make([]float64, len(v.x))
					for i := range s {
						x := chanceRow(v, i)
						s[i] = math.Min(v.rk.conf, sigmoid(dot(w, x[:])))
					}
					s[v.rk.top] = v.rk.conf
					return v.shown(s, func(k int, p float64, best int) bool {
						return best >= cut && (k == 0 || p >= a*float64(best)/100)
					})
				}})
			}
			return out
		}},
	}
}

// fitLogit fits a conditional logit over the pool of each training
// request whose gold is in it: the chance that candidate i is the gold one
// is exp(w·x_i) / sum_j exp(w·x_j). It returns w on the ranker's utility's
// scale (its utility weight 1), so that a decay means the same.
func fitLogit(train []view) []float64 {
	w := newton(numX, func(w []float64) ([]float64, [][]float64) {
		g := make([]float64, numX)
		h := make([][]float64, numX)
		for a := range h {
			h[a] = make([]float64, numX)
			h[a][a], g[a] = 1, w[a]
		}
		for _, v := range train {
			gold := slices.Index(v.q.gold, true)
			if gold < 0 {
				continue
			}
			p := make([]float64, len(v.x))
			mx := math.Inf(-1)
			for i, x := range v.x {
				p[i] = dot(w, x[:])
				mx = math.Max(mx, p[i])
			}
			var z float64
			for i := range p {
				p[i] = math.Exp(p[i] - mx)
				z += p[i]
			}
			var mean [numX]float64
			for i, x := range v.x {
				p[i] /= z
				for a := range numX {
					mean[a] += p[i] * x[a]
				}
			}
			for a := range numX {
				g[a] += mean[a] - v.x[gold][a]
			}
			for i, x := range v.x {
				for a := range numX {
					for b := range numX {
						h[a][b] += p[i] * (x[a] - mean[a]) * (x[b] - mean[b])
					}
				}
			}
		}
		return g, h
	})
	if w[xUtility] > 0 {
		k := w[xUtility]
		for a := range w {
			w[a] /= k
		}
	}
	return w
}

// chanceRow is a candidate's row for the calibrated chance: a bias, the
// first's log-odds, the utility gap below the first, and its features.
func chanceRow(v *view, i int) [numX + 3]float64 {
	var x [numX + 3]float64
	copy(x[:], v.x[i][:])
	p := math.Max(1e-4, math.Min(1-1e-4, v.rk.conf))
	x[numX], x[numX+1], x[numX+2] = 1, math.Log(p/(1-p)), v.rk.utility[v.rk.top]-v.rk.utility[i]
	return x
}

// fitChance fits the logistic model of "this candidate, not the first, is
// the gold one" over every later candidate of the training requests.
func fitChance(train []view) []float64 {
	const n = numX + 3
	var xs [][n]float64
	var ys []float64
	for _, v := range train {
		for i := range v.x {
			if i != v.rk.top {
				xs = append(xs, chanceRow(&v, i))
				ys = append(ys, b2f(v.q.gold[i]))
			}
		}
	}
	return newton(n, func(w []float64) ([]float64, [][]float64) {
		g := make([]float64, n)
		h := make([][]float64, n)
		for a := range h {
			h[a] = make([]float64, n)
			if a != numX {
				h[a][a], g[a] = 1, w[a]
			}
		}
		for i, x := range xs {
			p := sigmoid(dot(w, x[:]))
			for a := range n {
				g[a] += (p - ys[i]) * x[a]
				for b := range n {
					h[a][b] += p * (1 - p) * x[a] * x[b]
				}
			}
		}
		return g, h
	})
}

// TestRuleFrontier compares ways to score later results, by 5-fold
// cross-validation by request: for each fold the model is fitted on the
// set alone's other folds (as TestFit fits it), each alternative is fitted
// on them too, its grid point is the one with the largest Recall@10 at
// precision@5 at least FIT_P5 (0.30) on them, and the held-out dev
// requests are answered with it in the set alone and in the set with the
// realworld distractors (never fitted on; the hub share alternative
// counts each world's training requests). It also prints, per
// alternative, the held-out figures of the grid point that would have
// been best in hindsight (an upper bound, not a choice).
//
//	AGENTFINDER_SCORE_DUMP=/tmp/rel.json AGENTFINDER_SCORE_DUMP_DISTRACTORS=/tmp/reld.json \
//	  go test -count=1 -run TestRuleFrontier -v ./searchapi/score
func TestRuleFrontier(t *testing.T) {
	path, dpath := os.Getenv("AGENTFINDER_SCORE_DUMP"), os.Getenv("AGENTFINDER_SCORE_DUMP_DISTRACTORS")
	if path == "" || dpath == "" {
		t.Skip("set AGENTFINDER_SCORE_DUMP and AGENTFINDER_SCORE_DUMP_DISTRACTORS to TestRelevanceDump's dumps")
	}
	const folds = 5
	pool := envInt("FIT_POOL", 30)
	lambda := envFloat("FIT_LAMBDA", 0.01)
	lengthNorm := envFloat("FIT_LENGTH_NORM", Default.LengthNorm)
	cut := envInt("FIT_CUT", Default.MinScore)
	minP5 := envFloat("FIT_P5", 0.30)
	mode := envOr("FIT_MODE", "hybrid")
	qs := loadFit(t, path, mode, pool, folds)
	dq := loadFit(t, dpath, mode, pool, folds)
	alts := alternatives(cut)
	chosen := make([][2]answers, len(alts))
	hindsight := make([]map[string]*[2]answers, len(alts))
	for k := range folds {
		train := func(q *fitQuery) bool { return q.fold != k }
		held := func(q *fitQuery) bool { return q.fold == k }
		m := fit(qs, train, lambda, Default.Decay, lengthNorm, mode)
		tr, trD := views(&m, qs, 0, train), views(&m, dq, 1, train)
		hs, hd := views(&m, qs, 0, held), views(&m, dq, 1, held)
		for a, alt := range alts {
			if hindsight[a] == nil {
				hindsight[a] = map[string]*[2]answers{}
			}
			best, bestR10 := -1, -1.0
			settings := alt.fit(tr, trD)
			for s, st := range settings {
				var on answers
				for i := range tr {
					on.add(tr[i].q, st.answer(&tr[i]))
				}
				if n := float64(on.n); on.p5/n >= minP5 && on.r10/n > bestR10 {
					best, bestR10 = s, on.r10/n
				}
				h := hindsight[a][st.label]
				if h == nil {
					h = &[2]answers{}
					hindsight[a][st.label] = h
				}
				for i := range hs {
					h[0].add(hs[i].q, st.answer(&hs[i]))
				}
				for i := range hd {
					h[1].add(hd[i].q, st.answer(&hd[i]))
				}
			}
			if best < 0 {
				continue
			}
			st := settings[best]
			for i := range hs {
				chosen[a][0].add(hs[i].q, st.answer(&hs[i]))
			}
			for i := range hd {
				chosen[a][1].add(hd[i].q, st.answer(&hd[i]))
			}
			fmt.Printf("fold %d %-42s chose %s\n", k, alt.name, st.label)
		}
	}
	for a, alt := range alts {
		fmt.Printf("rule frontier %-42s set alone %v || with distractors %v\n", alt.name, &chosen[a][0], &chosen[a][1])
		label, r10 := "", -1.0
		for l, h := range hindsight[a] {
			if n := float64(h[0].n); h[0].p5/n >= minP5 && (h[0].r10/n > r10 || (h[0].r10/n == r10 && l < label)) {
				label, r10 = l, h[0].r10/n
			}
		}
		if h := hindsight[a][label]; h != nil {
			fmt.Printf("   in hindsight %-38s set alone %v || with distractors %v\n", label, &h[0], &h[1])
		}
	}
}
