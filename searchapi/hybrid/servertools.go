package hybrid

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/meilisearch/meilisearch-go"
	fastjson "github.com/segmentio/encoding/json"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
)

// ServerTools is what the tools sub-queries read of a server they found,
// prepared for matching a request's words against its tools: its tool
// words, and which of them each of its tools holds (its word sets), from
// which the tools that match a request are known without its tool list
// (ToolHolds). The list itself is read only for the servers a page shows
// with a matching tool (ReadToolLists).
type ServerTools struct {
	// Words are its tool words as the tools index holds them
	// (normalize.ToolWords: distinct words, one space apart).
	Words string

	// sets is its tools' word sets as the tools index holds them
	// (normalize.FieldToolWordSets; "": an index an older ingest wrote).
	sets string

	heldMu sync.Mutex
	held   map[string]bool // HoldsTerm(Words, term), by the terms asked
}

// Holds reports whether the server's tool words hold term (HoldsTerm of
// Words), each term read once: a search asks for its terms in each of its
// rules (the term hits, the tools it names). It is safe for concurrent
// use.
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

// ToolHolds returns, for each of the server's tools in list order, how
// many of terms its own words hold (HoldsTerm of normalize.WordText of its
// normalize.ToolText), read from its word sets: each term's matching words
// are found among the server's words once, and each tool's set is asked
// for their positions. It returns false when the tools answer carried no
// word sets (a tools index an older ingest wrote): only the tool list then
// tells (ListHolds).
func (st *ServerTools) ToolHolds(terms []string) ([]int, bool) {
	ws, ok := normalize.ParseWordSets(st.sets)
	if !ok {
		return nil, false
	}
	at := termPositions(st.Words, terms)
	out := make([]int, ws.Len())
	for tool := range out {
		for _, ps := range at {
			for _, p := range ps {
				if ws.Holds(tool, p) {
					out[tool]++
					break
				}
			}
		}
	}
	return out, true
}

// termPositions returns, for each of terms, the positions in words (one
// space apart; 0: the first) of the words holding it (sameStem, as
// HoldsTerm compares them).
func termPositions(words string, terms []string) [][]int {
	out := make([][]int, len(terms))
	leads := make([]string, len(terms))
	for k, t := range terms {
		leads[k] = t[:stemLead(len(t))]
	}
	p := 0
	for rest := words; rest != ""; p++ {
		var w string
		w, rest, _ = strings.Cut(rest, " ")
		for k, t := range terms {
			if strings.HasPrefix(w, leads[k]) && sameStem(w, t) {
				out[k] = append(out[k], p)
			}
		}
	}
	return out
}

// ListHolds returns how many of terms the words of tool t hold (HoldsTerm
// of normalize.WordText of its normalize.ToolText): what ToolHolds reads
// from the word sets, from the tool itself.
func ListHolds(t normalize.Tool, terms []string) int {
	words := normalize.WordText(normalize.ToolText(t))
	n := 0
	for _, term := range terms {
		if HoldsTerm(words, term) {
			n++
		}
	}
	return n
}

// readTools reads the servers' tools of each hit of results, the answers
// of the tools sub-queries (by result, then hit): their words and word
// sets. A server found more than once is read once.
func readTools(results []meilisearch.SearchResponse, idField string) [][]*ServerTools {
	byID := map[string]*ServerTools{}
	out := make([][]*ServerTools, len(results))
	for i, res := range results {
		out[i] = make([]*ServerTools, len(res.Hits))
		for j, h := range res.Hits {
			id, _ := String(h[idField])
			st := byID[id]
			if st == nil {
				words, _ := String(h[normalize.FieldToolWords])
				sets, _ := String(h[normalize.FieldToolWordSets])
				st = &ServerTools{Words: words, sets: sets}
				byID[id] = st
			}
			out[i][j] = st
		}
	}
	return out
}

// ReadToolLists reads, in one request, the tool lists the tools index uid
// holds of the servers ids (identified by their idField) that f keeps
// (the search's filter: the caller's access and the request's filters
// apply to the lists as to the words), decoded, by id (a server's first
// document; none when ids is empty). A list that cannot be read is left
// out. It reads them by the documents route: a search of the tools index
// retrieves no tool list (normalize.ToolDisplayedFields).
func ReadToolLists(ctx context.Context, c Client, uid, idField string, f filter.Expr, ids []string) (map[string][]normalize.Tool, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var docs meilisearch.DocumentsResult
	err := c.Index(uid).GetDocumentsWithContext(ctx, &meilisearch.DocumentsQuery{
		Filter: filter.And(filter.In(idField, ids), f).Filter(), Limit: int64(len(ids)),
		Fields: []string{idField, normalize.FieldTools},
	}, &docs)
	if err != nil {
		return nil, fmt.Errorf("tool lists: %w", err)
	}
	out := make(map[string][]normalize.Tool, len(ids))
	for _, h := range docs.Results {
		id, _ := String(h[idField])
		if _, ok := out[id]; ok {
			continue
		}
		if tools, ok := decodeTools(h[normalize.FieldTools]); ok {
			out[id] = tools
		}
	}
	return out, nil
}

// decodeTools decodes a tool list as the tools index holds it
// (normalize.ToolSet), its items alone, with segmentio/encoding/json: as
// encoding/json reads them, at a third of its cost (a list holds up to
// 500 tools).
func decodeTools(raw json.RawMessage) ([]normalize.Tool, bool) {
	var ts struct {
		Items []normalize.Tool `json:"items"`
	}
	if len(raw) == 0 || fastjson.Unmarshal(raw, &ts) != nil {
		return nil, false
	}
	return ts.Items, true
}

// NewServerTools prepares a server's tools for matching as a tools
// answer gives them: the words and word sets the tools index holds of
// them (normalize.ToolWordsAndSets).
func NewServerTools(tools []normalize.Tool) *ServerTools {
	words, sets := normalize.ToolWordsAndSets(&normalize.ToolSet{Items: tools})
	return &ServerTools{Words: words, sets: sets}
}
