// Package searchapi is the HTTP face of the registry (Agent Finder §7): POST
// /search, GET /agents, GET /agents/{identifier}, POST /explore, the xu,
// HAIDIP, ADP and MCP bindings, this registry's own
// /.well-known/ai-catalog.json, health, readiness, the OpenAPI document and
// the search site for people (site.go; its templates and assets are in
// searchapi/web). It owns routing and the middleware around every route
// (correlation ids, auth, rate limits, CORS, body limits, metrics) and maps
// every error to the xu error model; the search itself (request model,
// ranking, evidence, cut-off, federation merge, page tokens) is
// searchapi/search's Engine, the only reader of Meilisearch, and filter
// text is written by searchapi/filter. It must not import ingest or
// crawler.
package searchapi

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/searchapi/adp"
	"github.com/agentfinder/agentfinder/searchapi/api"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/haidip"
	"github.com/agentfinder/agentfinder/searchapi/mcpserver"
	"github.com/agentfinder/agentfinder/searchapi/registryapi"
	"github.com/agentfinder/agentfinder/searchapi/search"
	"github.com/agentfinder/agentfinder/searchapi/tools"
	"github.com/agentfinder/agentfinder/searchapi/web"
	"github.com/agentfinder/agentfinder/searchapi/xu"
)

// Supervisor reports on a child process the service keeps alive (the
// managed Meilisearch; ingest/meili.Managed satisfies it).
type Supervisor interface {
	// Health returns a one-line state and false once the child is beyond
	// recovery (its restarts ran out): only restarting the service helps.
	Health() (state string, live bool)
}

// Config configures a Server. Zero values are usable except Meili and Index.
type Config struct {
	// Index is the Meilisearch index uid holding normalize.Documents.
	Index string
	// PublicURL is this registry's base URL as clients reach it (no trailing
	// slash needed); it is every local result's "source" and the base of the
	// self catalog entry. Default http://127.0.0.1:8080.
	PublicURL string
	// RegistryName names this registry in its URN (urn:ai:<domain>:registry:<name>).
	// Default "agentfinder".
	RegistryName string
	// RegistryDomain is the publisher domain of this registry's URN and the
	// self catalog's host identifier. Default: PublicURL's host when it is a
	// domain name, else DefaultRegistryDomain (an IP address or a one-label
	// name such as localhost is no publisher domain).
	RegistryDomain string
	// Meili reads the index (the engine's only door to Meilisearch).
	Meili search.Meili
	// Federation answers the auto and referrals modes; nil answers locally.
	Federation federation.Searcher
	// Embedder enables hybrid search; nil means keyword only.
	Embedder search.Embedder
	// QueryRewriter rewrites the search text for the keyword side (query
	// understanding: searchapi/query.Rewrite): POST /search
	// searches the informative terms of its output one by one, /explore
	// sends it as q. nil searches the request's words as they are. The
	// query vector always embeds the text as typed.
	QueryRewriter func(text string) string
	// SemanticRatio is the semantic share of the fused score (the keyword
	// share is 1 - SemanticRatio); 0 (or out of 0..1) means
	// 1 - query.DefaultKeywordWeight = 0.8, the measured best. It matters
	// only with an Embedder.
	SemanticRatio float64
	// MinScore is the default cut-off, meaning what a request's minScore
	// and serve's --min-score mean: results scoring below it (0..100,
	// searchapi/score) are left out unless a request sends its own
	// minScore; 0 returns every result; nil (the flag's -1) leaves the
	// scoring model's own (score.Default.MinScore with an Embedder,
	// score.KeywordOnly.MinScore keyword only).
	MinScore *int
	// PageTokenKey signs page tokens; empty means a random key (tokens then
	// do not survive a restart or span replicas).
	PageTokenKey []byte
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxConcurrent bounds API requests in flight; beyond it requests are
	// refused with 429 rate_limited. A request takes its slot only once its
	// body is read. 0 means 256.
	MaxConcurrent int
	// MaxPerClient bounds the API requests one client (named as for
	// RateLimit) has in flight; beyond it requests are refused with 429
	// rate_limited. 0 means MaxConcurrent/8, at least 4 (at most
	// MaxConcurrent).
	MaxPerClient int
	// BodyTimeout bounds the reading of an API request's body (at most 64
	// KiB); a body still arriving then is answered 408. 0 means 5s.
	BodyTimeout time.Duration
	// RateLimit is the per-client rate limit, applied to every route but
	// /healthz, /readyz and /metrics; the zero value is no limit (cmd sets
	// DefaultRatePerSecond and DefaultRateBurst).
	RateLimit RateLimit
	// ReadyDetails are shown by /readyz (e.g. {"embeddings": "off: model files
	// not found"}); SetReadyDetail changes them later.
	ReadyDetails map[string]string
	// Version is reported by /healthz.
	Version string
	// Supervisor, when set, is shown by /readyz (details.managedMeilisearch)
	// and fails /healthz with 503 once it cannot recover on its own, so an
	// orchestrator restarts the service.
	Supervisor Supervisor
	// Crawl, when set, tells the about page what this registry crawls, when
	// it last did and which registries it federates to; it must be cheap
	// and safe for concurrent use.
	Crawl func() web.CrawlInfo
	// Metrics, when set, receives the server's Prometheus instruments
	// (agentfinder_http_*, agentfinder_search_results,
	// agentfinder_federation_upstream_outcomes_total,
	// agentfinder_embeddings_enabled); nil records nothing. The caller owns
	// the registry and serves it; New fails if the names are taken.
	Metrics prometheus.Registerer
	// CORSOrigins are the browser origins allowed to call this API ("*":
	// any); preflight requests are answered for them. Empty: no CORS
	// headers. cmd defaults it to DefaultCORSOrigins.
	CORSOrigins []string
	// Auth is who may call the read API (AuthOff when empty); the admin
	// routes cmd serves have their own token. Verifiers check bearer
	// credentials, in order (API keys, OIDC tokens).
	Auth      AuthMode
	Verifiers []Verifier
}

