package hybrid

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/meilisearch/meilisearch-go"
	fastjson "github.com/segmentio/encoding/json"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
)

// ServerTools is what the tools sub-queries read of a server they found,
// prepared for matching a request's words against its tools: its tool
// list decoded, and each tool's words split, once (List), by the tools
// search while the records' search runs.
type ServerTools struct {
	// Words are its tool words as the tools index holds them
	// (normalize.ToolWords: distinct words, one space apart).
	Words string

	// list is its tool list as the tools index holds it (read only for a
	// server that may name a tool, Request.NamesTools), decoded by List.
	list  json.RawMessage
	once  sync.Once
	tools []normalize.Tool
	// toolWords holds, for each of tools, the words of its name, title
	// and description (normalize.WordText of normalize.ToolText).
	toolWords []string

	heldMu sync.Mutex
	held   map[string]bool // HoldsTerm(Words, term), by the terms asked
}

// Holds reports whether the server's tool words hold term (HoldsTerm of
// Words), each term read once: a search asks for its terms in each of its
// rules (Request.NamesTools, the term hits, the tools it names). It is
// safe for concurrent use.
func (st *ServerTools) Holds(term string) bool {
	st.heldMu.Lock()
	defer st.heldMu.Unlock()
	h, ok := st.held[term]
	if !ok {
		h = HoldsTerm(st.Words, term)
		if st.held == nil {
			st.held = make(map[string]bool, 8)
		}
		st.held[term] = h
	}
	return h
}

// readTools reads the servers' tools of each hit of results, the answers
// of the tools sub-queries queries (by result, then hit): their words, and
// the tool lists of those whose words names admits (Request.NamesTools;
// nil: all), read from the tools index under each query's own filter in
// one more multi-search (listQueries), decoded (ServerTools.List). A
// server found more than once is read once.
func readTools(ctx context.Context, c Client, queries []*meilisearch.SearchRequest, results []meilisearch.SearchResponse, idField string, names func(*ServerTools) bool) ([][]*ServerTools, error) {
	byID := map[string]*ServerTools{}
	out := make([][]*ServerTools, len(results))
	for i, res := range results {
		out[i] = make([]*ServerTools, len(res.Hits))
		for j, h := range res.Hits {
			id, _ := String(h[idField])
			st := byID[id]
			if st == nil {
				words, _ := String(h[normalize.FieldToolWords])
				st = &ServerTools{Words: words}
				byID[id] = st
			}
			out[i][j] = st
		}
	}
	lists, err := listQueries(queries, results, out, idField, names)
	if err != nil || len(lists) == 0 {
		return out, err
	}
	answers, err := multiSearch(ctx, c, lists)
	if err != nil {
		return nil, fmt.Errorf("tool lists: %w", err)
	}
	for _, res := range answers {
		for _, h := range res.Hits {
			if id, _ := String(h[idField]); byID[id] != nil && byID[id].list == nil {
				byID[id].list = h[normalize.FieldTools]
			}
		}
	}
	for _, st := range byID {
		st.List()
	}
	return out, nil
}

// listQueries are the requests reading the tool lists of the servers of
// results (servers: each hit's, as readTools prepared them) that names
// admits: one per filter of queries (each query's found servers under
// that query's filter), so the caller's access and the search's filters
// apply to the lists as to the words.
func listQueries(queries []*meilisearch.SearchRequest, results []meilisearch.SearchResponse, servers [][]*ServerTools, idField string, names func(*ServerTools) bool) ([]*meilisearch.SearchRequest, error) {
	var out []*meilisearch.SearchRequest
	byFilter := map[string]*meilisearch.SearchRequest{}
	ids := map[string][]string{}
	for i, q := range queries {
		f, ok := q.Filter.(string)
		if q.Filter != nil && !ok {
			return nil, fmt.Errorf("tool lists: filter %T, want a string", q.Filter)
		}
		for j, h := range results[i].Hits {
			id, _ := String(h[idField])
			if slices.Contains(ids[f], id) || names != nil && !names(servers[i][j]) {
				continue
			}
			if byFilter[f] == nil {
				byFilter[f] = &meilisearch.SearchRequest{IndexUID: q.IndexUID, AttributesToRetrieve: []string{idField, normalize.FieldTools}}
				out = append(out, byFilter[f])
			}
			ids[f] = append(ids[f], id)
		}
	}
	for f, r := range byFilter {
		r.Filter = filter.And(filter.In(idField, ids[f]), filter.Expr(f)).Filter()
		r.Limit = int64(len(ids[f]))
	}
	return out, nil
}

// List returns the server's tool list and, for each tool, its words
// (normalize.WordText of normalize.ToolText: HoldsTerm reads them), decoding the list the tools index holds on first use. A list
// that cannot be read leaves the server its words alone: they still count
// towards the request's words, and name no tool. It is safe for
// concurrent use.
func (st *ServerTools) List() ([]normalize.Tool, []string) {
	st.once.Do(st.prepare)
	return st.tools, st.toolWords
}

// prepare decodes the tool list read (unless NewServerTools gave it) and
// splits each tool's text into its words. It reads the list's items alone
// (normalize.ToolSet's), with segmentio/encoding/json: as encoding/json
// reads them, at a third of its cost (a search decodes up to twenty lists
// of up to 500 tools).
func (st *ServerTools) prepare() {
	if st.tools == nil && len(st.list) > 0 {
		var ts struct {
			Items []normalize.Tool `json:"items"`
		}
		if fastjson.Unmarshal(st.list, &ts) != nil {
			return
		}
		st.tools = ts.Items
	}
	st.list = nil
	st.toolWords = make([]string, len(st.tools))
	for i, t := range st.tools {
		st.toolWords[i] = normalize.WordText(normalize.ToolText(t))
	}
}

// NewServerTools prepares a server's tool words (normalize.ToolWords) and
// tools for matching.
func NewServerTools(words string, tools []normalize.Tool) *ServerTools {
	return &ServerTools{Words: words, tools: tools}
}
