package score

import (
	"math"
	"slices"
	"sort"
)

// Confidence feature indexes.
const (
	cBias = iota
	cTopZ
	cTopSemantic
	cTopCover
	cTopName
	cKnown
	cTerms
	cTopMass
	cSemCover
	cPoolMean
	cPoolSD
	cSmallTalk
	cUnknown
	numConf
)

// confNames name the confidence model's features, for fitting reports.
var confNames = [numConf]string{"bias", "topZ", "topSemantic",
	"topCover", "topName", "known", "terms", "topMass", "semCover", "poolMean", "poolSD", "smallTalk", "unknown"}

// Model holds the fitted weights.
type Model struct {
	// Ranker weighs candidate features into the ranker's utility.
	Ranker [numRank]float64
	// Gate weighs request features into the log-odds that the request is
	// one the catalog can answer at all (not small talk or noise).
	Gate [numConf]float64
	// Conf weighs request features into the log-odds that the first
	// result is right, for a request the catalog can answer.
	Conf [numConf]float64
	// MinScore is the default cut-off (0..100) for results scored by this
	// model: TestFit picks, on held-out folds, the cut-off that maximises
	// the mean of Recall@10 with the cut-off on and the share of generated
	// noise requests left without any result.
	MinScore int
	// Decay is how fast a later result's score falls below the first's
	// with its later utility (the ranker's utility plus Agreement times its
	// agreement, never above the first's): score = first ·
	// exp(-Decay·(uFirst - u)).
	Decay float64
	// LengthNorm is how much a candidate's text cover is normalised by its
	// length against the pool's mean (lengthNorm): 0 not at all.
	LengthNorm float64
	// Agreement is how much a later result's agreement (how high both the
	// semantic and the keyword side place it among the request's first
	// tier: sides.agreement) adds to its utility for its score and order.
	// The first result stays the ranker's: agreement does not pick a
	// better first one, but it tells a right later result from the noise
	// around it better than the ranker's utility alone
	// (docs/MEASUREMENTS.md). 0: not at all.
	Agreement float64
	// Within is the per-result rule on top of MinScore: a result is shown
	// only when its score reaches a share of the best score of its answer
	// (Keep). The share is Within at a best of 0 and rises in a straight
	// line to all of it at a best of 100: the surer the first answer, the
	// nearer to it the others must be, so a strong first answer no longer
	// brings the index behind it, while a doubtful one keeps the runners-up
	// the right answer is often among. Chosen with Decay and Agreement
	// (docs/MEASUREMENTS.md).
	Within float64
	// Crowding is how many results of one provider may come before the
	// results of other providers that Keep shows (Crowd); 0: no crowding.
	Crowding int
}

// Keep reports whether a result scoring pct (0..100) is shown in an answer
// whose best result scores best, under the cut-off cut: it must reach cut
// and, unless cut is 0 (minScore 0 shows every result), Share(best) of
// best. Every door filters its results through this one rule.
func (m *Model) Keep(pct, best, cut int) bool {
	if pct < cut {
		return false
	}
	return cut <= 0 || float64(pct) >= m.Share(best)*float64(best)
}

// Share is the share of the best score (0..100) a result needs to be
// shown (Keep): Within at a best of 0, rising linearly to 1 at 100.
func (m *Model) Share(best int) float64 {
	b := math.Max(0, math.Min(1, float64(best)/100))
	return m.Within + (1-m.Within)*b
}

// Default is the model POST /search and every binding use. TestFit fitted
// it on the relevance set in fixtures/relevance (its 300 requests with
// their answers, the generated keyword-style requests and generated noise;
// never the off-catalog list make eval scores) from the dump
// searchapi's TestRelevanceDump writes; rerun both to refit after a change
// to the features or the ranking:
//
//	AGENTFINDER_DUMP=/tmp/rel.json AGENTFINDER_MODEL_DIR=$PWD/.cache/model \
//	  bash .ci/with-meilisearch.sh go test -count=1 -run TestRelevanceDump ./searchapi/search
//	AGENTFINDER_SCORE_DUMP=/tmp/rel.json FIT_LAMBDA=0.01 FIT_DECAY=1.25 FIT_LENGTH_NORM=0.5 FIT_AGREEMENT=0.2 \
//	  go test -count=1 -run 'TestFit$' -v ./searchapi/score
//
// Decay, Agreement and Within were chosen together by TestFitWorlds (the
// largest Recall@10 with precision@5 at least 0.30, cross-validated by
// request; docs/MEASUREMENTS.md).
var Default = Model{
	Ranker: [numRank]float64{
		1.0000, // semantic
		0.0000, // keyword
		0.1000, // nameCover
		0.4000, // textCover
	},
	Gate: [numConf]float64{
		-16.2038, // bias
		-0.1802,  // topZ
		25.4708,  // topSemantic
		0.4169,   // topCover
		0.0861,   // topName
		3.6313,   // known
		1.3179,   // terms
		1.3229,   // topMass
		0.1992,   // semCover
		-2.6159,  // poolMean
		10.7123,  // poolSD
		-10.0175, // smallTalk
		-1.3418,  // unknown
	},
	Conf: [numConf]float64{
		-0.1222, // bias
		0.5800,  // topZ
		0.8959,  // topSemantic
		3.5261,  // topCover
		2.4464,  // topName
		0.2075,  // known
		-0.1142, // terms
		0.2938,  // topMass
		-8.8916, // semCover
		-4.0623, // poolMean
		-3.8096, // poolSD
		0.0000,  // smallTalk
		-1.2263, // unknown
	},
	Decay:      1.25,
	MinScore:   15,
	LengthNorm: 0.5,
	Agreement:  0.2,
	Within:     0.2,
	Crowding:   2,
}

