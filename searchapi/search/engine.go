package search

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/searchapi/filter"
	"github.com/agentfinder/agentfinder/searchapi/hybrid"
	"github.com/agentfinder/agentfinder/searchapi/query"
)

// Meili is the part of a meilisearch-go client the engine uses (the
// client from ingest/meili.New satisfies it): its index for searches and
// lookups, multi-search for the fused ranking, health for readiness.
type Meili interface {
	Index(uid string) meilisearch.IndexManager
	HealthWithContext(ctx context.Context) (*meilisearch.Health, error)
	MultiSearchWithContext(ctx context.Context, queries *meilisearch.MultiSearchRequest) (*meilisearch.MultiSearchResponse, error)
}

// index is the part of an index the engine calls.
type index interface {
	SearchRawWithContext(ctx context.Context, query string, req *meilisearch.SearchRequest) (*json.RawMessage, error)
	GetDocumentsWithContext(ctx context.Context, param *meilisearch.DocumentsQuery, resp *meilisearch.DocumentsResult) error
}

// Embedder turns texts into vectors for hybrid search. It must be safe for
// concurrent use.
type Embedder interface {
	Dimensions() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Config configures an Engine. Zero values are usable except Meili, Index
// and PublicURL.
type Config struct {
	// Index is the Meilisearch index uid holding normalize.Documents.
	Index string
	// Meili reads the index.
	Meili Meili
	// PublicURL is this registry's base URL as clients reach it, without a
	// trailing slash: every local result's "source", and (with Via) how
	// the engine knows itself in a federation chain.
	PublicURL string
	// Via is this registry's name in Via headers (host[:port] of
	// PublicURL, lower case).
	Via string
	// Federation answers the auto and referrals modes; nil answers locally.
	Federation federation.Searcher
	// Embedder enables hybrid search; nil means keyword only.
	Embedder Embedder
	// QueryRewriter rewrites the search text for the keyword side
	// (searchapi/query.Rewrite): Search looks up the informative terms of
	// its output one by one, Facets sends it as q. nil searches the
	// request's words as they are. The query vector always embeds the text
	// as typed.
	QueryRewriter func(text string) string
	// SemanticRatio is the semantic share of the fused score; 0 (or out of
	// 0..1) means 1 - query.DefaultKeywordWeight. It matters only with an
	// Embedder.
	SemanticRatio float64
	// MinScore is the default cut-off, meaning what a request's minScore
	// (Query.MinScore) and serve's --min-score mean: results scoring below
	// it (0..100) are left out, 0 returns every result, and nil (the
	// flag's -1) leaves the scoring model's own. A Query's MinScore
	// overrides it.
	MinScore *int
	// PageTokenKey signs page tokens; empty means a random key.
	PageTokenKey []byte
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Observe, when set, is told how many results each search returned and
	// how its upstreams answered (the server's metrics).
	Observe func(results int, upstreams []federation.Outcome)
	// CorrelationID, when set, names the request a context belongs to in
	// the engine's log lines.
	CorrelationID func(ctx context.Context) string
	// Unseeded, when set, reports whether the registry crawls with no
	// seeds at all: an empty first page then says so (UnseededReason).
	Unseeded func() bool
	// Stage, when set, is told how long each step of a local search took
	// (the Stage constants), in order: a profile of the request path.
	Stage func(ctx context.Context, stage string, d time.Duration)
	// QueryCacheSize bounds the cache of prepared queries (a text's
	// keyword terms and query vector): 0 means DefaultQueryCacheSize, a
	// negative size turns it off.
	QueryCacheSize int
}

// Engine answers searches, lookups, listings and facet counts over one
// index. Create it with New; it is safe for concurrent use.
type Engine struct {
	cfg        Config
	log        *slog.Logger
	index      index
	tokens     pageTokens
	now        func() time.Time
	publicURL  string
	sourceJSON json.RawMessage // publicURL as a JSON string
	viaName    string
	// keywordWeight is the keyword share of the fused score (> 0).
	keywordWeight float64
	// minScore is the default cut-off (Config.MinScore, within 0..100).
	minScore *int
	talk     smallTalkVectors
	prepared *queryCache
	tools    toolsIndex
}

// New validates cfg and returns an Engine. logger nil discards logs.
func New(cfg Config, logger *slog.Logger) (*Engine, error) {
	if cfg.Meili == nil {
		return nil, errors.New("search: Config.Meili is required")
	}
	if cfg.Index == "" {
		return nil, errors.New("search: Config.Index is required")
	}
	if u, err := url.Parse(cfg.PublicURL); err != nil || u.Host == "" {
		return nil, fmt.Errorf("search: PublicURL %q is not an absolute URL", cfg.PublicURL)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if len(cfg.PageTokenKey) == 0 {
		cfg.PageTokenKey = make([]byte, 32)
		_, _ = rand.Read(cfg.PageTokenKey)
	}
	s := &Engine{
		cfg:       cfg,
		log:       logger,
		index:     cfg.Meili.Index(cfg.Index),
		tokens:    pageTokens{key: cfg.PageTokenKey},
		now:       cfg.Now,
		publicURL: strings.TrimSuffix(cfg.PublicURL, "/"),
		viaName:   cfg.Via,
		tools:     newToolsIndex(cfg.Index),
	}
	if cfg.MinScore != nil {
		m := max(0, min(*cfg.MinScore, 100))
		s.minScore = &m
	}
	s.sourceJSON = mustJSON(s.publicURL)
	s.prepared = newQueryCache(cfg.QueryCacheSize)
	if s.now == nil {
		s.now = time.Now
	}
	s.keywordWeight = query.DefaultKeywordWeight
	if r := cfg.SemanticRatio; r > 0 && r <= 1 {
		// hybrid.Request reads a zero weight as its default: a ratio of 1
		// (semantic only) keeps keywords as the tie-breaker.
		s.keywordWeight = max(1-r, 1e-9)
	}
	return s, nil
}

// Healthy reports whether Meilisearch answers and says it is available.
func (s *Engine) Healthy(ctx context.Context) bool {
	h, err := s.cfg.Meili.HealthWithContext(ctx)
	return err == nil && h != nil && h.Status == "available"
}

// PageToken is the token of the page of q's results that starts at offset
// (the search site links every page of a listing with it).
func (s *Engine) PageToken(q *Query, offset int) string {
	return s.tokens.encode(q.normalized("search"), offset)
}

// Filter is the Meilisearch filter of q's hard constraints: which records
// a search of q may return at all.
func (s *Engine) Filter(q *Query) filter.Expr { return s.filter(q) }

// Plan is the fused search of q's first tier of results, as Search sends it
// (vec nil: keyword only): for benchmarks that compare the engine with the
// Meilisearch requests it makes.
func (s *Engine) Plan(q *Query, vec []float32) hybrid.Request {
	return s.newPlan(context.Background(), q, vec)
}

// ResultAttributes are the record fields a search retrieves for each
// result (a copy).
func ResultAttributes() []string { return append([]string(nil), searchAttributes...) }

// correlationID names ctx's request in log lines ("" when unknown).
func (s *Engine) correlationID(ctx context.Context) string {
	if s.cfg.CorrelationID == nil {
		return ""
	}
	return s.cfg.CorrelationID(ctx)
}

// observe reports one search's outcome to Config.Observe.
func (s *Engine) observe(results int, ups []federation.Outcome) {
	if s.cfg.Observe != nil {
		s.cfg.Observe(results, ups)
	}
}

// mustJSON encodes v ("null" when it cannot).
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}
