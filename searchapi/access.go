package searchapi

import (
	"context"
	"encoding/json"

	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// The access rule: a record whose visibility names groups is seen only by
// callers in one of them; a record without visibility is public. The
// caller's groups come from its verified credential (auth.go), never from
// request text, and are ANDed into the Meilisearch filter of every read
// (search.Query.Access, filter.Access), so totals, facet counts, page tokens and lookups by identifier all count
// only what the caller may see.

// runSearch runs q through the engine for ctx's caller: q.Access is set
// from the verified credential here, once for every door.
func (s *Server) runSearch(ctx context.Context, q *search.Query, via []string) (*search.Answer, error) {
	q.Access = door.AccessOf(ctx)
	return s.engine.Search(ctx, q, via)
}

// exploreCounts counts q's facets (search.Engine.Facets) for ctx's caller.
func (s *Server) exploreCounts(ctx context.Context, q *search.Query, fields []string) (int64, map[string]map[string]int, error) {
	q.Access = door.AccessOf(ctx)
	return s.engine.Facets(ctx, q, fields)
}

// Agent returns the record of identifier as ctx's caller may see it
// (search.Engine.Agent). A missing or hidden record is a not_found error.
func (s *Server) Agent(ctx context.Context, identifier string) (map[string]json.RawMessage, error) {
	return s.engine.Agent(ctx, identifier, door.AccessOf(ctx))
}
