package search

import "context"

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
