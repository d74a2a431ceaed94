package query

import (
	"cmp"
	"math"
	"slices"
)

// Measured defaults (see the package documentation).
const (
	// DefaultKeywordWeight is the keyword share of the fused score when a
	// semantic list is present: 0.2 gave the best R@1 and MRR@10 (0.1..0.5
	// measured); keyword-only search uses 1.
	DefaultKeywordWeight = 0.2
	// MaxTerms bounds the single-term sub-queries of one request; every
	// informative term is used up to this many (all terms measured better
	// than the 6, 8 or 10 most informative ones).
	MaxTerms = 16
	// SubQueryLimit is how many hits each sub-query asks for.
	SubQueryLimit = 50
)

// Hit is one document in one sub-query's answer, with Meilisearch's
// _rankingScore (0..1).
type Hit struct {
	ID    string
	Score float64
}

// TermResult is the answer to the single-word query for Term: its hits and
// Meilisearch's estimatedTotalHits, the term's document frequency.
type TermResult struct {
	Term      string
	TotalHits int
	Hits      []Hit
}

// Scored is one fused result with the components that explain it.
type Scored struct {
	ID string
	// Score = KeywordWeight·Keyword + (1-KeywordWeight)·Semantic.
	Score float64
	// Keyword is the idf-weighted share of the request's terms the document
	// matches, each weighted by that term query's ranking score (0..1).
	Keyword float64
	// Semantic is the document's ranking score in the vector query (0..1),
	// 0 when the vector query did not return it.
	Semantic float64
	// Terms are the request terms the document matched, most informative
	// (highest idf) first.
	Terms []string
}

// Fuse merges a vector-only query's hits with single-term keyword queries,
// one per informative term: an OR over the terms weighted like BM25's idf,
// which Meilisearch's own matching strategies cannot express (they always
// require the first or the rarest word). docs is the number of documents in
// the index. With no semantic hits the keyword score alone ranks
// (keywordWeight is then taken as 1). Results are ordered by Score, ties by
// ID, so the output is deterministic.
func Fuse(semantic []Hit, terms []TermResult, docs int, keywordWeight float64) []Scored {
	if len(semantic) == 0 {
		keywordWeight = 1
	}
	keywordWeight = min(max(keywordWeight, 0), 1)
	type acc struct {
		kw, sem float64
		terms   []termIDF
	}
	hits := len(semantic)
	for _, t := range terms {
		hits += len(t.Hits)
	}
	byID := make(map[string]*acc, hits)
	get := func(id string) *acc {
		a := byID[id]
		if a == nil {
			a = &acc{}
			byID[id] = a
		}
		return a
	}
	n := float64(max(docs, 1))
	var idfSum float64
	for _, t := range terms {
		// A term counts by its document frequency, even when none of the
		// documents holding it are in Hits (a filtered search weighed by
		// the unfiltered counts): a document's share must not depend on
		// which others the search could return.
		if t.TotalHits <= 0 {
			continue
		}
		df := math.Min(float64(t.TotalHits), n)
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		idfSum += idf
		for _, h := range t.Hits {
			a := get(h.ID)
			a.kw += idf * h.Score
			a.terms = append(a.terms, termIDF{t.Term, idf})
		}
	}
	for _, h := range semantic {
		a := get(h.ID)
		a.sem = max(a.sem, h.Score)
	}
	out := make([]Scored, 0, len(byID))
	for id, a := range byID {
		s := Scored{ID: id, Semantic: a.sem}
		if idfSum > 0 {
			s.Keyword = a.kw / idfSum
		}
		s.Score = keywordWeight*s.Keyword + (1-keywordWeight)*s.Semantic
		slices.SortStableFunc(a.terms, func(x, y termIDF) int { return cmp.Compare(y.idf, x.idf) })
		if len(a.terms) > 0 {
			s.Terms = make([]string, 0, len(a.terms))
		}
		for _, t := range a.terms {
			s.Terms = append(s.Terms, t.term)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(x, y Scored) int {
		if c := cmp.Compare(y.Score, x.Score); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
	return out
}

type termIDF struct {
	term string
	idf  float64
}

// SearchTerms returns the terms to send as single-word sub-queries: the
// analysis' terms, most informative first, at most MaxTerms.
func (a Analysis) SearchTerms() []string {
	t := a.Ranked
	if len(t) > MaxTerms {
		t = t[:MaxTerms]
	}
	return t
}
