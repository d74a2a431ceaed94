package hybrid

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
)

// ServerTools is what the tools sub-queries read of a server they found,
// prepared for matching a request's words against its tools.
type ServerTools struct {
	// Words are its tool words as the tools index holds them
	// (normalize.ToolWords).
	Words string
	// Held are Words, one a word.
	Held []string
	// Tools is its tool list (nil when the tool document holds none, or
	// one that cannot be read).
	Tools []normalize.Tool
	// ToolWords holds, for each of Tools, the words of its name, title and
	// description (normalize.Words of normalize.ToolText).
	ToolWords [][]string
}

// prepareTools reads the servers' tools of each hit of results, the
// answers of tools sub-queries (by result, then hit). A server two queries
// found (the same idField value and tool list) is read once.
func prepareTools(results []meilisearch.SearchResponse, idField string) [][]*ServerTools {
	type read struct {
		raw   json.RawMessage
		tools *ServerTools
	}
	seen := map[string]read{}
	out := make([][]*ServerTools, len(results))
	for i, res := range results {
		out[i] = make([]*ServerTools, len(res.Hits))
		for j, h := range res.Hits {
			id, _ := String(h[idField])
			raw := h[normalize.FieldTools]
			if r, ok := seen[id]; ok && bytes.Equal(r.raw, raw) {
				out[i][j] = r.tools
				continue
			}
			out[i][j] = serverTools(h)
			seen[id] = read{raw: raw, tools: out[i][j]}
		}
	}
	return out
}

// serverTools reads the tools of one tools index hit: its words and its
// tool list. A list that cannot be read leaves the server its words alone:
// they still count towards the request's words, and name no tool.
func serverTools(h meilisearch.Hit) *ServerTools {
	words, _ := String(h[normalize.FieldToolWords])
	var ts normalize.ToolSet
	if raw := h[normalize.FieldTools]; len(raw) > 0 && json.Unmarshal(raw, &ts) != nil {
		ts.Items = nil
	}
	return NewServerTools(words, ts.Items)
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
