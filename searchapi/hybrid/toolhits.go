package hybrid

import (
	"context"
	"encoding/json"
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
// (normalize.ToolWords: one string) and its tools' word sets
// (normalize.FieldToolWordSets: which of the words each tool holds), where
// every server's tool list would cost the search more to read and decode
// than the query itself: the lists are read for the page's servers that
// name a tool alone (ReadToolLists).
func (r Request) toolQueries(attrs []string) []*meilisearch.SearchRequest {
	if !r.searchesTools() {
		return nil
	}
	text := wholeWords(r.Terms)
	out := make([]*meilisearch.SearchRequest, len(toolStrategies))
	for i, m := range toolStrategies {
		out[i] = &meilisearch.SearchRequest{
			IndexUID: r.ToolIndex, Query: text, Filter: r.Filter, Limit: toolHitLimit,
			AttributesToRetrieve: append(attrs[:len(attrs):len(attrs)], normalize.FieldToolWords, normalize.FieldToolWordSets),
			MatchingStrategy:     m,
		}
	}
	return out
}

// wholeWords is the query text of the tools sub-queries: terms, each
// apart from the next by a hard separator (". "), so that Meilisearch
// matches each term alone. Between words a space leaves apart it also
// matches their concatenations (its n-grams: "weather forecast" as
// "weatherforecast"), which HoldsTerm seldom counts as holding a term (it
// allows a word at most three letters longer), and looking those up for
// every two and three neighbouring terms took half of the tools queries'
// processing time in Meilisearch (docs/MEASUREMENTS.md). The index ranks
// by words alone, so the positions the separators move say nothing there.
func wholeWords(terms []string) string { return strings.Join(terms, ". ") }

// toolSearch is the tools sub-queries of a search (of both of Scaled's),
// sent as a multi-search of their own at the same time as the records':
// Meilisearch runs a multi-search's queries one after another, and two
// requests on two cores, so the tools cost a search only the time they
// take beyond the records' (docs/MEASUREMENTS.md). Their failure costs
// the search its tools alone (Result.ToolErr).
type toolSearch struct {
	done    chan struct{}
	cancel  context.CancelFunc
	results []meilisearch.SearchResponse
	// tools holds, for each hit of each of results, its server's tools.
	tools [][]*ServerTools
	err   error
}

// startTools sends queries (none: nothing) in the background, under ctx,
// and prepares the tools of the servers they find, identified by their
// idField (readTools). The caller stops it (stop) whatever happens.
func startTools(ctx context.Context, c Client, queries []*meilisearch.SearchRequest, idField string) *toolSearch {
	t := &toolSearch{done: make(chan struct{})}
	if len(queries) == 0 {
		close(t.done)
		return t
	}
	ctx, t.cancel = context.WithCancel(ctx)
	go func() {
		defer close(t.done)
		if t.results, t.err = multiSearch(ctx, c, queries); t.err == nil {
			t.tools = readTools(t.results, idField)
		}
	}()
	return t
}

// stop cancels the tools search if it still runs and waits for its end:
// no search leaves it behind.
func (t *toolSearch) stop() {
	if t.cancel != nil {
		t.cancel()
	}
	<-t.done
}

// toolHit is a server a tools sub-query found: its identifier, its tools
// and its value of the preference's field.
type toolHit struct {
	id     string
	tools  *ServerTools
	prefer json.RawMessage
}

// hits waits for the tools search and reads its answers as the servers
// each of reqs found (in the order their queries were sent; nil for one
// without tools sub-queries). It reads them all before returning any, so
// a bad answer leaves every request without tools.
func (t *toolSearch) hits(reqs ...*Request) ([][]toolHit, error) {
	<-t.done
	if t.err != nil {
		return nil, fmt.Errorf("tools search: %w", t.err)
	}
	out := make([][]toolHit, len(reqs))
	at := 0
	for i, r := range reqs {
		if !r.searchesTools() {
			continue
		}
		if at+len(toolStrategies) > len(t.results) {
			return nil, fmt.Errorf("%w: %d tools answers", ErrBadResponse, len(t.results))
		}
		var err error
		if out[i], err = r.toolHits(t.results[at:at+len(toolStrategies)], t.tools[at:at+len(toolStrategies)]); err != nil {
			return nil, err
		}
		at += len(toolStrategies)
	}
	return out, nil
}

// toolHits reads the answers of r's tools sub-queries (results, and the
// servers' tools readTools read of them): the servers they found, each
// once.
func (r Request) toolHits(results []meilisearch.SearchResponse, tools [][]*ServerTools) ([]toolHit, error) {
	var out []toolHit
	seen := map[string]bool{}
	for k, res := range results {
		for j, h := range res.Hits {
			id, ok := String(h[r.IDField])
			if !ok {
				return nil, fmt.Errorf("%w: tool hit without a string %s", ErrBadResponse, r.IDField)
			}
			if seen[id] {
				continue // found by both queries
			}
			seen[id] = true
			th := toolHit{id: id, tools: tools[k][j]}
			if r.Prefer != nil {
				th.prefer = h[r.Prefer.Field]
			}
			out = append(out, th)
		}
	}
	return out, nil
}

// addTools adds the servers r's tools sub-queries found (found) to its
// term results in a: a server whose tools hold a term is a hit of that
// term's sub-query (scored toolTermScore unless its own text scored
// higher) and counts among the documents holding it. It keeps each
// server's tools, by ID, in a.tools; want holds the preferred values
// (r.retrieve).
func (r Request) addTools(a *answers, found []toolHit, want map[string]bool) {
	if len(found) == 0 {
		return
	}
	a.tools = make(map[string]*ServerTools, len(found))
	at := hitPlaces(a.terms)
	for _, h := range found {
		if want != nil && !a.preferred[h.id] && holdsAny(h.prefer, want) {
			a.preferred[h.id] = true
		}
		a.tools[h.id] = h.tools
		r.addToolHit(h.id, h.tools, a.terms, a.termDocs, at)
	}
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

// addToolHit makes the server id, whose tools are st, a hit of each
// term's sub-query whose term they hold (ServerTools.Holds), counted
// among the documents holding it: a hit of its own text keeps its score when higher
// than toolTermScore. at holds the hits' places (hitPlaces), kept up to
// date.
func (r Request) addToolHit(id string, st *ServerTools, tr []query.TermResult, termDocs []int, at []map[string]int) {
	for i, term := range r.Terms {
		if !st.Holds(term) {
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

// HoldsTerm reports whether words, one space apart (normalize.ToolWords),
// hold term: equal, or one the other's stem (a word of four letters or
// more starting the other, at most three letters shorter: "markdown" and
// "markdowns", "convert" and "converts"). Every word holding term starts
// with term's stemLead, so words are read in place
// (normalize.TextHolds), comparing only the words starting with it.
func HoldsTerm(words, term string) bool {
	return normalize.TextHolds(words, term[:stemLead(len(term))], func(w string) bool { return sameStem(w, term) })
}

// stemLead is how many of the first letters of a term of n letters every
// word holding it (HoldsTerm) starts with: all of them for a term shorter
// than four letters (equal words alone), else those of its shortest stem,
// three letters shorter but at least four.
func stemLead(n int) int {
	if n < 4 {
		return n
	}
	return max(4, n-3)
}

// sameStem reports whether a and b are the same word or one the other's
// stem (see HoldsTerm): normalize.WordMatch within three letters.
func sameStem(a, b string) bool {
	d := len(a) - len(b)
	return d <= 3 && d >= -3 && normalize.WordMatch(a, b)
}