// KeywordOnly is the model of a registry without an embedder (serve
// --no-embeddings): no semantic side, fitted the same way on the same
// requests searched by keywords only, before length normalisation (its
// LengthNorm is 0: it was not refitted, and its ranker reads no cover).
var KeywordOnly = Model{
	Ranker: [numRank]float64{
		0.0000, // semantic
		1.0000, // keyword
		0.0000, // nameCover
		0.0000, // textCover
	},
	Gate: [numConf]float64{
		-4.4140, // bias
		0.0000,  // topZ
		0.0000,  // topSemantic
		2.7716,  // topCover
		2.3374,  // topName
		-1.6267, // known
		2.5159,  // terms
		1.4356,  // topMass
		0.0000,  // semCover
		0.0000,  // poolMean
		0.0000,  // poolSD
		0.0000,  // smallTalk
		-5.1075, // unknown
	},
	Conf: [numConf]float64{
		-2.2264, // bias
		0.0000,  // topZ
		0.0000,  // topSemantic
		-1.1862, // topCover
		7.8819,  // topName
		-0.0990, // known
		-1.6204, // terms
		2.4132,  // topMass
		0.0000,  // semCover
		0.0000,  // poolMean
		0.0000,  // poolSD
		0.0000,  // smallTalk
		-0.6234, // unknown
	},
	Decay:    2,
	MinScore: 5,
	Within:   0.3,
	Crowding: 2,
}

// Ranking is the outcome of Rank.
type Ranking struct {
	// Order lists candidate indexes best first.
	Order []int
	// Scores holds each candidate's relevance (0..1), by candidate index.
	Scores []float64

	utility    []float64
	later      []float64
	sides      sides
	feats      [][numRank]float64
	meanWords  float64
	top        int
	topUtility float64
	conf       float64
	idf        []float64
	idfSum     float64
	known      float64
}

// Rank orders the candidates of r (the pool: the first results of the
// fused ranking, best first) and scores each.
func (m *Model) Rank(r *Request, pool []Candidate) *Ranking {
	rk := &Ranking{idf: idfs(r), Order: make([]int, len(pool)), Scores: make([]float64, len(pool)), utility: make([]float64, len(pool))}
	rk.known = knownShare(r, rk.idf)
	for _, w := range rk.idf {
		rk.idfSum += w
	}
	if len(pool) == 0 {
		return rk
	}
	feats, mean := poolFeatures(r, pool, rk.idf, m.LengthNorm)
	rk.feats, rk.meanWords = feats, mean
	for i := range pool {
		rk.utility[i] = dot(m.Ranker[:], feats[i][:])
		rk.Order[i] = i
	}
	sort.SliceStable(rk.Order, func(a, b int) bool { return rk.utility[rk.Order[a]] > rk.utility[rk.Order[b]] })
	rk.top = rk.Order[0]
	rk.sides = sidesOf(r, pool)
	rk.later = m.laterUtility(pool, rk)
	rk.topUtility = rk.later[rk.top]
	g := confidenceFeatures(r, rk, pool, feats)
	// Results follow their scores (ties in the ranker's order: the first
	// stays first); preferred candidates move up, their scores unchanged.
	key := func(i int) float64 {
		if w := pool[i].Weight; w > 0 {
			return rk.later[i] * w
		}
		return rk.later[i]
	}
	sort.SliceStable(rk.Order, func(a, b int) bool { return key(rk.Order[a]) > key(rk.Order[b]) })
	rk.conf = m.confidence(g, g)
	for i := range pool {
		rk.Scores[i] = m.scoreAt(rk, rk.later[i])
	}
	return rk
}

