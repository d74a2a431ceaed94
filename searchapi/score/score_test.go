package score

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestIDF(t *testing.T) {
	if rare, common := IDF(1, 200), IDF(150, 200); rare <= common || common <= 0 {
		t.Errorf("IDF rare %.3f, common %.3f: want rare > common > 0", rare, common)
	}
	if unknown, rare := IDF(0, 200), IDF(1, 200); unknown <= rare {
		t.Errorf("a word no document holds (%.3f) must weigh most (rare %.3f)", unknown, rare)
	}
}

func TestCover(t *testing.T) {
	r := &Request{Docs: 100, Terms: []Term{{"flights", 3}, {"paris", 5}, {"xyzzy", 0}}}
	c := &Candidate{Name: "Flight Booker", Text: []string{"Book cheap flights to Paris and Rome."}}
	idf := idfs(r)
	name, text := cover(r, idf, wordsOf(c))
	sum := idf[0] + idf[1] + idf[2]
	if math.Abs(name-idf[0]/sum) > 1e-9 || math.Abs(text-(idf[0]+idf[1])/sum) > 1e-9 {
		t.Errorf("cover = %.3f, %.3f; want %.3f, %.3f", name, text, idf[0]/sum, (idf[0]+idf[1])/sum)
	}
	if n, x := cover(&Request{}, nil, wordsOf(c)); n != 0 || x != 0 {
		t.Errorf("no terms: cover %v %v", n, x)
	}
}

// pool is a request whose first candidate matches by meaning and words,
// the others less and less.
func pool() (*Request, []Candidate) {
	r := &Request{Docs: 50, Terms: []Term{{"weather", 2}, {"forecast", 3}}}
	return r, []Candidate{
		{Semantic: 0.70, Name: "Recipes", Text: []string{"Cooking ideas."}},
		{Semantic: 0.86, Name: "Weather Now", Text: []string{"Forecasts for any city."}},
		{Semantic: 0.75, Name: "Sky Watch", Text: []string{"Weather radar."}},
	}
}

func TestRank(t *testing.T) {
	r, cands := pool()
	rk := Default.Rank(r, cands)
	if want := []int{1, 2, 0}; !slices.Equal(rk.Order, want) {
		t.Fatalf("order %v, want %v", rk.Order, want)
	}
	for k := 1; k < len(rk.Order); k++ {
		if rk.Scores[rk.Order[k]] > rk.Scores[rk.Order[k-1]] {
			t.Errorf("scores do not fall along the order: %v", rk.Scores)
		}
	}
	for _, p := range rk.Scores {
		if p < 0 || p > 1 {
			t.Errorf("score %v outside 0..1", p)
		}
	}
	// A result outside the pool is on the same scale, never above the best.
	out := Default.Score(r, rk, &Candidate{Semantic: 0.99, Name: "Weather Forecast Pro", Text: []string{"weather forecast"}})
	if top := rk.Scores[rk.Order[0]]; out > top || out <= rk.Scores[rk.Order[2]] {
		t.Errorf("outside score %.3f, pool %v", out, rk.Scores)
	}
	// A preferred candidate moves up; no score changes.
	cands[0].Weight = 10
	pref := Default.Rank(r, cands)
	if pref.Order[0] != 0 {
		t.Errorf("preferred candidate not first: %v", pref.Order)
	}
	for i := range rk.Scores {
		if pref.Scores[i] != rk.Scores[i] {
			t.Errorf("preference changed score %d: %v -> %v", i, rk.Scores[i], pref.Scores[i])
		}
	}
}

func TestRankEmpty(t *testing.T) {
	rk := Default.Rank(&Request{}, nil)
	if len(rk.Order) != 0 || Default.Score(&Request{}, rk, &Candidate{Semantic: 1}) != 0 {
		t.Errorf("empty pool: %+v", rk)
	}
}

func TestConfidenceSeparates(t *testing.T) {
	// The same pool, once with a request the best candidate covers and
	// stands out for, once with words nothing holds and a flat semantic
	// side: the first must score higher.
	r, cands := pool()
	good := Default.Rank(r, cands)
	flat := []Candidate{{Semantic: 0.62, Name: "A"}, {Semantic: 0.61, Name: "B"}, {Semantic: 0.61, Name: "C"}}
	noise := Default.Rank(&Request{Docs: 50, Terms: []Term{{"xyzzy", 0}, {"plugh", 0}}}, flat)
	if g, n := good.Scores[good.Order[0]], noise.Scores[noise.Order[0]]; g <= n {
		t.Errorf("good request %.3f, noise %.3f", g, n)
	}
}

