package hybrid

import (
	"fmt"
	"strings"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/query"
)

// toolTermScore is the score a server's tools give a term they hold: what
// a single-term sub-query gave a document matching it only in its tools'
// names and titles (0.59-0.61) or descriptions (0.51-0.53), measured when
// those were the records index's last searchable attributes.
const toolTermScore = 0.55

// toolHitLimit is how many servers each tools sub-query returns: those
// whose tools hold the most of the request's words.
const toolHitLimit = 10

// searchesTools reports whether r has a tools sub-query.
func (r Request) searchesTools() bool { return r.ToolIndex != "" && len(r.Terms) > 0 }

// toolStrategies are the matching strategies of the tools sub-queries:
// the request's terms (most informative first) are sent once under each,
// and a server either finds counts. Each alone misses servers: "last"
// keeps the first term to the end, so a first term no tool holds leaves it
// nothing (about half of the bench's requests); "frequency" keeps the
// rarest term to the end, so a word one unrelated server happens to hold
// ("look", in a server's 2,000 "Look up stock" tools) hides every other
// server, and some requests whose every term some tool holds find nothing
// under it. Sending the query again when one finds too little cost a
// round trip to half the requests; two queries of all the terms, over an
// index ranked by words alone, cost the search less, and one per term
// cost it as much as the tools' text inside the records
// (docs/MEASUREMENTS.md).
var toolStrategies = []meilisearch.MatchingStrategy{meilisearch.Last, meilisearch.Frequency}

// toolQueries are the tools sub-queries: the request's terms as one query
// under each of toolStrategies, retrieving each server's tool words
// (normalize.ToolWords: one string, where its tool list would cost the
// search more to read and decode than the query itself).
func (r Request) toolQueries(attrs []string) []*meilisearch.SearchRequest {
	if !r.searchesTools() {
		return nil
	}
	text := strings.Join(r.Terms, " ")
	out := make([]*meilisearch.SearchRequest, len(toolStrategies))
	for i, m := range toolStrategies {
		out[i] = &meilisearch.SearchRequest{
			IndexUID: r.ToolIndex, Query: text, Filter: r.Filter, Limit: toolHitLimit,
			AttributesToRetrieve: append(attrs[:len(attrs):len(attrs)], normalize.FieldToolWords),
			MatchingStrategy:     m,
		}
	}
	return out
}

// toolHits reads the tools sub-queries' answers into the term results: a
// server whose tools hold a term is a hit of that term's sub-query
// (scored toolTermScore unless its own text scored higher) and counts
// among the documents holding it. It returns each server's tool words by
// ID.
func (r Request) toolHits(results []meilisearch.SearchResponse, tr []query.TermResult, termDocs []int, want, preferred map[string]bool) (map[string]string, error) {
	if !r.searchesTools() {
		return nil, nil
	}
	if len(results) != len(toolStrategies) {
		return nil, fmt.Errorf("%w: %d tools answers", ErrBadResponse, len(results))
	}
	found := map[string]string{}
	at := hitPlaces(tr)
	for _, res := range results {
		for _, h := range res.Hits {
			id, ok := String(h[r.IDField])
			if !ok {
				return nil, fmt.Errorf("%w: tool hit without a string %s", ErrBadResponse, r.IDField)
			}
			if _, dup := found[id]; dup {
				continue // found by both queries
			}
			if want != nil && !preferred[id] && holdsAny(h[r.Prefer.Field], want) {
				preferred[id] = true
			}
			words, _ := String(h[normalize.FieldToolWords])
			found[id] = words
			r.addToolHit(id, strings.Fields(words), tr, termDocs, at)
		}
	}
	return found, nil
}

// hitPlaces returns, for each term result of tr, its hits' places by ID.
func hitPlaces(tr []query.TermResult) []map[string]int {
	at := make([]map[string]int, len(tr))
	for i := range tr {
		at[i] = make(map[string]int, len(tr[i].Hits))
		for j, h := range tr[i].Hits {
			at[i][h.ID] = j
		}
	}
	return at
}

// addToolHit makes the server id, whose tools hold the words held, a hit
// of each term's sub-query whose term they hold, counted among the
// documents holding it: a hit of its own text keeps its score when higher
// than toolTermScore. at holds the hits' places (hitPlaces), kept up to
// date.
func (r Request) addToolHit(id string, held []string, tr []query.TermResult, termDocs []int, at []map[string]int) {
	for i, term := range r.Terms {
		if !HoldsTerm(held, term) {
			continue
		}
		tr[i].TotalHits++
		termDocs[i] = tr[i].TotalHits
		if j, ok := at[i][id]; ok {
			tr[i].Hits[j].Score = max(tr[i].Hits[j].Score, toolTermScore)
			continue
		}
		at[i][id] = len(tr[i].Hits)
		tr[i].Hits = append(tr[i].Hits, query.Hit{ID: id, Score: toolTermScore})
	}
}

// HoldsTerm reports whether words hold term: equal, or one the other's
// stem (a word of four letters or more starting the other, at most three
// letters shorter: "markdown" and "markdowns", "convert" and "converts").
func HoldsTerm(words []string, term string) bool {
	for _, w := range words {
		if sameStem(w, term) {
			return true
		}
	}
	return false
}

// sameStem reports whether a and b are the same word or one the other's
// stem (see HoldsTerm).
func sameStem(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 4 && strings.HasPrefix(b, a) && len(b)-len(a) <= 3
}
