package hybrid

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
)

// ServerTools is what the tools sub-queries read of a server they found,
// prepared for matching a request's words against its tools.
type ServerTools struct {
	// Words are its tool words as the tools index holds them
	// (normalize.ToolWords).
	Words string
	// Held are Words, one a word.
	Held []string
	// Tools is its tool list: read only for a server that may name a tool
	// (Request.NamesTools), nil otherwise, and when the tools index holds
	// none or one that cannot be read.
	Tools []normalize.Tool
	// ToolWords holds, for each of Tools, the words of its name, title and
	// description (normalize.Words of normalize.ToolText).
	ToolWords [][]string
}

// readTools reads the servers' tools of each hit of results, the answers
// of the tools sub-queries queries (by result, then hit): their words, and
// the tool lists of those whose words names admits (Request.NamesTools;
// nil: all), read from the tools index under each query's own filter in
// one more multi-search (listQueries). A server found more than once is
// read once.
func readTools(ctx context.Context, c Client, queries []*meilisearch.SearchRequest, results []meilisearch.SearchResponse, idField string, names func([]string) bool) ([][]*ServerTools, error) {
	byID := map[string]*ServerTools{}
	out := make([][]*ServerTools, len(results))
	for i, res := range results {
		out[i] = make([]*ServerTools, len(res.Hits))
		for j, h := range res.Hits {
			id, _ := String(h[idField])
			st := byID[id]
			if st == nil {
				words, _ := String(h[normalize.FieldToolWords])
				st = &ServerTools{Words: words, Held: strings.Fields(words)}
				byID[id] = st
			}
			out[i][j] = st
		}
	}
	lists, err := listQueries(queries, results, idField, names)
	if err != nil || len(lists) == 0 {
		return out, err
	}
	answers, err := multiSearch(ctx, c, lists)
	if err != nil {
		return nil, fmt.Errorf("tool lists: %w", err)
	}
	for _, res := range answers {
		for _, h := range res.Hits {
			if id, _ := String(h[idField]); byID[id] != nil && byID[id].Tools == nil {
				byID[id].setTools(h[normalize.FieldTools])
			}
		}
	}
	return out, nil
}

// listQueries are the requests reading the tool lists of the servers of
// results whose words names admits: one per filter of queries (each
// query's found servers under that query's filter), so the caller's access
// and the search's filters apply to the lists as to the words.
func listQueries(queries []*meilisearch.SearchRequest, results []meilisearch.SearchResponse, idField string, names func([]string) bool) ([]*meilisearch.SearchRequest, error) {
	var out []*meilisearch.SearchRequest
	byFilter := map[string]*meilisearch.SearchRequest{}
	ids := map[string][]string{}
	for i, q := range queries {
		f, ok := q.Filter.(string)
		if q.Filter != nil && !ok {
			return nil, fmt.Errorf("tool lists: filter %T, want a string", q.Filter)
		}
		for _, h := range results[i].Hits {
			id, _ := String(h[idField])
			words, _ := String(h[normalize.FieldToolWords])
			if slices.Contains(ids[f], id) || names != nil && !names(strings.Fields(words)) {
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

// setTools decodes raw, a tool list, onto st, each tool's words beside it.
// A list that cannot be read leaves the server its words alone: they
// still count towards the request's words, and name no tool.
func (st *ServerTools) setTools(raw json.RawMessage) {
	var ts normalize.ToolSet
	if len(raw) == 0 || json.Unmarshal(raw, &ts) != nil {
		return
	}
	*st = *NewServerTools(st.Words, ts.Items)
}

// NewServerTools prepares a server's tool words (normalize.ToolWords) and
// tools for matching: its words one a word, and each tool's words.
func NewServerTools(words string, tools []normalize.Tool) *ServerTools {
	st := &ServerTools{Words: words, Held: strings.Fields(words), Tools: tools}
	if len(tools) == 0 {
		return st
	}
	st.ToolWords = make([][]string, len(tools))
	for i, t := range tools {
		st.ToolWords[i] = normalize.Words(normalize.ToolText(t))
	}
	return st
}
