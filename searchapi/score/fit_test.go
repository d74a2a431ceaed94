package score

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/fixtures/relevance"
)

// The fit: TestFit reads the dump searchapi/search's TestRelevanceDump writes (the
// relevance set's requests as the ranking saw them), cross-validates the
// logistic model by request over k folds, fits it on every request and
// prints the coefficients to paste into defaultModel, with the figures
// make eval checks. It runs only when AGENTFINDER_SCORE_DUMP names the
// dump:
//
//	AGENTFINDER_DUMP=/tmp/rel.json AGENTFINDER_MODEL_DIR=$PWD/.cache/model \
//	  bash .ci/with-meilisearch.sh go test -count=1 -run TestRelevanceDump ./searchapi/search
//	AGENTFINDER_SCORE_DUMP=/tmp/rel.json go test -count=1 -run TestFit -v ./searchapi/score

type fitDump struct {
	Docs map[string]struct {
		Name                  string   `json:"name"`
		Description           string   `json:"description"`
		Tags                  []string `json:"tags"`
		Capabilities          []string `json:"capabilities"`
		RepresentativeQueries []string `json:"representativeQueries"`
		Publisher             string   `json:"publisher"`
		Provider              string   `json:"provider"`
		Hosts                 []string `json:"hosts"`
	} `json:"docs"`
	Queries []fitDumpQuery `json:"queries"`
}

type fitDumpQuery struct {
	ID        string   `json:"id"`
	Kind      string   `json:"kind"`
	Mode      string   `json:"mode"`
	Text      string   `json:"text"`
	Gold      []string `json:"gold"`
	Terms     []string `json:"terms"`
	TermDocs  []int    `json:"termDocs"`
	Total     int      `json:"total"`
	SmallTalk float64  `json:"smallTalk"`
	Hits      []fitHit `json:"hits"`
}

// fitHit is one fused candidate of a dumped request.
type fitHit struct {
	ID       string
	Score    float64
	Keyword  float64
	Semantic float64
}

// fitQuery is one request: its scoring request and pool, and which pool
// candidates are gold.
type fitQuery struct {
	id, kind string
	text     string
	fold     int
	req      Request
	pool     []Candidate
	ids      []string
	gold     []bool
	// providers holds each pool candidate's provider (providerOf; "" for
	// none), for the crowding (Model.Crowd).
	providers []string
	// confPool, when set, is the pool the confidence's features are read
	// from: the pool with a second vector's similarities
	// (confvector_eval_test.go).
	confPool []Candidate
}

func loadFit(t *testing.T, path, mode string, pool, folds int) []fitQuery {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d fitDump
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	out := make([]fitQuery, 0, len(d.Queries))
	key := envOr("FIT_PROVIDER", "served")
	counts := map[string]int{}
	for _, doc := range d.Docs {
		counts[providerOf(doc.Provider, doc.Hosts, doc.Name, doc.Publisher, key)]++
	}
	delete(counts, "")
	for _, q := range d.Queries {
		if q.Mode != mode {
			continue
		}
		fq := fitQuery{id: q.ID, kind: q.Kind, text: q.Text, req: Request{Docs: q.Total, SmallTalk: q.SmallTalk}}
		for i, w := range q.Terms {
			fq.req.Terms = append(fq.req.Terms, Term{Word: w, Docs: q.TermDocs[i]})
		}
		if os.Getenv("FIT_IMPUTE") == "min" {
			imputeSemantic(&q)
		}
		if w := envFloat("FIT_PROVIDER_WEIGHT", 0); w != 0 {
			weighProviders(&q, w, func(id string) int {
				doc := d.Docs[id]
				return counts[providerOf(doc.Provider, doc.Hosts, doc.Name, doc.Publisher, key)]
			})
		}
		for _, h := range q.Hits {
			fq.req.Tier = append(fq.req.Tier, Sides{Semantic: h.Semantic, Keyword: h.Keyword})
		}
		for _, h := range q.Hits[:min(pool, len(q.Hits))] {
			doc := d.Docs[h.ID]
			text := []string{doc.Description}
			for _, l := range [][]string{doc.Tags, doc.Capabilities, doc.RepresentativeQueries, {doc.Publisher}} {
				text = append(text, l...)
			}
			fq.pool = append(fq.pool, Candidate{Keyword: h.Keyword, Semantic: h.Semantic, Name: doc.Name, Text: text})
			fq.gold = append(fq.gold, slices.Contains(q.Gold, h.ID))
			fq.ids = append(fq.ids, h.ID)
			fq.providers = append(fq.providers, providerOf(doc.Provider, doc.Hosts, doc.Name, doc.Publisher, key))
		}
		hf := fnv.New32a()
		hf.Write([]byte(q.ID))
		fq.fold = int(hf.Sum32() % uint32(folds))
		out = append(out, fq)
	}
	attachConfVector(t, path, out)
	return out
}

