package door

import (
	"context"
	"net/http"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// Prepare readies q for the caller ctx carries, as every door must before
// the engine reads it: the caller's groups become q.Access (the access
// rule, context.go), never anything the request says. It returns q.
func Prepare(ctx context.Context, q *search.Query) *search.Query {
	q.Access = AccessOf(ctx)
	return q
}

// ViaOf returns the registries r's Via header says the request passed
// through (the engine's loop check for federation).
func ViaOf(r *http.Request) []string {
	return federation.ParseVia(r.Header.Values("Via"))
}

// Search runs q for the HTTP request r: prepared for its caller (Prepare)
// and with the registries of its Via header (ViaOf). Doors that answer
// over HTTP search through it; MCP, whose tool calls carry no Via, calls
// the engine with Prepare and no chain.
func Search(r *http.Request, e *search.Engine, q *search.Query) (*search.Answer, error) {
	return e.Search(r.Context(), Prepare(r.Context(), q), ViaOf(r))
}