// Server serves the Agent Finder API over one index. Create it with New; it
// is safe for concurrent use and holds no global state.
type Server struct {
	cfg       Config
	log       *slog.Logger
	engine    *search.Engine
	now       func() time.Time
	sem       chan struct{}
	publicURL string // without trailing slash
	viaName   string // our name in Via headers: host[:port] of PublicURL
	urn       string
	domain    string // publisher domain of urn
	mux       *Mux
	// shapes are the error shapes of the routes that do not answer in
	// the Agent Finder one, by pattern (mount).
	shapes    map[string]door.ErrorShape
	metrics   *metrics       // nil: no metrics
	limiter   *clientLimiter // nil: no rate limit
	who       clientNamer
	perClient *inFlight
	site      *web.Site

	mu      sync.Mutex
	details map[string]string
}

// New validates cfg and returns a Server. logger nil discards logs.
func New(cfg Config, logger *slog.Logger) (*Server, error) {
	pu, domain, err := cfg.check()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		cfg:       cfg,
		log:       logger.With("component", "searchapi"),
		now:       cfg.Now,
		sem:       make(chan struct{}, cfg.MaxConcurrent),
		publicURL: strings.TrimSuffix(cfg.PublicURL, "/"),
		viaName:   strings.ToLower(pu.Host),
		domain:    domain,
		urn:       "urn:ai:" + domain + ":registry:" + urnPart(cfg.RegistryName),
		details:   readyDetails(cfg),
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.limiter, err = newClientLimiter(cfg.RateLimit, time.Now); err != nil {
		return nil, err
	}
	s.who = clientNamer{trusted: cfg.RateLimit.TrustedProxies}
	s.perClient = &inFlight{max: cfg.MaxPerClient, n: map[netip.Addr]int{}}
	if s.metrics, err = newMetrics(cfg.Metrics, cfg.Embedder != nil); err != nil {
		return nil, err
	}
	if s.engine, err = search.New(search.Config{
		Index: cfg.Index, Meili: cfg.Meili, PublicURL: s.publicURL, Via: s.viaName,
		Federation: cfg.Federation, Embedder: cfg.Embedder, QueryRewriter: cfg.QueryRewriter,
		SemanticRatio: cfg.SemanticRatio, MinScore: cfg.MinScore, PageTokenKey: cfg.PageTokenKey, Now: s.now,
		Observe: s.metrics.observeSearch, CorrelationID: door.CorrelationID,
		Unseeded: func() bool { return cfg.Crawl != nil && cfg.Crawl().Unseeded },
	}, s.log); err != nil {
		return nil, err
	}
	if s.site, err = web.NewSite(s.engine, web.Options{
		Name: cfg.RegistryName, URN: s.urn, PublicURL: s.publicURL, AuthNote: s.authNote(), MCP: true,
		Federating: cfg.Federation != nil, Crawl: cfg.Crawl, Now: s.now, Fail: s.writeErrorPage, Logger: s.log,
	}); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

// check refuses a Config New cannot serve and fills in the defaults of
// the fields left zero; it returns the parsed PublicURL and the registry's
// domain.
func (cfg *Config) check() (*url.URL, string, error) {
	if cfg.Meili == nil {
		return nil, "", errors.New("searchapi: Config.Meili is required")
	}
	if cfg.Index == "" {
		return nil, "", errors.New("searchapi: Config.Index is required")
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = "http://127.0.0.1:8080"
	}
	pu, err := url.Parse(cfg.PublicURL)
	if err != nil || pu.Host == "" || (pu.Scheme != "http" && pu.Scheme != "https") {
		return nil, "", fmt.Errorf("searchapi: PublicURL %q is not an absolute http(s) URL", cfg.PublicURL)
	}
	if cfg.RegistryName == "" {
		cfg.RegistryName = "agentfinder"
	}
	domain, err := registryDomain(cfg.RegistryDomain, pu.Hostname())
	if err != nil {
		return nil, "", err
	}
	if len(cfg.PageTokenKey) == 0 {
		cfg.PageTokenKey = make([]byte, 32)
		_, _ = rand.Read(cfg.PageTokenKey)
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 256
	}
	if cfg.MaxPerClient <= 0 {
		// An eighth of the slots, but never fewer than 4 (or all of a
		// small server's).
		cfg.MaxPerClient = min(cfg.MaxConcurrent, max(4, cfg.MaxConcurrent/8))
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = defaultBodyTimeout
	}
	if cfg.Auth, err = ParseAuthMode(string(cfg.Auth)); err != nil {
		return nil, "", fmt.Errorf("searchapi: %w", err)
	}
	if cfg.Auth != AuthOff && len(cfg.Verifiers) == 0 {
		return nil, "", errors.New("searchapi: auth " + string(cfg.Auth) + " needs API keys or an OIDC issuer")
	}
	return pu, domain, nil
}

// readyDetails are the details /readyz reports: cfg.ReadyDetails, and
// whether embeddings are on unless the caller said (serve knows why: the
// model is missing or disabled; without its word, /readyz still says which
// search this is).
func readyDetails(cfg Config) map[string]string {
	details := maps.Clone(cfg.ReadyDetails)
	if details == nil {
		details = map[string]string{}
	}
	if _, ok := details["embeddings"]; !ok {
		if cfg.Embedder == nil {
			details["embeddings"] = "off: keyword search only"
		} else {
			details["embeddings"] = "on"
		}
	}
	return details
}

// urnPart makes a registry name safe inside a URN: lower-case letters,
// digits, '-', '.', '_'; anything else becomes '-'.
func urnPart(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "agentfinder"
	}
	return b.String()
}

