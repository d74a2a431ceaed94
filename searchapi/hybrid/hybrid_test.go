package hybrid

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

type doc struct {
	ID          string         `json:"id"`
	Identifier  string         `json:"identifier"`
	DisplayName string         `json:"displayName"`
	Description string         `json:"description"`
	Type        string         `json:"type"`
	Vectors     map[string]any `json:"_vectors"`
}

// newIndex builds a small index with a 3-dimension userProvided embedder.
func newIndex(t *testing.T) (*meilitest.Server, string) {
	t.Helper()
	return indexOf(t, "hybrid", []doc{
		{"a", "urn:ai:a.test:agent:flights", "Flight Booker", "Books airline tickets and compares fares.", "agent",
			map[string]any{normalize.EmbedderName: [][]float32{{1, 0, 0}, {0.9, 0.1, 0}}}},
		{"b", "urn:ai:b.test:agent:weather", "Weather Now", "Daily weather forecasts for any city.", "agent",
			map[string]any{normalize.EmbedderName: []float32{0, 1, 0}}},
		{"c", "urn:ai:c.test:mcp:hotels", "Hotel Finder", "Finds cheap hotels and compares daily rates.", "mcp",
			map[string]any{normalize.EmbedderName: []float32{0.6, 0, 0.8}}},
		{"d", `urn:ai:d.test:agent:quote"d`, "Quote \"Tool\"", "Stock quotes, daily.", "agent",
			map[string]any{normalize.EmbedderName: nil}},
	})
}

