package search

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/searchapi/query"
)

// countingEmbedder embeds like rainEmbedder and records every text it
// embeds; fail makes it fail.
type countingEmbedder struct {
	mu    sync.Mutex
	texts []string
	fail  bool
}

func (*countingEmbedder) Dimensions() int { return 2 }

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail {
		return nil, errors.New("model unavailable")
	}
	c.texts = append(c.texts, texts[0]) // the request's text (small talk rides along once)
	return rainEmbedder{}.Embed(ctx, texts)
}

func (c *countingEmbedder) embedded() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.texts)
}

func cacheEngine(t *testing.T, emb Embedder, size int) *Engine {
	t.Helper()
	e, err := New(Config{Index: "unused", Meili: meili.New("http://127.0.0.1:1", ""), PublicURL: "https://finder.test.example",
		Embedder: emb, QueryRewriter: query.Rewrite, QueryCacheSize: size}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestQueryCache: a text is rewritten and embedded once; its NFKC twin
// (what the tokenizer and the rewriter read alike) shares the entry, a
// text differing in case does not (the model reads case); a hit returns
// what a miss computed, as a copy; the cache holds at most its size.
func TestQueryCache(t *testing.T) {
	emb := &countingEmbedder{}
	e := cacheEngine(t, emb, 2)
	ctx := context.Background()
	var w stopwatch
	first := e.prepare(ctx, "will it rain in Paris", &w)
	if len(first.vec) != 2 || !slices.Equal(first.terms, e.searchTerms("will it rain in Paris")) {
		t.Fatalf("prepared %+v", first)
	}
	first.vec[0], first.terms[0] = 99, "changed" // a caller's copy
	again := e.prepare(ctx, "will it rain in Paris", &w)
	if again.vec[0] == 99 || again.terms[0] == "changed" {
		t.Errorf("a hit returned the caller's changes: %+v", again)
	}
	e.prepare(ctx, "will it rain in \uff30aris", &w) // fullwidth P: NFKC "Paris"
	e.prepare(ctx, "will it rain in paris", &w)
	if got, want := emb.embedded(), []string{"will it rain in Paris", "will it rain in paris"}; !slices.Equal(got, want) {
		t.Errorf("embedded %q, want %q", got, want)
	}
	e.prepare(ctx, "umbrella shops", &w) // a third text: the oldest goes
	e.prepare(ctx, "will it rain in Paris", &w)
	if got := emb.embedded(); len(got) != 4 || got[3] != "will it rain in Paris" {
		t.Errorf("after eviction, embedded %q", got)
	}
}

// TestQueryCacheKeepsNoFailure: a text whose embedding failed is not kept
// (the next request embeds it again); keyword only, terms are kept.
func TestQueryCacheKeepsNoFailure(t *testing.T) {
	emb := &countingEmbedder{fail: true}
	e := cacheEngine(t, emb, 0)
	ctx := context.Background()
	var w stopwatch
	if p := e.prepare(ctx, "rain gear", &w); p.vec != nil || len(p.terms) == 0 {
		t.Fatalf("failed embedding: %+v", p)
	}
	emb.mu.Lock()
	emb.fail = false
	emb.mu.Unlock()
	if p := e.prepare(ctx, "rain gear", &w); len(p.vec) != 2 {
		t.Errorf("after the model recovered: %+v, want a vector", p)
	}
	kw := cacheEngine(t, nil, 0)
	kw.prepare(ctx, "rain gear", &w)
	if _, ok := kw.prepared.get("rain gear"); !ok {
		t.Error("keyword only: the terms were not kept")
	}
	off := cacheEngine(t, emb, -1)
	off.prepare(ctx, "sunny days", &w)
	off.prepare(ctx, "sunny days", &w)
	if got := emb.embedded(); len(got) != 3 {
		t.Errorf("cache off: embedded %q, want sunny days twice", got)
	}
}