// imputeSemantic gives each hit the semantic list did not return (0) the
// list's lowest similarity, its upper bound, and fuses the hits again as
// query.Fuse does (query.DefaultKeywordWeight, 0.2), best first. loadFit
// applies it when FIT_IMPUTE is "min".
func imputeSemantic(q *fitDumpQuery) {
	low := math.Inf(1)
	for _, h := range q.Hits {
		if h.Semantic > 0 {
			low = math.Min(low, h.Semantic)
		}
	}
	if math.IsInf(low, 1) {
		return
	}
	for i := range q.Hits {
		if q.Hits[i].Semantic == 0 {
			q.Hits[i].Semantic = low
		}
		q.Hits[i].Score = 0.2*q.Hits[i].Keyword + 0.8*q.Hits[i].Semantic
	}
	slices.SortStableFunc(q.Hits, func(a, b fitHit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// newton minimises a convex loss by Newton's method: grad returns the
// gradient and Hessian at w (penalty included).
func newton(n int, grad func(w []float64) ([]float64, [][]float64)) []float64 {
	w := make([]float64, n)
	for range 200 {
		g, h := grad(w)
		step := solve(h, g)
		var moved float64
		for a := range n {
			moved = math.Max(moved, math.Abs(step[a]))
		}
		// Steps are capped (a damped Newton): a full step from far off can
		// overshoot where the loss is nearly flat.
		scale := math.Min(1, 2/math.Max(moved, 1e-300))
		for a := range n {
			w[a] -= scale * step[a]
		}
		if moved < 1e-9 {
			break
		}
	}
	return w
}

// rankerGrid is the search space of the ranker's weights, the semantic
// weight fixed at 1: the fused ranking's own weights (keyword 0.25 against
// semantic 1) are one point of it.
var rankerGrid = map[string][numRank][]float64{
	"hybrid": {
		rSemantic:  {1},
		rKeyword:   {0},
		rNameCover: {0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4},
		rTextCover: {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8},
	},
	// Keyword only: no semantic side; the keyword score is the anchor.
	"keyword": {
		rSemantic:  {0},
		rKeyword:   {1},
		rNameCover: {0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8},
		rTextCover: {0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2},
	},
}

// fitRanker picks the grid point with the best Recall@1 over qs (then
// Recall@10, then the earliest point: the smallest weights).
func fitRanker(qs []*fitQuery, grid [numRank][]float64, lengthNorm float64) [numRank]float64 {
	type prepared struct {
		f    [][numRank]float64
		gold []bool
	}
	ps := make([]prepared, 0, len(qs))
	for _, q := range qs {
		p := prepared{gold: q.gold}
		p.f, _ = poolFeatures(&q.req, q.pool, idfs(&q.req), lengthNorm)
		ps = append(ps, p)
	}
	var best [numRank]float64
	bestR1, bestR10 := -1, -1
	var w [numRank]float64
	var walk func(k int)
	walk = func(k int) {
		if k < numRank {
			for _, v := range grid[k] {
				w[k] = v
				walk(k + 1)
			}
			return
		}
		r1, r10 := 0, 0
		u := make([]float64, 0, 64)
		for _, p := range ps {
			u = u[:0]
			for _, f := range p.f {
				u = append(u, dot(w[:], f[:]))
			}
			g := -1
			for i, ok := range p.gold {
				if ok {
					g = i
				}
			}
			if g < 0 {
				continue
			}
			above := 0
			for i := range u {
				if u[i] > u[g] || (u[i] == u[g] && i < g) {
					above++
				}
			}
			if above == 0 {
				r1++
			}
			if above < 10 {
				r10++
			}
		}
		if r1 > bestR1 || (r1 == bestR1 && r10 > bestR10) {
			best, bestR1, bestR10 = w, r1, r10
		}
	}
	walk(0)
	return best
}

// fitConfidence fits the logistic model of "the first result is right"
// over the requests ranked by m's ranker, with the gate's features (gate
// true) or the confidence model's (confFeaturesOf); the bias is not
// penalised, the features omit names keep a weight of 0.
func fitConfidence(m *Model, qs []*fitQuery, lambda float64, gate bool, label func(q *fitQuery, right bool) bool, omit ...int) [numConf]float64 {
	var xs [][numConf]float64
	var ys []float64
	for _, q := range qs {
		x, right := confRow(m, q, gate)
		for _, k := range omit {
			x[k] = 0
		}
		xs = append(xs, x)
		ys = append(ys, b2f(label(q, right)))
	}
	w := newton(numConf, func(w []float64) ([]float64, [][]float64) {
		g := make([]float64, numConf)
		h := make([][]float64, numConf)
		for a := range h {
			h[a] = make([]float64, numConf)
			if a > 0 {
				h[a][a] = lambda
				g[a] = lambda * w[a]
			} else {
				h[a][a] = 1e-9
			}
		}
		for i, x := range xs {
			p := 1 / (1 + math.Exp(-dot(w, x[:])))
			for a := range numConf {
				g[a] += (p - ys[i]) * x[a]
				for b := range numConf {
					h[a][b] += p * (1 - p) * x[a] * x[b]
				}
			}
		}
		return g, h
	})
	var out [numConf]float64
	copy(out[:], w)
	return out
}

// confRow is the gate's (gate true) or the confidence model's features of
// q under m's ranker and whether its first result is gold.
func confRow(m *Model, q *fitQuery, gate bool) ([numConf]float64, bool) {
	rk := m.Rank(&q.req, q.pool)
	if len(rk.Order) == 0 {
		return [numConf]float64{1}, false
	}
	return confFeaturesOf(q, rk, gate), q.gold[rk.Order[0]]
}

// solve solves h·x = g by Gaussian elimination with partial pivoting.
func solve(h [][]float64, g []float64) []float64 {
	n := len(g)
	h = slices.Clone(h)
	for i := range h {
		h[i] = slices.Clone(h[i])
	}
	g = slices.Clone(g)
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(h[r][c]) > math.Abs(h[p][c]) {
				p = r
			}
		}
		h[c], h[p] = h[p], h[c]
		g[c], g[p] = g[p], g[c]
		if h[c][c] == 0 {
			continue
		}
		for r := c + 1; r < n; r++ {
			f := h[r][c] / h[c][c]
			for k := c; k < n; k++ {
				h[r][k] -= f * h[c][k]
			}
			g[r] -= f * g[c]
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		if h[r][r] == 0 {
			continue
		}
		s := g[r]
		for k := r + 1; k < n; k++ {
			s -= h[r][k] * x[k]
		}
		x[r] = s / h[r][r]
	}
	return x
}

type evalFigures struct {
	r1, r10, auc         float64
	r1cut, r10cut        float64
	offEmpty, negEmpty   float64
	nDev, nOff, nNeg     int
	nTerse               int
	terseR1, terseKept   float64
	top1Right, top1Wrong []int
	offTop               []int
}

func evaluate(m *Model, qs []*fitQuery, cut int) evalFigures {
	var e evalFigures
	var offEmpty, negEmpty int
	for _, q := range qs {
		rk := rankQuery(m, q)
		top := 0
		if len(rk.Order) > 0 {
			top = Percent(rk.Scores[rk.Order[0]])
		}
		switch q.kind {
		case "dev":
			e.nDev++
			r1, r10, r1c, r10c := false, false, false, false
			for k, i := range rk.Order[:min(10, len(rk.Order))] {
				if q.gold[i] {
					r10, r10c = true, Percent(rk.Scores[i]) >= cut
					if k == 0 {
						r1, r1c = true, r10c
					}
					break
				}
			}
			e.r1 += b2f(r1)
			e.r10 += b2f(r10)
			e.r1cut += b2f(r1c)
			e.r10cut += b2f(r10c)
			if r1 {
				e.top1Right = append(e.top1Right, top)
			} else {
				e.top1Wrong = append(e.top1Wrong, top)
			}
		case "offcatalog":
			e.nOff++
			e.offTop = append(e.offTop, top)
			if top < cut {
				offEmpty++
			}
		case "terse":
			e.nTerse++
			if len(rk.Order) > 0 && q.gold[rk.Order[0]] {
				e.terseR1++
			}
			if top >= cut {
				e.terseKept++
			}
		case "negative":
			e.nNeg++
			if top < cut {
				negEmpty++
			}
		}
	}
	if e.nDev > 0 {
		n := float64(e.nDev)
		e.r1, e.r10, e.r1cut, e.r10cut = e.r1/n, e.r10/n, e.r1cut/n, e.r10cut/n
	}
	if e.nOff > 0 {
		e.offEmpty = float64(offEmpty) / float64(e.nOff)
	}
	if e.nNeg > 0 {
		e.negEmpty = float64(negEmpty) / float64(e.nNeg)
	}
	if e.nTerse > 0 {
		e.terseR1 /= float64(e.nTerse)
		e.terseKept /= float64(e.nTerse)
	}
	e.auc = relevance.AUC(floats(e.top1Right), floats(e.top1Wrong))
	return e
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// floats widens scores for relevance.AUC.
func floats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// fit fits both models on the requests keep admits (never the off-catalog
// list, which is for evaluation only).
func fit(qs []fitQuery, keep func(*fitQuery) bool, lambda, decay, lengthNorm float64, mode string) Model {
	var dev, conf []*fitQuery
	for i := range qs {
		q := &qs[i]
		if !keep(q) || q.kind == "offcatalog" {
			continue
		}
		conf = append(conf, q)
		if q.kind == "dev" {
			dev = append(dev, q)
		}
	}
	m := Model{Decay: decay, LengthNorm: lengthNorm}
	m.Ranker = fitRanker(dev, rankerGrid[mode], lengthNorm)
	if w := splitFloats(os.Getenv("FIT_RANKER")); len(w) == numRank {
		// Held weights (FIT_RANKER: semantic, keyword, nameCover, textCover):
		// the ranker's grid choice varies fold by fold, which can hide what
		// a change to its features does.
		copy(m.Ranker[:], w)
	}
	omit := omitted()
	m.Gate = fitConfidence(&m, conf, lambda, true, func(q *fitQuery, _ bool) bool { return q.kind != "negative" }, omit...)
	// Small talk says whether there is a request at all, not which entry
	// answers it: the gate's feature only.
	m.Conf = fitConfidence(&m, dev, lambda, false, func(_ *fitQuery, right bool) bool { return right }, append(omit, cSmallTalk)...)
	return m
}

func subset(qs []fitQuery, keep func(*fitQuery) bool) []*fitQuery {
	var out []*fitQuery
	for i := range qs {
		if keep(&qs[i]) {
			out = append(out, &qs[i])
		}
	}
	return out
}

func TestFit(t *testing.T) {
	path := os.Getenv("AGENTFINDER_SCORE_DUMP")
	if path == "" {
		t.Skip("set AGENTFINDER_SCORE_DUMP to the dump TestRelevanceDump writes")
	}
	const folds = 5
	pool := envInt("FIT_POOL", 30)
	cut := envInt("FIT_CUT", 10)
	lambda := envFloat("FIT_LAMBDA", 1)
	decay := envFloat("FIT_DECAY", 5)
	lengthNorm := envFloat("FIT_LENGTH_NORM", 0)
	agreement := envFloat("FIT_AGREEMENT", 0)
	mode := envOr("FIT_MODE", "hybrid")
	qs := loadFit(t, path, mode, pool, folds)
	var cv []evalFigures
	cuts := []int{5, 8, 10, 12, 15, 18, 20, 25, 30}
	cutSum := make([]float64, len(cuts))
	for k := range folds {
		m := fit(qs, func(q *fitQuery) bool { return q.fold != k }, lambda, decay, lengthNorm, mode)
		m.Agreement = agreement
		held := subset(qs, func(q *fitQuery) bool { return q.fold == k })
		for i, c := range cuts {
			e := evaluate(&m, held, c)
			cutSum[i] += (e.r10cut + e.negEmpty) / folds
		}
		e := evaluate(&m, subset(qs, func(q *fitQuery) bool { return q.fold == k || q.kind == "offcatalog" }), cut)
		cv = append(cv, e)
		fmt.Printf("fold %d: dev %3d  R@1 %.3f R@10 %.3f  cut %d: R@1 %.3f R@10 %.3f  AUC %.3f  off empty %.3f  neg empty %.3f (%d)\n",
			k, e.nDev, e.r1, e.r10, cut, e.r1cut, e.r10cut, e.auc, e.offEmpty, e.negEmpty, e.nNeg)
	}
	report := func(name string, get func(evalFigures) float64) {
		var s, ss float64
		for _, e := range cv {
			s += get(e)
		}
		mean := s / folds
		for _, e := range cv {
			ss += (get(e) - mean) * (get(e) - mean)
		}
		fmt.Printf("cv %-10s mean %.3f  sd %.3f\n", name, mean, math.Sqrt(ss/(folds-1)))
	}
	best := 0
	for i := range cuts {
		fmt.Printf("cv cut %2d: mean of R@10 with the cut-off and noise left empty %.3f\n", cuts[i], cutSum[i]/2)
		if cutSum[i] > cutSum[best] {
			best = i
		}
	}
	fmt.Printf("chosen cut-off: %d\n", cuts[best])
	report("R@1", func(e evalFigures) float64 { return e.r1 })
	report("R@10", func(e evalFigures) float64 { return e.r10 })
	report("R@1 cut", func(e evalFigures) float64 { return e.r1cut })
	report("R@10 cut", func(e evalFigures) float64 { return e.r10cut })
	report("AUC", func(e evalFigures) float64 { return e.auc })
	report("off empty", func(e evalFigures) float64 { return e.offEmpty })
	report("neg empty", func(e evalFigures) float64 { return e.negEmpty })
	report("terse R@1", func(e evalFigures) float64 { return e.terseR1 })
	report("terse kept", func(e evalFigures) float64 { return e.terseKept })

	all := subset(qs, func(*fitQuery) bool { return true })
	m := fit(qs, func(*fitQuery) bool { return true }, lambda, decay, lengthNorm, mode)
	m.Agreement = agreement
	var b strings.Builder
	fmt.Fprintf(&b, "\tRanker: [numRank]float64{\n")
	for i, w := range m.Ranker {
		fmt.Fprintf(&b, "\t\t%.4f, // %s\n", w, rankNames[i])
	}
	for _, c := range []struct {
		name string
		w    [numConf]float64
	}{{"Gate", m.Gate}, {"Conf", m.Conf}} {
		fmt.Fprintf(&b, "\t},\n\t%s: [numConf]float64{\n", c.name)
		for i, w := range c.w {
			fmt.Fprintf(&b, "\t\t%.4f, // %s\n", w, confNames[i])
		}
	}
	fmt.Fprintf(&b, "\t},\n\tDecay: %g,\n\tAgreement: %g,\n", m.Decay, m.Agreement)
	fmt.Printf("full fit (pool %d, lambda %g):\n%s", pool, lambda, b.String())
	for _, c := range []int{2, 5, 8, 10, 12, 15, 20, 25, 30} {
		e := evaluate(&m, all, c)
		fmt.Printf("in-sample cut %2d: R@1 %.3f R@10 %.3f  AUC %.3f  off empty %.3f  neg empty %.3f  terse kept %.3f\n",
			c, e.r1cut, e.r10cut, e.auc, e.offEmpty, e.negEmpty, e.terseKept)
	}
	e := evaluate(&m, all, cut)
	// Calibration: how often a first result scoring in each band is right.
	for lo := 0; lo < 100; lo += 20 {
		right, n := 0, 0
		for _, s := range e.top1Right {
			if s >= lo && s < lo+20 {
				right, n = right+1, n+1
			}
		}
		for _, s := range e.top1Wrong {
			if s >= lo && s < lo+20 {
				n++
			}
		}
		if n > 0 {
			fmt.Printf("first results scoring %2d-%2d: %3d, right %.2f\n", lo, lo+19, n, float64(right)/float64(n))
		}
	}
	slices.Sort(e.offTop)
	fmt.Printf("off-catalog top scores: %v\n", e.offTop)
	slices.Sort(e.top1Right)
	slices.Sort(e.top1Wrong)
	fmt.Printf("right top-1 scores (lowest 20): %v\n", e.top1Right[:min(20, len(e.top1Right))])
	fmt.Printf("wrong top-1 scores (highest 20): %v\n", e.top1Wrong[max(0, len(e.top1Wrong)-20):])
}

// omitted is the confidence features FIT_OMIT names (comma-separated
// confNames), which a fit leaves at 0.
func omitted() []int {
	var out []int
	for _, name := range strings.Split(os.Getenv("FIT_OMIT"), ",") {
		if i := slices.Index(confNames[:], strings.TrimSpace(name)); i >= 0 {
			out = append(out, i)
		}
	}
	return out
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envInt(k string, def int) int {
	var v int
	if _, err := fmt.Sscan(os.Getenv(k), &v); err == nil {
		return v
	}
	return def
}

func envFloat(k string, def float64) float64 {
	var v float64
	if _, err := fmt.Sscan(os.Getenv(k), &v); err == nil {
		return v
	}
	return def
}

func modeQueries(d fitDump, mode string) []fitDumpQuery {
	var out []fitDumpQuery
	for _, q := range d.Queries {
		if q.Mode == mode {
			out = append(out, q)
		}
	}
	return out
}
