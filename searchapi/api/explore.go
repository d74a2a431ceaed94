package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// ARD's defaults for one requested facet.
const (
	ardFacetLimit    = 20
	ardFacetMinCount = 1
)

// ardFacetRequest is one entry of resultType.facets.
type ardFacetRequest struct {
	Field    string `json:"field"`
	Limit    *int   `json:"limit"`
	MinCount *int   `json:"minCount"`
}

// ARDBucket is one counted value.
type ARDBucket struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// ARDFacetResult is one field's answer: the buckets kept, most frequent
// first, and how many counts the buckets left out held.
type ARDFacetResult struct {
	Buckets    []ARDBucket `json:"buckets"`
	OtherCount int         `json:"otherCount"`
}

// ARDExploreResponse is ARD's POST /explore answer.
type ARDExploreResponse struct {
	ResultType string                    `json:"resultType"`
	Facets     map[string]ARDFacetResult `json:"facets"`
}

// parseResultType reads ARD's resultType: an object whose only supported
// member is facets. Any other result type is a 501.
func parseResultType(raw json.RawMessage) ([]ardFacetRequest, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		var name string
		if json.Unmarshal(raw, &name) == nil && name != "" && name != "facets" {
			return nil, door.NotImplemented("resultType %q is not supported; this registry answers resultType.facets", name)
		}
		return nil, door.Invalid(`resultType must be an object such as {"facets": [{"field": "type"}]}`)
	}
	var other []string
	for k := range members {
		if k != "facets" {
			other = append(other, k)
		}
	}
	if len(other) > 0 {
		slices.Sort(other)
		return nil, door.NotImplemented("resultType %s is not supported; this registry answers resultType.facets", strings.Join(other, ", "))
	}
	var reqs []ardFacetRequest
	dec := json.NewDecoder(bytes.NewReader(members["facets"]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&reqs); err != nil || len(reqs) == 0 {
		return nil, door.Invalid(`resultType.facets must be a non-empty array of {"field", "limit", "minCount"}`)
	}
	for i, f := range reqs {
		if _, ok := normalize.FacetFields[f.Field]; !ok {
			return nil, door.Unsupported("resultType.facets[%d].field %q is not supported (one of %s)", i, f.Field, strings.Join(sortedFacetNames(), ", "))
		}
		if f.Limit != nil && *f.Limit < 1 {
			return nil, door.Invalid("resultType.facets[%d].limit must be at least 1", i)
		}
		if f.MinCount != nil && *f.MinCount < 0 {
			return nil, door.Invalid("resultType.facets[%d].minCount must not be negative", i)
		}
	}
	return reqs, nil
}

func sortedFacetNames() []string {
	names := make([]string, 0, len(normalize.FacetFields))
	for n := range normalize.FacetFields {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// exploreARD answers POST /explore in ARD's shape.
func (d *Door) exploreARD(w http.ResponseWriter, r *http.Request, q *search.Query, rawType json.RawMessage) error {
	reqs, err := parseResultType(rawType)
	if err != nil {
		return err
	}
	var fields []string
	for _, f := range reqs {
		if field := normalize.FacetFields[f.Field]; !slices.Contains(fields, field) {
			fields = append(fields, field)
		}
	}
	_, dist, err := d.engine.Facets(r.Context(), door.Prepare(r.Context(), q), fields)
	if err != nil {
		return err
	}
	out := ARDExploreResponse{ResultType: "facets", Facets: map[string]ARDFacetResult{}}
	for _, f := range reqs {
		limit, minCount := ardFacetLimit, ardFacetMinCount
		if f.Limit != nil {
			limit = *f.Limit
		}
		if f.MinCount != nil {
			minCount = *f.MinCount
		}
		out.Facets[f.Field] = buckets(dist[normalize.FacetFields[f.Field]], limit, minCount)
	}
	door.WriteJSON(w, http.StatusOK, out)
	return nil
}

// buckets orders counts most frequent first (ties by value), keeps at most
// limit of those with at least minCount, and sums the rest into otherCount.
func buckets(counts map[string]int, limit, minCount int) ARDFacetResult {
	all := make([]ARDBucket, 0, len(counts))
	for v, c := range counts {
		all = append(all, ARDBucket{Value: v, Count: c})
	}
	slices.SortFunc(all, func(a, b ARDBucket) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Value, b.Value)
	})
	res := ARDFacetResult{Buckets: []ARDBucket{}}
	for _, b := range all {
		if b.Count >= minCount && len(res.Buckets) < limit {
			res.Buckets = append(res.Buckets, b)
		} else {
			res.OtherCount += b.Count
		}
	}
	return res
}
