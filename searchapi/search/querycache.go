package search

import (
	"context"
	"slices"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/text/unicode/norm"
)

// DefaultQueryCacheSize is how many prepared queries an Engine keeps by
// default (about 2.2 KiB each with a 512-dimension vector).
const DefaultQueryCacheSize = 4096

// preparedQuery is what a request's text gives before any search: the
// words searched one by one (searchTerms) and the query vector
// (queryVector; nil keyword only).
type preparedQuery struct {
	terms []string
	vec   []float32
}

// queryCache keeps prepared queries by their text in NFKC form, the
// normalisation the query rewriter and the embedding model's tokenizer
// both start with: a hit returns exactly what preparing the text again
// would (the rewriter then folds case; the model does not, so the key
// keeps it). Nil caches nothing. It is safe for concurrent use.
type queryCache struct {
	c *lru.Cache[string, preparedQuery]
}

// newQueryCache returns a cache of size entries (0: the default; negative:
// nil, no cache).
func newQueryCache(size int) *queryCache {
	if size < 0 {
		return nil
	}
	if size == 0 {
		size = DefaultQueryCacheSize
	}
	c, err := lru.New[string, preparedQuery](size)
	if err != nil {
		return nil
	}
	return &queryCache{c: c}
}

// get returns a copy of the prepared query of key, if held.
func (qc *queryCache) get(key string) (preparedQuery, bool) {
	if qc == nil {
		return preparedQuery{}, false
	}
	p, ok := qc.c.Get(key)
	if !ok {
		return preparedQuery{}, false
	}
	return preparedQuery{terms: slices.Clone(p.terms), vec: slices.Clone(p.vec)}, true
}

// put keeps a copy of p under key.
func (qc *queryCache) put(key string, p preparedQuery) {
	if qc == nil {
		return
	}
	qc.c.Add(key, preparedQuery{terms: slices.Clone(p.terms), vec: slices.Clone(p.vec)})
}

// prepare returns the terms and vector of text, from the cache when it
// holds them. A vector that could not be computed (the embedder failed or
// ctx ended) is not kept: the next request tries again.
func (s *Engine) prepare(ctx context.Context, text string, w *stopwatch) preparedQuery {
	key := norm.NFKC.String(text)
	if p, ok := s.prepared.get(key); ok {
		w.lap(StageCached)
		return p
	}
	p := preparedQuery{terms: s.searchTerms(text)}
	w.lap(StageRewrite)
	p.vec = s.queryVector(ctx, text)
	w.lap(StageEmbed)
	if p.vec != nil || !s.embeds(text) {
		s.prepared.put(key, p)
	}
	return p
}

// embeds reports whether text gets a query vector when embedding works.
func (s *Engine) embeds(text string) bool {
	return s.cfg.Embedder != nil && strings.TrimSpace(text) != ""
}