// SetReadyDetail sets one detail /readyz reports (empty value removes it).
func (s *Server) SetReadyDetail(key, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if value == "" {
		delete(s.details, key)
		return
	}
	s.details[key] = value
}

// routes builds the router: the server's own routes, then one mount line
// per door (each door's routes, behind the API middleware, with its error
// shape).
func (s *Server) routes() {
	s.mux = &Mux{}
	s.shapes = map[string]door.ErrorShape{}
	m := s.mux
	m.HandleFunc("GET /.well-known/ai-catalog.json", s.handleSelfCatalog)
	m.HandleFunc("GET /healthz", s.handleHealthz)
	m.HandleFunc("GET /readyz", s.handleReadyz)
	m.HandleFunc("GET /openapi.json", s.handleOpenAPI)
	m.HandleFunc("/", s.handleFallback)
	s.mount(s.site)
	s.mount(api.New(s.engine, s.site.DetailPage))
	s.mount(xu.New(s.engine, s.now))
	s.mount(haidip.New(s.engine))
	s.mount(adp.New(s.engine))
	s.mount(registryapi.New(s.engine, s.publicURL))
	s.mount(tools.New(s.engine))
	s.mount(mcpserver.NewDoor(s.engine, mcpserver.DoorOptions{Version: s.cfg.Version, PublicURL: s.publicURL, Observe: s.observeToolCall, Logger: s.log}))
}

// routeSet is what a door package exports: its routes, each with its
// error shape.
type routeSet interface{ Routes() []door.Route }

// mount registers a door's routes behind the API middleware (api) and
// remembers the error shape of each (shapeOf): adding a door is one mount
// line in routes.
func (s *Server) mount(d routeSet) {
	for _, rt := range d.Routes() {
		if rt.Shape != nil {
			s.shapes[rt.Pattern] = rt.Shape
		}
		switch {
		case rt.Bare:
			s.mux.HandleFunc(rt.Pattern, func(w http.ResponseWriter, r *http.Request) { _ = rt.Handle(w, r) })
		case rt.Page:
			s.mux.Handle(rt.Pattern, s.page(rt.Handle))
		default:
			s.mux.Handle(rt.Pattern, s.api(rt.Handle))
		}
	}
}

