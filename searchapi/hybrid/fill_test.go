package hybrid

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/query"
)

// fillIndex builds an index whose semantic list is full: more documents
// near the request's vector than query.SubQueryLimit, none holding the
// word "airline", and one farther document that does; the five nearest
// hold "visa".
func fillIndex(t *testing.T) (*meilitest.Server, string) {
	t.Helper()
	var docs []doc
	for i := range query.SubQueryLimit + 10 {
		desc := "Answers questions about travel."
		if i < 5 {
			desc += " Visa rules."
		}
		docs = append(docs, doc{fmt.Sprintf("n%d", i), fmt.Sprintf("urn:ai:n.test:agent:near%d", i), fmt.Sprintf("Near %d", i),
			desc, "agent",
			map[string]any{normalize.EmbedderName: []float32{1, 0.01 * float32(i), 0}}})
	}
	docs = append(docs, doc{"far", "urn:ai:far.test:agent:airline", "Airline Desk", "Books airline seats.", "mcp",
		map[string]any{normalize.EmbedderName: []float32{0.5, 1, 0}}})
	return indexOf(t, "hybridfill", docs)
}

// TestFillSemantic: a keyword hit past the semantic list's limit is fused
// with its real similarity (Meilisearch's (1 + cosine) / 2), asked for in
// one more round trip, instead of 0; filtered and scaled searches too.
func TestFillSemantic(t *testing.T) {
	srv, index := fillIndex(t)
	ctx := context.Background()
	vec := []float32{1, 0, 0}
	far := "urn:ai:far.test:agent:airline"
	cos := 0.5 / math.Sqrt(0.25+1)
	want := (1 + cos) / 2
	for _, tc := range []struct {
		name   string
		filter any
	}{
		{"unfiltered", nil},
		{"filtered", "type = mcp OR type = agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := &countingClient{c: srv.Client}
			r, err := Search(ctx, calls, Request{Index: index, Text: "airline", Vector: vec, Filter: tc.filter})
			if err != nil {
				t.Fatal(err)
			}
			h := hitOf(r, far)
			if h == nil || math.Abs(h.Semantic-want) > 0.01 {
				t.Fatalf("the keyword hit past the semantic list: %+v, want semantic %.3f", h, want)
			}
			if calls.n != 2 {
				t.Errorf("%d round trips, want 2 (the search, then the similarity of the hit it left out)", calls.n)
			}
			if got := h.Score; math.Abs(got-(0.2*h.Keyword+0.8*h.Semantic)) > 1e-9 {
				t.Errorf("fused score %.4f is not the fusion of its components %+v", got, h)
			}
		})
	}
	t.Run("scaled", func(t *testing.T) {
		base := Request{Index: index, Text: "airline", Vector: vec}
		r := base
		r.Filter = "type = mcp"
		calls := &countingClient{c: srv.Client}
		gotBase, got, err := Scaled(ctx, calls, base, r)
		if err != nil {
			t.Fatal(err)
		}
		if h := hitOf(gotBase, far); h == nil || math.Abs(h.Semantic-want) > 0.01 {
			t.Errorf("base: %+v, want semantic %.3f", h, want)
		}
		// The filtered list holds one document: not full, nothing to fill.
		if h := hitOf(got, far); h == nil || math.Abs(h.Semantic-want) > 0.01 {
			t.Errorf("filtered: %+v, want semantic %.3f", h, want)
		}
		if calls.n != 2 || calls.queries != 2*(1+len(gotBase.Terms))+1 {
			t.Errorf("%d round trips of %d sub-queries, want 2 of %d", calls.n, calls.queries, 2*(1+len(gotBase.Terms))+1)
		}
	})
	t.Run("nothing left out", func(t *testing.T) {
		calls := &countingClient{c: srv.Client}
		r, err := Search(ctx, calls, Request{Index: index, Text: "visa", Vector: vec})
		if err != nil {
			t.Fatal(err)
		}
		if calls.n != 1 || len(r.Hits) != query.SubQueryLimit || r.Hits[0].Keyword == 0 {
			t.Errorf("%d round trips for %d hits, want 1: every keyword hit is in the semantic list", calls.n, len(r.Hits))
		}
	})
}

func hitOf(r Result, id string) *query.Scored {
	for i := range r.Hits {
		if r.Hits[i].ID == id {
			return &r.Hits[i]
		}
	}
	return nil
}
