package search

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/agentfinder/agentfinder/normalize/rawjson"
)

// decodeSearchResponse reads a Meilisearch search answer. Every search
// passes through here: normalize/rawjson splits it without reflection.
func decodeSearchResponse(b []byte) (*meiliSearchResponse, error) {
	var resp meiliSearchResponse
	err := rawjson.EachMember(b, func(key string, val []byte) error {
		switch key {
		case "hits":
			return rawjson.EachElement(val, func(hit []byte) error {
				h := make(meiliHit, 24)
				if err := rawjson.EachMember(hit, func(k string, v []byte) error {
					h[k] = json.RawMessage(v)
					return nil
				}); err != nil {
					return err
				}
				resp.Hits = append(resp.Hits, h)
				return nil
			})
		case "estimatedTotalHits":
			n, err := strconv.ParseInt(string(val), 10, 64)
			resp.EstimatedTotalHits = n
			return err
		case "totalHits":
			n, err := strconv.ParseInt(string(val), 10, 64)
			resp.TotalHits = n
			return err
		case "facetDistribution":
			resp.FacetDistribution = json.RawMessage(val)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("meilisearch search answer: %w", err)
	}
	return &resp, nil
}

// decodeFacets reads a Meilisearch facetDistribution.
func decodeFacets(raw json.RawMessage) (map[string]map[string]int, error) {
	dist := map[string]map[string]int{}
	if len(raw) == 0 {
		return dist, nil
	}
	if err := json.Unmarshal(raw, &dist); err != nil {
		return nil, err
	}
	return dist, nil
}