// Handler returns the server's HTTP handler: correlation ids, Via, the
// per-client rate limit (Config.RateLimit), NoSniff and method checks
// around the routes.
func (s *Server) Handler() http.Handler {
	return NoSniff(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cid := r.Header.Get("X-Correlation-ID")
		if !validCorrelationID(cid) {
			cid = door.NewCorrelationID()
		}
		w.Header().Set("X-Correlation-ID", cid)
		w.Header().Add("Via", "1.1 "+s.viaName)
		r = r.WithContext(door.WithCorrelationID(r.Context(), cid))
		if s.cors(w, r) {
			return
		}
		serve := s.mux.ServeHTTP
		if ok, wait := s.allow(r); !ok {
			// The route it asked for, for the metrics' label.
			_, r.Pattern = s.mux.Handler(r)
			s.metrics.refused(refusedRateLimited)
			serve = func(w http.ResponseWriter, r *http.Request) {
				if door.PrefersHTML(r) {
					s.writeErrorPage(w, r, rateLimited(wait))
					return
				}
				s.writeError(w, r, rateLimited(wait))
			}
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		serve(sw, r)
		// The mux set r.Pattern on this request when it routed it.
		noteRoute(r, r.Pattern)
		s.metrics.observeRequest(r.Pattern, sw.status, time.Since(start))
	}))
}

// NoSniff sets X-Content-Type-Options: nosniff on every answer of h, so a
// browser never reads a JSON answer (which may echo request text) as
// another type. Handler applies it; cmd wraps the routes it adds in front
// (metrics, admin, IndexNow) with it too.
func NoSniff(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// allow applies the per-client rate limit to r: false with the wait until
// the client may retry.
func (s *Server) allow(r *http.Request) (bool, time.Duration) {
	if s.limiter == nil || rateExempt[r.URL.Path] {
		return true, 0
	}
	return s.limiter.allow(r)
}

// statusWriter remembers the status for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (read deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// handleFallback answers what no route matched: POST /mcp/ is POST /mcp; a
// path some route serves with other methods is 405 with Allow, anything
// else 404 (the error page for a browser, else the error model).
func (s *Server) handleFallback(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/mcp/" {
		// POST /mcp, for clients that add a slash.
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = "/mcp", ""
		s.mux.ServeHTTP(w, r2)
		return
	}
	if allow := s.allowedMethods(r); len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.writeError(w, r, &door.APIError{Status: http.StatusMethodNotAllowed, Code: door.CodeInvalidRequest, Message: "method " + r.Method + " is not allowed on " + r.URL.Path})
		return
	}
	if door.PrefersHTML(r) {
		s.writeErrorPage(w, r, door.ErrNotFound)
		return
	}
	s.writeError(w, r, door.ErrNotFound)
}

// allowedMethods lists the methods a route serves r's path with, asking
// the mux itself (so new routes need no second list here).
func (s *Server) allowedMethods(r *http.Request) []string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := *r
		probe.Method = m
		if _, pattern := s.mux.Handler(&probe); pattern != "/" {
			allow = append(allow, m)
		}
	}
	return allow
}

func validCorrelationID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// api wraps an API handler: the body read before the concurrency limit
// (so a slow client never holds a slot), then the limit and error mapping.
func (s *Server) api(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, err := s.authenticate(w, r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := s.bufferBody(w, r); err != nil {
			s.writeError(w, r, err)
			return
		}
		release, err := s.slot(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		defer release()
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// slot takes a request slot for r: one of its client's MaxPerClient, then
// one of the server's MaxConcurrent. release gives both back.
func (s *Server) slot(r *http.Request) (release func(), err error) {
	key := s.who.key(r)
	if !s.perClient.acquire(key) {
		s.metrics.refused(refusedClientBusy)
		return nil, errClientBusy
	}
	select {
	case s.sem <- struct{}{}:
		return func() {
			<-s.sem
			s.perClient.release(key)
		}, nil
	default:
		s.perClient.release(key)
		s.metrics.refused(refusedBusy)
		return nil, errRateLimited
	}
}

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	body := map[string]string{"status": "ok"}
	if s.cfg.Version != "" {
		body["version"] = s.cfg.Version
	}
	status := http.StatusOK
	if s.cfg.Supervisor != nil {
		if state, live := s.cfg.Supervisor.Health(); !live {
			body["status"], body["managedMeilisearch"] = "failed", state
			status = http.StatusServiceUnavailable
		}
	}
	door.WriteJSON(w, status, body)
}

// readyResponse is the body of /readyz.
type readyResponse struct {
	Status      string            `json:"status"`
	Meilisearch string            `json:"meilisearch"`
	Details     map[string]string `json:"details"`
}

func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	s.mu.Lock()
	resp := readyResponse{Status: "ready", Meilisearch: "available", Details: maps.Clone(s.details)}
	s.mu.Unlock()
	if s.cfg.Supervisor != nil {
		resp.Details["managedMeilisearch"], _ = s.cfg.Supervisor.Health()
	}
	status := http.StatusOK
	if !s.engine.Healthy(ctx) {
		resp.Status, resp.Meilisearch, status = "unavailable", "unreachable", http.StatusServiceUnavailable
	}
	door.WriteJSON(w, status, resp)
}
