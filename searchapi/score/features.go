// Package score re-ranks the first candidates of a search and gives every
// result a calibrated relevance score from 0 to 100.
//
// Two small models, both fitted on the relevance dev set (fit_test.go):
//   - the ranker, a conditional logit over features of each candidate (its
//     fused keyword and semantic components, how much of the request its
//     name and text cover, the text's share weighed by its length against
//     the pool's, how far it stands out semantically), orders the
//     candidates of one request;
//   - the confidence model, two logistic regressions over features of the
//     request as a whole and of its best candidate (how much the best
//     semantic match stands out from the rest, how much of the request it
//     covers, how many of the request's words the index knows, how close
//     the request is to small talk), estimates the probability that the
//     request is one the catalog can answer and that the first result is
//     what was asked for.
//
// The first result's score is that probability in percent; each later
// result's score is the first one's scaled by how much less likely the
// ranker finds it, counting also how high both the semantic and the
// keyword side place it (agreement). It is relevance only: trust signals
// (verification, attestations) never enter it.
//
// The package is pure: no I/O, no Meilisearch. It imports only
// normalize (for word splitting).
package score

import (
	"cmp"
	"math"
	"slices"

	"github.com/agentfinder/agentfinder/normalize"
)

// Term is one informative word of the request and the number of indexed
// documents that contain it (its document frequency; 0: none does).
type Term struct {
	Word string
	Docs int
}

// Candidate is one result to score: its fused components and the text of
// the entry.
type Candidate struct {
	// Keyword is the keyword side's score (query.Scored.Keyword: the
	// idf-weighted share of the request's terms Meilisearch matched, 0..1).
	Keyword float64
	// Semantic is the similarity of the request and the entry on the
	// vector side, (1+cosine)/2 as Meilisearch reports it
	// (query.Scored.Semantic; 0 when the vector side did not return it).
	Semantic float64
	// Name is the entry's display name.
	Name string
	// Text holds the entry's other searchable text: description, tags,
	// capabilities, representative queries, publisher.
	Text []string
	// ToolWords are the words of the entry's tools (normalize.ToolWords:
	// distinct words, one space apart; "" none), read as more of its text.
	ToolWords string
	// Weight, when above 0, multiplies the candidate's utility for ordering
	// only (a preferred tag): it moves up, its score does not change.
	Weight float64
}

// Request is what scoring knows of the request as a whole.
type Request struct {
	// Terms are the request's informative words with their document
	// frequencies.
	Terms []Term
	// Docs is the number of documents the search could return.
	Docs int
	// SmallTalk is the highest cosine similarity of the request's vector
	// with the vectors of the SmallTalk phrases (0 without a query vector).
	SmallTalk float64
	// Tier holds the semantic and keyword scores of every result of the
	// search's first tier (the pool is its head), among which a
	// candidate's places on either side are counted (agreement); when it
	// is empty they are counted among the pool.
	Tier []Sides
}

// Sides is a result's scores on each side of the fused search.
type Sides struct{ Semantic, Keyword float64 }

// Ranker feature indexes; a candidate's vector has numRank entries.
const (
	rSemantic = iota
	rKeyword
	rNameCover
	rTextCover
	numRank
)

// rankNames name the ranker's features, for fitting reports.
var rankNames = [numRank]string{"semantic", "keyword", "nameCover", "textCover"}

// candidateFeatures describes candidate c of request r; idf holds the idf
// of each of r's terms, w c's words (wordsOf).
func candidateFeatures(r *Request, c *Candidate, idf []float64, w entryText) [numRank]float64 {
	var f [numRank]float64
	f[rSemantic] = c.Semantic
	f[rKeyword] = c.Keyword
	f[rNameCover], f[rTextCover] = cover(r, idf, w)
	return f
}

// poolFeatures describes every candidate of pool (candidateFeatures) with
// its text cover normalised by its length (lengthNorm, b the model's
// LengthNorm) against the pool's mean length, which it returns (in words).
// Each candidate's words are read once, for its length and its cover.
func poolFeatures(r *Request, pool []Candidate, idf []float64, b float64) ([][numRank]float64, float64) {
	feats := make([][numRank]float64, len(pool))
	words := make([]entryText, len(pool))
	var mean float64
	for i := range pool {
		words[i] = wordsOf(&pool[i])
		mean += float64(words[i].count())
	}
	if len(pool) > 0 {
		mean /= float64(len(pool))
	}
	for i := range pool {
		feats[i] = candidateFeatures(r, &pool[i], idf, words[i])
		feats[i][rTextCover] /= lengthNorm(b, words[i].count(), mean)
	}
	return feats, mean
}

// sides holds the scores of the results a candidate's places are
// counted among, on each side of the fused search, best first (scores of
// 0, a side that did not find the result, left out).
type sides struct{ semantic, keyword []float64 }

// sidesOf reads the sides of r's first tier, or of the pool when r lists
// none.
func sidesOf(r *Request, pool []Candidate) sides {
	var s sides
	add := func(sem, kw float64) {
		if sem > 0 {
			s.semantic = append(s.semantic, sem)
		}
		if kw > 0 {
			s.keyword = append(s.keyword, kw)
		}
	}
	if len(r.Tier) > 0 {
		for _, t := range r.Tier {
			add(t.Semantic, t.Keyword)
		}
	} else {
		for _, c := range pool {
			add(c.Semantic, c.Keyword)
		}
	}
	slices.SortFunc(s.semantic, func(a, b float64) int { return cmp.Compare(b, a) })
	slices.SortFunc(s.keyword, func(a, b float64) int { return cmp.Compare(b, a) })
	return s
}