// indexOf builds an index named after name holding docs, searchable by
// name and description, with a 3-dimension userProvided embedder.
func indexOf(t *testing.T, name string, docs []doc) (*meilitest.Server, string) {
	t.Helper()
	srv, index := meilitest.Index(t, name)
	task, err := srv.Client.Index(index).UpdateSettings(&meilisearch.Settings{
		SearchableAttributes: []string{"displayName", "description"},
		FilterableAttributes: []string{"identifier", "type"},
		Embedders:            map[string]meilisearch.Embedder{normalize.EmbedderName: {Source: "userProvided", Dimensions: 3}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(srv.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	task, err = srv.Client.Index(index).AddDocuments(docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(srv.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	return srv, index
}

func ids(r Result) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.ID)
	}
	return out
}

func TestSearchKeywordOnly(t *testing.T) {
	srv, index := newIndex(t)
	ctx := context.Background()
	// "airline" is rare (one document), "daily" common (the three others):
	// the OR over terms finds all four, the rare term's document first.
	r, err := Search(ctx, srv.Client, Request{Index: index, Text: "I need an airline that flies daily, please", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Terms, []string{"airline", "flies", "daily"}) {
		t.Errorf("terms = %v", r.Terms)
	}
	if r.Total != 4 {
		t.Errorf("total = %d, want 4", r.Total)
	}
	got := ids(r)
	if len(got) != 4 || got[0] != "urn:ai:a.test:agent:flights" {
		t.Fatalf("hits = %v, want the airline first, then the daily ones", got)
	}
	top := r.Hits[0]
	if top.Semantic != 0 || top.Keyword <= r.Hits[1].Keyword || !slices.Contains(top.Terms, "airline") {
		t.Errorf("top hit evidence = %+v", top)
	}
}

func TestSearchHybridAndFilter(t *testing.T) {
	srv, index := newIndex(t)
	ctx := context.Background()
	// The vector points at the hotel; no keyword matches "lodging".
	r, err := Search(ctx, srv.Client, Request{Index: index, Text: "cheap lodging", Vector: []float32{0.6, 0, 0.8}, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := ids(r)
	if len(got) != 2 || got[0] != "urn:ai:c.test:mcp:hotels" {
		t.Fatalf("hits = %v, want the hotel first (vector and the word cheap)", got)
	}
	if h := r.Hits[0]; h.Semantic <= 0.9 || h.Keyword <= 0 {
		t.Errorf("hotel evidence = %+v, want both components", h)
	}
	// A filter applies to every sub-query and to the count.
	r, err = Search(ctx, srv.Client, Request{Index: index, Text: "cheap daily", Vector: []float32{0.6, 0, 0.8},
		Filter: `type = "agent"`, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != 3 || slices.Contains(ids(r), "urn:ai:c.test:mcp:hotels") {
		t.Errorf("filtered: total %d, hits %v", r.Total, ids(r))
	}
}

func TestFetch(t *testing.T) {
	srv, index := newIndex(t)
	want := []string{`urn:ai:d.test:agent:quote"d`, "urn:ai:missing", "urn:ai:a.test:agent:flights"}
	hits, err := Fetch(context.Background(), srv.Client, index, "", want, []string{"displayName"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 {
		t.Fatalf("got %d hits, want 2", len(hits))
	}
	var names []string
	for _, h := range hits {
		var n string
		_ = json.Unmarshal(h["displayName"], &n)
		names = append(names, n)
	}
	if !slices.Equal(names, []string{`Quote "Tool"`, "Flight Booker"}) {
		t.Errorf("names = %q, want them in the order asked", names)
	}
	if hits, err := Fetch(context.Background(), srv.Client, index, "", nil, nil, false); err != nil || hits != nil {
		t.Errorf("Fetch(no ids) = %v, %v", hits, err)
	}
}

// TestBestMatch finds which of a document's vectors a query matched: the
// evidence for "which representative query or example matched best".
func TestBestMatch(t *testing.T) {
	srv, index := newIndex(t)
	hits, err := Fetch(context.Background(), srv.Client, index, "", []string{"urn:ai:a.test:agent:flights"}, []string{"identifier"}, true)
	if err != nil || len(hits) != 1 {
		t.Fatalf("Fetch = %v, %v", hits, err)
	}
	vecs, err := Vectors(hits[0], "")
	if err != nil || len(vecs) != 2 {
		t.Fatalf("Vectors = %v, %v; want the two indexed vectors", vecs, err)
	}
	i, c := BestMatch([]float32{0.8, 0.2, 0}, vecs)
	if i != 1 || c < 0.99 {
		t.Errorf("BestMatch = %d, %.3f; want the second vector", i, c)
	}
	if i, c := BestMatch([]float32{1, 0, 0}, nil); i != -1 || c != 0 {
		t.Errorf("BestMatch(no vectors) = %d, %v", i, c)
	}
}

func TestSearchCancelled(t *testing.T) {
	srv, index := newIndex(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Search(ctx, srv.Client, Request{Index: index, Text: "weather"}); err == nil {
		t.Error("Search on a cancelled context succeeded")
	}
}

// TestSearchPrefer boosts documents holding a preferred value for ranking
// only: the hotel (type mcp) passes the other "daily" documents, not the
// much better airline match, and keeps its unboosted score.
func TestSearchPrefer(t *testing.T) {
	srv, index := newIndex(t)
	ctx := context.Background()
	req := Request{Index: index, Text: "airline daily", Limit: 10}
	plain, err := Search(ctx, srv.Client, req)
	if err != nil {
		t.Fatal(err)
	}
	req.Prefer = &Preference{Field: "type", Values: []string{" MCP "}, Weight: 1.5}
	pref, err := Search(ctx, srv.Client, req)
	if err != nil {
		t.Fatal(err)
	}
	got := ids(pref)
	if len(got) != 4 || got[0] != "urn:ai:a.test:agent:flights" || got[1] != "urn:ai:c.test:mcp:hotels" {
		t.Fatalf("preferred order %v (plain %v), want the airline, then the hotel", got, ids(plain))
	}
	if i := slices.Index(ids(plain), "urn:ai:c.test:mcp:hotels"); i < 2 || plain.Hits[i].Score != pref.Hits[1].Score {
		t.Errorf("hotel: plain rank %d; the boost changed its score or it ranked second or better already (%v)", i, ids(plain))
	}
	if len(pref.Preferred) != 1 || !pref.Preferred["urn:ai:c.test:mcp:hotels"] || plain.Preferred != nil {
		t.Errorf("Preferred = %v (plain %v)", pref.Preferred, plain.Preferred)
	}
}

// TestScaledOneRoundTrip: Scaled answers a filtered request and its
// unfiltered base in one multi-search, as two Searches would (the filtered
// one weighing its terms by the base's counts).
func TestScaledOneRoundTrip(t *testing.T) {
	srv, index := newIndex(t)
	ctx := context.Background()
	for _, vec := range [][]float32{{0.6, 0, 0.8}, nil} {
		base := Request{Index: index, Text: "compare daily hotel rates", Vector: vec}
		r := base
		r.Filter = "type = agent"
		calls := &countingClient{c: srv.Client}
		gotBase, got, err := Scaled(ctx, calls, base, r)
		if err != nil {
			t.Fatal(err)
		}
		terms := len(gotBase.Terms)
		// With a vector both send their semantic sub-query; keyword only,
		// the filtered search's count is base's, so it is not asked for.
		want := 2 * (1 + terms)
		if vec == nil {
			want = 1 + 2*terms
		}
		if calls.n != 1 || calls.queries != want {
			t.Errorf("vector %v: Scaled made %d round trips of %d sub-queries, want 1 of %d", vec != nil, calls.n, calls.queries, want)
		}
		wantBase, err := Search(ctx, srv.Client, base)
		if err != nil {
			t.Fatal(err)
		}
		r.Counts = &Counts{Docs: wantBase.Total, TermDocs: wantBase.TermDocs}
		wantRes, err := Search(ctx, srv.Client, r)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotBase, wantBase) {
			t.Errorf("vector %v: base = %+v, want %+v", vec != nil, gotBase, wantBase)
		}
		if !reflect.DeepEqual(got, wantRes) || got.Total != gotBase.Total || len(got.Hits) == 0 {
			t.Errorf("vector %v: filtered = %+v, want %+v (the base's total)", vec != nil, got, wantRes)
		}
		if slices.Contains(ids(got), "urn:ai:c.test:mcp:hotels") || !slices.Contains(ids(gotBase), "urn:ai:c.test:mcp:hotels") {
			t.Errorf("vector %v: the filter must apply to the filtered ranking only: %v / %v", vec != nil, ids(got), ids(gotBase))
		}
	}
}

type countingClient struct {
	c       Client
	n       int
	queries int
}

func (c *countingClient) Index(uid string) meilisearch.IndexManager { return c.c.Index(uid) }

func (c *countingClient) MultiSearchWithContext(ctx context.Context, q *meilisearch.MultiSearchRequest) (*meilisearch.MultiSearchResponse, error) {
	c.n++
	c.queries += len(q.Queries)
	return c.c.MultiSearchWithContext(ctx, q)
}
