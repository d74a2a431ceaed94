package search

import (
	"encoding/json"
	"strings"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
)

// Tool-level answers: GET /tools and the MCP find_tool tool run the one
// search (tools' names and descriptions are searchable and embedded) and
// list, in its order, each server's tools matching the request as
// (server, tool) pairs.

// Bounds of a tool-level request: pairs returned, servers searched to
// fill them, and the request's length.
const (
	DefaultToolPairs = 10
	MaxToolPairs     = 50
	toolServers      = 30
	maxToolQuery     = 2000
)

// ToolPair is one answer of a tool-level request.
type ToolPair struct {
	Server ToolServer  `json:"server"`
	Tool   MatchedTool `json:"tool"`
	// ClientConfig is the {"mcpServers": {...}} configuration that reaches
	// the server (absent when it has no endpoint or package a client can
	// start).
	ClientConfig json.RawMessage `json:"clientConfig,omitempty"`
}

// ToolServer is the server half of a pair.
type ToolServer struct {
	Identifier  string          `json:"identifier"`
	DisplayName string          `json:"displayName"`
	Description string          `json:"description,omitempty"`
	Score       float64         `json:"score"`
	Health      json.RawMessage `json:"health,omitempty"`
}

// ToolsAnswer is a tool-level request's answer.
type ToolsAnswer struct {
	Query   string     `json:"query"`
	Results []ToolPair `json:"results"`
}

// ToolsQuery checks a tool-level request (text, and limit: 0 for the
// default) and returns the local search that answers it and the limit.
func ToolsQuery(text string, limit int) (*Query, int, error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return nil, 0, invalid("q is required: what the tool should do")
	case len(text) > maxToolQuery:
		return nil, 0, invalid("q is %d bytes long: at most %d", len(text), maxToolQuery)
	case limit == 0:
		limit = DefaultToolPairs
	case limit < 1 || limit > MaxToolPairs:
		return nil, 0, invalid("limit %d: want a whole number from 1 to %d", limit, MaxToolPairs)
	}
	return &Query{Text: text, Mode: federation.ModeNone, PageSize: toolServers, Attributes: []string{"bindings"}}, limit, nil
}

// ToolPairs lists up to limit (server, tool) pairs of a search's answer,
// in its order; config, when set, gives a result's client configuration.
func ToolPairs(q *Query, ans *Answer, limit int, config func(entry map[string]json.RawMessage) json.RawMessage) *ToolsAnswer {
	out := &ToolsAnswer{Query: q.Text, Results: []ToolPair{}}
	for _, h := range ans.Hits {
		var tools []MatchedTool
		if json.Unmarshal(h.Entry[FieldMatchedTools], &tools) != nil || len(tools) == 0 {
			continue
		}
		srv := ToolServer{Identifier: h.Identifier, Score: h.Score, Health: h.Entry[normalize.FieldHealth]}
		_ = json.Unmarshal(h.Entry["displayName"], &srv.DisplayName)
		_ = json.Unmarshal(h.Entry["description"], &srv.Description)
		var cfg json.RawMessage
		if config != nil {
			cfg = config(h.Entry)
		}
		for _, t := range tools {
			if len(out.Results) == limit {
				return out
			}
			out.Results = append(out.Results, ToolPair{Server: srv, Tool: t, ClientConfig: cfg})
		}
	}
	return out
}
