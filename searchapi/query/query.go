// Package query turns a plain-language request into a keyword query for
// Meilisearch: it normalises the text (NFKC, lower case, punctuation), drops
// conversational filler and English stop words, and orders the remaining
// terms by how informative they are likely to be, because Meilisearch reads
// only the first ten words of q. It is pure and deterministic, with no model
// and no I/O.
//
// # Query shape
//
// Fuse goes with the query shape POST /search uses, implemented by
// searchapi/hybrid; docs/MEASUREMENTS.md has how each step was chosen on
// the relevance set of fixtures/relevance (eval_test.go):
//
//  1. a := Analyze(text); terms := a.SearchTerms().
//  2. Embed the request text as typed, not the rewritten one (the sentence
//     model reads sentences).
//  3. One POST /multi-search, not federated, every query with the request's
//     filter, showRankingScore and limit max(SubQueryLimit, offset+pageSize+1),
//     retrieving only the primary key:
//     first {q:"", vector, hybrid:{embedder, semanticRatio:1}}
//     (keyword only: {q:"", limit:0}, just for the count), then one {q: term}
//     per term.
//  4. Fuse(firstHits, termResults, first.estimatedTotalHits, keywordWeight)
//     with keywordWeight = 1 - semanticRatio, default DefaultKeywordWeight.
//     When the semantic list is full, term hits it left out that could
//     still reach the first SubQueryLimit places get their similarity from
//     one more vector sub-query restricted to them by identifier, and are
//     fused with it instead of 0 (hybrid.FillDepth).
//  5. Fetch the page's documents by identifier; Scored.Keyword, .Semantic and
//     .Terms are the evidence (hybrid.BestMatch over the fetched _vectors
//     tells which representative query or example matched).
//
// This shape beat Meilisearch's own hybrid search and any single keyword
// query, since every matching strategy keeps the first or the rarest word
// of a long request mandatory.
package query

import (
	"sort"
	"strings"
	"unicode"

	"github.com/agentfinder/agentfinder/normalize"
)

// MaxMeiliWords is how many words of q Meilisearch considers.
const MaxMeiliWords = 10

// Analysis is what Analyze found in a request.
type Analysis struct {
	// Words are the normalised words of the request, in order.
	Words []string
	// Terms are the informative words, deduplicated, in request order.
	Terms []string
	// Ranked holds Terms ordered most informative first (longer words
	// first, then request order).
	Ranked []string
}

// Query is the keyword query to send: the ranked terms joined by spaces, or
// the normalised words when filtering left nothing (a request made only of
// stop words still searches for something).
func (a Analysis) Query() string {
	if len(a.Ranked) > 0 {
		return strings.Join(a.Ranked, " ")
	}
	return strings.Join(a.Words, " ")
}

// Rewrite returns Analyze(text).Query(): the request as a keyword query.
func Rewrite(text string) string { return Analyze(text).Query() }

// Analyze normalises text and selects its informative terms.
func Analyze(text string) Analysis {
	words := normalize.Words(text)
	keep := make([]bool, len(words))
	for i := range keep {
		keep[i] = true
	}
	for i := 0; i < len(words); {
		if n := fillerAt(words, i); n > 0 {
			for j := i; j < i+n; j++ {
				keep[j] = false
			}
			i += n
			continue
		}
		i++
	}
	var a Analysis
	a.Words = words
	seen := map[string]bool{}
	for i, w := range words {
		if !keep[i] || normalize.IsStopWord(w) || seen[w] || !informative(w) {
			continue
		}
		seen[w] = true
		a.Terms = append(a.Terms, w)
	}
	a.Ranked = append([]string(nil), a.Terms...)
	sort.SliceStable(a.Ranked, func(i, j int) bool {
		return termWeight(a.Ranked[i]) > termWeight(a.Ranked[j])
	})
	return a
}

// fillerAt returns the length of the longest filler phrase starting at
// words[i], or 0.
func fillerAt(words []string, i int) int {
	best := 0
	for _, p := range fillerPhrases {
		if len(p) <= best || i+len(p) > len(words) {
			continue
		}
		match := true
		for k, w := range p {
			if words[i+k] != w {
				match = false
				break
			}
		}
		if match {
			best = len(p)
		}
	}
	return best
}

// informative rejects single characters (except digits) and very long
// tokens that are probably noise.
func informative(w string) bool {
	n := len([]rune(w))
	if n == 1 {
		return unicode.IsDigit([]rune(w)[0])
	}
	return n <= 40
}

// termWeight is the informativeness proxy used for ordering: longer words
// are rarer in English, capped so that very long tokens do not dominate.
func termWeight(w string) int { return min(len([]rune(w)), 12) }
