package searchapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agentfinder/agentfinder/searchapi/api"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// TestExploreARD: the request shape the ARD conformance tool sends gets
// ARD's response shape; limit, minCount and otherCount hold; an unknown
// result type is a 501.
func TestExploreARD(t *testing.T) {
	f := newFixture(t, nil)
	var legacy search.ExploreAnswer
	f.do("POST", "/explore", map[string]any{"query": map[string]any{"text": "healthcare"}, "facets": []string{"type", "compliance"}}, nil, &legacy)

	var out map[string]json.RawMessage
	resp := f.do("POST", "/explore", map[string]any{
		"query":      map[string]any{"text": "healthcare"},
		"resultType": map[string]any{"facets": []map[string]any{{"field": "type"}, {"field": "compliance", "limit": 1, "minCount": 1}}},
	}, nil, &out)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var rt string
	var facets map[string]api.ARDFacetResult
	if json.Unmarshal(out["resultType"], &rt) != nil || rt != "facets" || json.Unmarshal(out["facets"], &facets) != nil {
		t.Fatalf("response %s", out)
	}
	if len(out) != 2 {
		t.Errorf("members %v, want only resultType and facets", out)
	}
	types := facets["type"]
	sum := types.OtherCount
	for _, b := range types.Buckets {
		sum += b.Count
		if b.Count != legacy.Facets["type"][b.Value] {
			t.Errorf("type bucket %+v, legacy count %d", b, legacy.Facets["type"][b.Value])
		}
	}
	if len(types.Buckets) != len(legacy.Facets["type"]) || types.OtherCount != 0 || sum == 0 {
		t.Errorf("type facet %+v, want every value of %v", types, legacy.Facets["type"])
	}
	comp := facets["compliance"]
	wantOther := -comp.Buckets[0].Count
	for _, c := range legacy.Facets["compliance"] {
		wantOther += c
		if c > comp.Buckets[0].Count {
			t.Errorf("compliance bucket %+v is not the most frequent of %v", comp.Buckets[0], legacy.Facets["compliance"])
		}
	}
	if len(comp.Buckets) != 1 || comp.OtherCount != wantOther {
		t.Errorf("compliance with limit 1: %+v, want one bucket and otherCount %d", comp, wantOther)
	}

	for _, c := range []struct {
		resultType any
		status     int
	}{
		{map[string]any{"histogram": map[string]any{"field": "updatedAt"}}, http.StatusNotImplemented},
		{"entries", http.StatusNotImplemented},
		{map[string]any{"facets": []map[string]any{{"field": "nope"}}}, http.StatusBadRequest},
		{map[string]any{"facets": []map[string]any{}}, http.StatusBadRequest},
		{map[string]any{"facets": []map[string]any{{"field": "type", "limit": 0}}}, http.StatusBadRequest},
	} {
		var e door.ErrorBody
		resp := f.do("POST", "/explore", map[string]any{"query": map[string]any{"text": "x"}, "resultType": c.resultType}, nil, &e)
		if resp.StatusCode != c.status || e.Error.Message == "" {
			t.Errorf("resultType %v: %d %+v, want %d", c.resultType, resp.StatusCode, e, c.status)
		}
		if c.status == http.StatusNotImplemented && e.Error.Code != door.CodeNotImplemented {
			t.Errorf("resultType %v: code %q", c.resultType, e.Error.Code)
		}
	}
}
