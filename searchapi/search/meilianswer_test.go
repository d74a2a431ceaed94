package search

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDecodeSearchResponseMatchesEncodingJSON(t *testing.T) {
	inputs := []string{
		`{"hits":[],"query":"x","processingTimeMs":0,"limit":10,"offset":0,"estimatedTotalHits":0}`,
		`{"hits":[{"identifier":"urn:ai:a","tags":["a\"b","back\\slash","]}{[","東京"],"data":{"x":[1,{"y":"}"}]},"n":-1.5e3,"b":true,"z":null,"_rankingScore":0.875}],"estimatedTotalHits":12}`,
		" {\n \"hits\" : [ { \"a\" : 1 } , { \"b\\u0041\" : \"\\\"\" } ] , \"totalHits\" : 7 , \"facetDistribution\" : {\"type\":{\"x\":2}} } ",
	}
	for _, in := range inputs {
		got, err := decodeSearchResponse([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var want meiliSearchResponse
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		norm := func(r *meiliSearchResponse) []map[string]any {
			var out []map[string]any
			for _, h := range r.Hits {
				m := map[string]any{}
				for k, v := range h {
					var x any
					if err := json.Unmarshal(v, &x); err != nil {
						t.Fatalf("value %q: %v", v, err)
					}
					m[k] = x
				}
				out = append(out, m)
			}
			return out
		}
		if !reflect.DeepEqual(norm(got), norm(&want)) || got.EstimatedTotalHits != want.EstimatedTotalHits || got.TotalHits != want.TotalHits {
			t.Fatalf("%s:\ngot  %v %d %d\nwant %v %d %d", in, norm(got), got.EstimatedTotalHits, got.TotalHits, norm(&want), want.EstimatedTotalHits, want.TotalHits)
		}
		if string(got.FacetDistribution) != string(want.FacetDistribution) {
			t.Fatalf("facets %s vs %s", got.FacetDistribution, want.FacetDistribution)
		}
	}
	for _, bad := range []string{``, `[]`, `{"hits":[{"a":}]}`, `{"hits":[{"a":1}`, `{"hits":"x"}`, `{"a" 1}`, `{"estimatedTotalHits":"x"}`} {
		if _, err := decodeSearchResponse([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzDecodeSearchResponse(f *testing.F) {
	f.Add(`{"hits":[{"a":"b\"c","d":[1,{"e":null}]}],"estimatedTotalHits":3}`)
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		got, err := decodeSearchResponse([]byte(s))
		if err != nil {
			return
		}
		for _, h := range got.Hits {
			for k, v := range h {
				if !json.Valid(v) {
					t.Fatalf("%q: member %q value %q not valid", s, k, v)
				}
			}
		}
	})
}
