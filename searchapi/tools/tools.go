// Package tools is the door of tool-level requests: GET /tools?q=...&limit=N
// answers with (server, tool) pairs (search.ToolPairs), each with the
// server's ready MCP client configuration (door.MCPClientConfig, the one
// the entry's page shows). It imports the engine and searchapi/door only.
package tools

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// Door serves GET /tools over an engine.
type Door struct{ engine *search.Engine }

// New returns the tools door over e.
func New(e *search.Engine) *Door { return &Door{engine: e} }

// Routes are the door's one route, answering errors in the Agent Finder
// shape.
func (d *Door) Routes() []door.Route {
	return []door.Route{{Pattern: "GET /tools", Handle: d.handleTools}}
}

func (d *Door) handleTools(w http.ResponseWriter, r *http.Request) error {
	qv := r.URL.Query()
	limit := 0
	if v := qv.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return door.Invalid("limit %q: want a whole number from 1 to %d", v, search.MaxToolPairs)
		}
		limit = n
	}
	q, limit, err := search.ToolsQuery(qv.Get("q"), limit)
	if err != nil {
		return err
	}
	ans, err := door.Search(r, d.engine, q)
	if err != nil {
		return err
	}
	door.WriteJSON(w, http.StatusOK, search.ToolPairs(q, ans, limit, ClientConfig))
	return nil
}

// ClientConfig is a result's MCP client configuration (nil when it has
// none), for search.ToolPairs.
func ClientConfig(entry map[string]json.RawMessage) json.RawMessage {
	cfg, _ := door.MCPClientConfig(entry)
	return cfg
}