func TestPercent(t *testing.T) {
	for p, want := range map[float64]int{-0.1: 0, 0: 0, 0.204: 20, 0.205: 21, 1: 100, 1.5: 100} {
		if got := Percent(p); got != want {
			t.Errorf("Percent(%v) = %d, want %d", p, got, want)
		}
	}
}

func TestSmallTalkLowersScore(t *testing.T) {
	// The same request and pool, once near small talk: its first result
	// must score lower, and the order must not change.
	r, cands := pool()
	r.SmallTalk = 0.2
	plain := Default.Rank(r, cands)
	chat := *r
	chat.SmallTalk = 0.9
	talk := Default.Rank(&chat, cands)
	if p, c := plain.Scores[plain.Order[0]], talk.Scores[talk.Order[0]]; c >= p {
		t.Errorf("small talk %.3f, plain %.3f: want lower", c, p)
	}
	if !slices.Equal(plain.Order, talk.Order) {
		t.Errorf("order changed: %v -> %v", plain.Order, talk.Order)
	}
}

func TestUnknownHinge(t *testing.T) {
	terms := func(docs ...int) *Request {
		r := &Request{Docs: 50}
		for i, d := range docs {
			r.Terms = append(r.Terms, Term{Word: string(rune('a' + i)), Docs: d})
		}
		return r
	}
	for _, c := range []struct {
		r    *Request
		want float64
	}{
		{terms(), 0},
		{terms(3, 0), 0},                // half unknown: a real request with a rare name
		{terms(0, 0, 0, 0), 1},          // nothing known
		{terms(0, 0, 0, 0, 2), 1.0 / 3}, // 0.8 unknown
	} {
		if got := unknownHinge(c.r); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("unknownHinge(%v) = %.3f, want %.3f", c.r.Terms, got, c.want)
		}
	}
}

// TestKeep: a result is shown when it reaches the cut-off and the share
// of the best score the best calls for (Within at 0, all of it at 100);
// minScore 0 shows everything.
func TestKeep(t *testing.T) {
	m := Model{Within: 0.3}
	cases := []struct {
		pct, best, cut int
		want           bool
	}{
		{90, 90, 15, true},  // the best
		{84, 90, 15, true},  // 0.3 + 0.7 × 0.9 = 0.93 of a best of 90 is 83.7
		{83, 90, 15, false}, // a strong first answer no longer drags it along
		{80, 80, 15, true},  // a tie with the best
		{26, 40, 15, true},  // a doubtful best (40: a share of 0.58) keeps its runners-up
		{23, 40, 15, false}, // but not the whole index
		{14, 14, 15, false}, // below the cut-off
		{1, 90, 0, true},    // minScore 0: everything
		{100, 100, 15, true},
		{99, 100, 15, false}, // a certain best keeps only its equals
	}
	for _, c := range cases {
		if got := m.Keep(c.pct, c.best, c.cut); got != c.want {
			t.Errorf("Keep(%d, best %d, cut %d) = %v, want %v", c.pct, c.best, c.cut, got, c.want)
		}
	}
	for _, c := range []struct {
		best int
		want float64
	}{{0, 0.3}, {50, 0.65}, {100, 1}, {-1, 0.3}, {120, 1}} {
		if got := m.Share(c.best); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Share(%d) = %.3f, want %.3f", c.best, got, c.want)
		}
	}
}

// TestLengthNorm: of two entries covering the request's words equally and
// as similar by meaning, the one whose text is far longer than the pool's
// mean ranks second once text cover is normalised by length, and first
// (fused order) without it; the normalisation is 1 at the mean length.
func TestLengthNorm(t *testing.T) {
	r := &Request{Docs: 50, Terms: []Term{{"invoice", 2}, {"pdf", 4}}}
	long := strings.Repeat("payroll ledger tax filing audit reports ", 20)
	cands := []Candidate{
		{Semantic: 0.8, Name: "Office Suite", Text: []string{"Invoice PDF export. " + long}},
		{Semantic: 0.8, Name: "Paperwork", Text: []string{"Turns an invoice into a PDF."}},
	}
	m := Default
	m.LengthNorm = 0
	if rk := m.Rank(r, cands); rk.Order[0] != 0 {
		t.Errorf("without length normalisation: order %v, want the fused order", rk.Order)
	}
	m.LengthNorm = 0.5
	if rk := m.Rank(r, cands); rk.Order[0] != 1 {
		t.Errorf("with length normalisation: order %v, want the short entry first", rk.Order)
	}
	for _, c := range []struct {
		b     float64
		words int
		mean  float64
		want  float64
	}{{0, 300, 30, 1}, {0.5, 30, 30, 1}, {0.5, 90, 30, 2}, {1, 15, 30, 0.5}, {0.5, 10, 0, 1}} {
		if got := lengthNorm(c.b, c.words, c.mean); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("lengthNorm(%v, %d, %v) = %v, want %v", c.b, c.words, c.mean, got, c.want)
		}
	}
}

