package search

import (
	"context"
	"time"
)

// The steps of a local search Config.Stage is told about, in the order
// they run.
const (
	// StageCached is a query whose terms and vector the query cache held.
	StageCached = "cached"
	// StageRewrite is the query rewriting: the words searched one by one.
	StageRewrite = "rewrite"
	// StageEmbed is the query vector (the embedding model).
	StageEmbed = "embed"
	// StageSearch is the fused ranking: the Meilisearch multi-search of
	// the vector and term sub-queries, decoded and fused.
	StageSearch = "search"
	// StageFetch is the documents of the pool and the page, read from
	// Meilisearch.
	StageFetch = "fetch"
	// StageRerank is the relevance model: the pool's features, its order
	// and the scores.
	StageRerank = "rerank"
	// StageHits is the results: entries, matched tools and evidence.
	StageHits = "hits"
)

// stopwatch times the steps of one search for Config.Stage; without it,
// it does nothing.
type stopwatch struct {
	report func(ctx context.Context, stage string, d time.Duration)
	ctx    context.Context
	last   time.Time
}

// stopwatch starts timing a search's steps.
func (s *Engine) stopwatch(ctx context.Context) stopwatch {
	if s.cfg.Stage == nil {
		return stopwatch{}
	}
	return stopwatch{report: s.cfg.Stage, ctx: ctx, last: time.Now()}
}

// lap reports the time since the last lap as stage.
func (w *stopwatch) lap(stage string) {
	if w.report == nil {
		return
	}
	now := time.Now()
	w.report(w.ctx, stage, now.Sub(w.last))
	w.last = now
}