// confidence is the chance that a request's first result is right: the
// gate's chance that the request is one the catalog can answer (over its
// features g) times the chance the first result is right (over c; Rank
// reads both from confidenceFeatures).
func (m *Model) confidence(g, c [numConf]float64) float64 {
	return sigmoid(dot(m.Gate[:], g[:])) * sigmoid(dot(m.Conf[:], c[:]))
}

// scoreAt is the score (0..1) of a result whose later utility is u in rk:
// the first's confidence, falling with u's distance below the first's
// utility (Decay).
func (m *Model) scoreAt(rk *Ranking, u float64) float64 {
	return rk.conf * math.Exp(-m.Decay*(rk.topUtility-u))
}

// laterUtility is the utility each candidate's score is measured by below
// the first's (rk.top, the ranker's best): its ranker utility plus
// Agreement times its agreement, never above the first's, which it keeps.
func (m *Model) laterUtility(pool []Candidate, rk *Ranking) []float64 {
	later := slices.Clone(rk.utility)
	if m.Agreement == 0 {
		return later
	}
	for i := range later {
		later[i] = m.withAgreement(later[i], rk.sides, &pool[i])
	}
	for i := range later {
		if i != rk.top {
			later[i] = math.Min(later[i], later[rk.top])
		}
	}
	return later
}

// withAgreement is a candidate's utility u raised by Agreement times its
// agreement among s: what a later result's score is measured by, before it
// is held to the first's.
func (m *Model) withAgreement(u float64, s sides, c *Candidate) float64 {
	return u + m.Agreement*s.agreement(c)
}

// confidenceFeatures describes the request and its best candidate in
// absolute terms: how similar the best candidate is on the semantic side
// (itself and against the pool), how much of the request it covers, how
// much of the request the index knows at all. Nothing here measures the
// best against the runner-up: two equally good answers must not lower each
// other's scores.
func confidenceFeatures(r *Request, rk *Ranking, pool []Candidate, feats [][numRank]float64) [numConf]float64 {
	var g [numConf]float64
	g[cBias] = 1
	top := rk.top
	var sum, sq float64
	for _, c := range pool {
		sum += c.Semantic
		sq += c.Semantic * c.Semantic
	}
	n := float64(len(pool))
	mean := sum / n
	sd := math.Sqrt(math.Max(0, sq/n-mean*mean))
	if sd > 0 {
		g[cTopZ] = (pool[top].Semantic - mean) / sd
	}
	g[cPoolMean], g[cPoolSD] = mean, sd
	g[cTopSemantic] = pool[top].Semantic
	g[cTopCover] = feats[top][rTextCover]
	g[cTopName] = feats[top][rNameCover]
	g[cKnown] = rk.known
	g[cTerms] = math.Log1p(float64(len(r.Terms)))
	g[cTopMass] = math.Log1p(feats[top][rTextCover] * rk.idfSum)
	g[cSemCover] = math.Max(0, pool[top].Semantic-0.6) * feats[top][rTextCover]
	g[cSmallTalk] = r.SmallTalk
	g[cUnknown] = unknownHinge(r)
	return g
}

// Score is the relevance (0..1) of a candidate outside the ranked pool (a
// later page, or another registry's result), on the pool's scale: never
// above the pool's first.
func (m *Model) Score(r *Request, rk *Ranking, c *Candidate) float64 {
	if len(rk.Order) == 0 {
		return 0
	}
	w := wordsOf(c)
	f := candidateFeatures(r, c, rk.idf, w)
	f[rTextCover] /= lengthNorm(m.LengthNorm, w.count(), rk.meanWords)
	return m.scoreAt(rk, math.Min(m.withAgreement(dot(m.Ranker[:], f[:]), rk.sides, c), rk.topUtility))
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

func dot(w, x []float64) float64 {
	var s float64
	for i := range w {
		s += w[i] * x[i]
	}
	return s
}

// Percent is a relevance as the 0..100 score results show.
func Percent(p float64) int {
	return max(0, min(100, int(math.Round(p*100))))
}

// unknownHinge is how far the share of r's terms no document holds
// exceeds 0.7, scaled to 0..1: a request made almost only of words the
// catalog has never seen (word salad, gibberish) reaches 1, while a real
// request with a few rare names stays at 0. (The idf-weighted known share
// alone weighs one such word as much as the others.)
func unknownHinge(r *Request) float64 {
	if len(r.Terms) == 0 {
		return 0
	}
	u := 0
	for _, t := range r.Terms {
		if t.Docs == 0 {
			u++
		}
	}
	return math.Max(0, float64(u)/float64(len(r.Terms))-0.7) / 0.3
}