// TestAgreement: a candidate's agreement is 1/(1 + its place) on each side
// that found it, equal scores sharing the higher place, counted among the
// request's first tier when it lists one (a candidate outside it placed
// among it too), else among the pool, whatever the pool's order.
func TestAgreement(t *testing.T) {
	pool := []Candidate{
		{Semantic: 0.9, Keyword: 0.2}, // first by meaning, second by words
		{Semantic: 0.7, Keyword: 0.5}, // second (tied) by meaning, first by words
		{Semantic: 0.7},               // second (tied) by meaning, no keyword match
		{Keyword: 0.2},                // no semantic score, second (tied) by words
	}
	check := func(name string, s sides, cands []Candidate, want []float64) {
		t.Helper()
		for i := range want {
			if got := s.agreement(&cands[i]); math.Abs(got-want[i]) > 1e-9 {
				t.Errorf("%s: agreement %d = %.4f, want %.4f", name, i, got, want[i])
			}
		}
	}
	want := []float64{1.0/2 + 1.0/3, 1.0/3 + 1.0/2, 1.0 / 3, 1.0 / 3}
	check("pool", sidesOf(&Request{}, pool), pool, want)
	rev := slices.Clone(pool)
	slices.Reverse(rev)
	wantRev := slices.Clone(want)
	slices.Reverse(wantRev)
	check("reversed pool", sidesOf(&Request{}, rev), rev, wantRev)
	// A wider tier: one result better on each side, and more below.
	r := &Request{Tier: []Sides{{0.95, 0}, {0.9, 0.2}, {0.7, 0.5}, {0.7, 0}, {0, 0.2}, {0.1, 0.9}, {0.05, 0.01}}}
	check("tier", sidesOf(r, pool), pool, []float64{1.0/3 + 1.0/4, 1.0/4 + 1.0/3, 1.0 / 4, 1.0 / 4})
	outside := []Candidate{{Semantic: 0.8, Keyword: 0.95}}
	check("outside the tier", sidesOf(r, pool), outside, []float64{1.0/4 + 1.0/2})
}

// TestAgreementOrdersLaterResults: two later candidates the ranker finds
// equally good (the same similarity, no words of the request); the one the
// keyword side places first scores higher and follows the first, which
// stays first although it agrees less. Without Agreement the scores are
// the ranker's alone.
func TestAgreementOrdersLaterResults(t *testing.T) {
	r := &Request{Docs: 50, Terms: []Term{{"invoice", 2}}}
	cands := []Candidate{
		{Semantic: 0.70, Keyword: 0.1, Name: "Paperwork"}, // fused first by words
		{Semantic: 0.90, Name: "Accounts"},                // the ranker's first
		{Semantic: 0.70, Keyword: 0.3, Name: "Ledger"},    // first by words
		{Semantic: 0.80, Name: "Bills"},
	}
	m := Default
	m.Agreement = 0
	plain := m.Rank(r, cands)
	m.Agreement = 0.3
	agree := m.Rank(r, cands)
	if plain.Order[0] != 1 || agree.Order[0] != 1 {
		t.Fatalf("first: %d without agreement, %d with; want 1 (the ranker's)", plain.Order[0], agree.Order[0])
	}
	if plain.Scores[0] != plain.Scores[2] {
		t.Errorf("without agreement, equal utilities score %.4f and %.4f", plain.Scores[0], plain.Scores[2])
	}
	if agree.Scores[2] <= agree.Scores[0] {
		t.Errorf("with agreement, the keyword side's first scores %.4f, the other %.4f: want higher", agree.Scores[2], agree.Scores[0])
	}
	if agree.Order[1] != 2 {
		t.Errorf("with agreement, order %v: want the keyword side's first second", agree.Order)
	}
	for i, s := range agree.Scores {
		if s > agree.Scores[1] {
			t.Errorf("candidate %d scores %.4f above the first's %.4f", i, s, agree.Scores[1])
		}
	}
	if agree.Scores[1] != plain.Scores[1] {
		t.Errorf("agreement changed the first's score: %.4f -> %.4f", plain.Scores[1], agree.Scores[1])
	}
}