// agreement is how high both sides of the fused search place c among the
// request's first tier: 1/(1 + its place by semantic similarity) +
// 1/(1 + its place by keyword score), places counted from 1 (equal scores
// share the higher place), a side that did not find it (a score of 0)
// adding nothing; a candidate first on both sides gets 1. The two sides
// err differently (a long card sits near many requests on the semantic
// side, a common word matches many entries on the keyword side), so a
// later result both place high is more often the one asked for than one
// only a side does. The first tier is drawn without the request's filters
// and preferences, so they change no agreement.
func (s sides) agreement(c *Candidate) float64 {
	return rankCredit(s.semantic, c.Semantic) + rankCredit(s.keyword, c.Keyword)
}

// rankCredit is 1/(1 + the place of v among scores, best first), 0 when v
// is 0.
func rankCredit(scores []float64, v float64) float64 {
	if v <= 0 {
		return 0
	}
	above, _ := slices.BinarySearchFunc(scores, v, func(x, v float64) int { return cmp.Compare(v, x) })
	return 1 / float64(2+above)
}

// lengthNorm is what an entry's text cover is divided by: 1 - b + b ×
// its length / mean, as BM25 weighs a word found in a document by the
// document's length against the mean. A long entry (many skills, tools,
// examples) holds some words of almost any request; at b 0 length does
// not count, at 1 cover is per unit of mean length.
func lengthNorm(b float64, words int, mean float64) float64 {
	if mean <= 0 || words <= 0 {
		return 1
	}
	return 1 - b + b*float64(words)/mean
}

// entryText is a candidate's words (normalize.Words): its name's, and its
// texts' in order, then its tool words; those, when plain (plainWords),
// are kept as one string (tools, of toolCount words) instead of split: a
// server's can be thousands of words, read for the few terms of a request.
type entryText struct {
	name, text []string
	tools      string
	toolCount  int
}

// wordsOf reads c's words.
func wordsOf(c *Candidate) entryText {
	w := entryText{name: normalize.Words(c.Name)}
	for _, s := range c.Text {
		w.addText(s)
	}
	if n, ok := plainWords(c.ToolWords); ok {
		w.tools, w.toolCount = c.ToolWords, n
	} else {
		w.addText(c.ToolWords)
	}
	return w
}

// addText adds the words of s to w's text.
func (w *entryText) addText(s string) {
	if words := normalize.Words(s); w.text == nil {
		w.text = words // its own: Words returns a new slice
	} else {
		w.text = append(w.text, words...)
	}
}

// count is the number of words of the candidate's name and text.
func (w entryText) count() int { return len(w.name) + len(w.text) + w.toolCount }

// holds reports whether w's text (its name's words aside) holds term.
func (w entryText) holds(term string) bool {
	return containsWord(w.text, term) || containsField(w.tools, term)
}

// plainWords reports whether s is made only of lower-case ASCII letters,
// digits and spaces, and counts its words: then normalize.Words of s is
// s's fields apart by spaces (Words lower-cases nothing and splits at
// spaces alone), and s need not be split to be read.
func plainWords(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ':
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			if i == 0 || s[i-1] == ' ' {
				n++
			}
		default:
			return 0, false
		}
	}
	return n, true
}

// knownShare is the idf-weighted share of r's terms some document holds.
func knownShare(r *Request, idf []float64) float64 {
	var all, known float64
	for i, t := range r.Terms {
		all += idf[i]
		if t.Docs > 0 {
			known += idf[i]
		}
	}
	if all == 0 {
		return 0
	}
	return known / all
}

// idfs returns the inverse document frequency of each of r's terms.
func idfs(r *Request) []float64 {
	out := make([]float64, len(r.Terms))
	for i, t := range r.Terms {
		out[i] = IDF(t.Docs, r.Docs)
	}
	return out
}

// cover returns the idf-weighted shares of the request's terms found in
// the candidate's name and anywhere in its text (name included). A term no
// document holds counts with the highest idf, so matching one rare word of
// a request made of unknown words covers little of it.
func cover(r *Request, idf []float64, words entryText) (name, text float64) {
	if len(r.Terms) == 0 {
		return 0, 0
	}
	var sum, inName, inText float64
	for i, t := range r.Terms {
		w := idf[i]
		sum += w
		switch {
		case containsWord(words.name, t.Word):
			inName += w
			inText += w
		case words.holds(t.Word):
			inText += w
		}
	}
	if sum == 0 {
		return 0, 0
	}
	return inName / sum, inText / sum
}

// IDF is the BM25 inverse document frequency of a word found in df of n
// documents (query.Fuse weighs terms the same way).
func IDF(df, n int) float64 {
	nf := float64(max(n, 1))
	d := math.Min(float64(max(df, 0)), nf)
	return math.Log(1 + (nf-d+0.5)/(d+0.5))
}

func containsWord(words []string, w string) bool {
	for _, x := range words {
		if normalize.WordMatch(x, w) {
			return true
		}
	}
	return false
}

// containsField is containsWord of the fields of s apart by spaces (s
// plain, plainWords), read in place (normalize.TextHolds): a word matching
// w begins with w's first four bytes (w's all when shorter).
func containsField(s, w string) bool {
	return normalize.TextHolds(s, w[:min(4, len(w))], func(x string) bool { return normalize.WordMatch(x, w) })
}
