package search

import (
	"context"
	"encoding/json"

	"github.com/agentfinder/agentfinder/normalize"
)

// Facets counts q's matching records and, per index field of fields, how
// many of them hold each value (records lacking trust or health counted
// under the value they count as). It is /explore's one Meilisearch request
// (two when trust is counted); q.Access must hold the caller's groups.
func (s *Engine) Facets(ctx context.Context, q *Query, fields []string) (int64, map[string]map[string]int, error) {
	resp, err := s.rawSearch(ctx, s.exploreSearch(q, fields))
	if err != nil {
		return 0, nil, err
	}
	dist, err := decodeFacets(resp.FacetDistribution)
	if err != nil {
		return 0, nil, err
	}
	if err := s.countAbsent(ctx, q, fields, resp.TotalHits, dist); err != nil {
		return 0, nil, err
	}
	return resp.TotalHits, dist, nil
}

// ExploreRequest is POST /explore: facet counts over a query and filters.
// Facets names the fields (this registry's shape); ResultType is the ARD
// shape ({"facets": [{"field", "limit", "minCount"}]}), answered in ARD's
// response shape.
type ExploreRequest struct {
	Request
	Facets     []string        `json:"facets"`
	ResultType json.RawMessage `json:"resultType"`
}

// defaultFacets are counted when a request names none.
var defaultFacets = []string{"type", "publisher", "tags", "compliance"}

// ExploreAnswer is POST /explore's answer.
type ExploreAnswer struct {
	Total  int64                     `json:"total"`
	Facets map[string]map[string]int `json:"facets"`
}

// Explore answers a decoded POST /explore body (raw is the body as sent)
// for a caller in the groups access: the total of its matches and the
// counts of the facets it names by their request names
// (normalize.FacetFields; an unknown one is KindUnsupported).
func (s *Engine) Explore(ctx context.Context, body *ExploreRequest, raw []byte, access []string) (*ExploreAnswer, error) {
	q, err := ParseRequest(&body.Request, raw, false)
	if err != nil {
		return nil, err
	}
	names := body.Facets
	if len(names) == 0 {
		names = defaultFacets
	}
	fields := make([]string, 0, len(names))
	for _, n := range names {
		f, ok := normalize.FacetFields[n]
		if !ok {
			return nil, unsupported("facet %q is not supported", n)
		}
		fields = append(fields, f)
	}
	q.Access = access
	total, dist, err := s.Facets(ctx, q, fields)
	if err != nil {
		return nil, err
	}
	out := &ExploreAnswer{Total: total, Facets: map[string]map[string]int{}}
	for i, n := range names {
		m := dist[fields[i]]
		if m == nil {
			m = map[string]int{}
		}
		out.Facets[n] = m
	}
	return out, nil
}
