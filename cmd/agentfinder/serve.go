package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/robfig/cron/v3"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/embed"
	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/scheduler"
	"github.com/agentfinder/agentfinder/searchapi"
	"github.com/agentfinder/agentfinder/searchapi/query"
)

// runServe implements 'agentfinder serve': crawl on a schedule, index, and
// serve the search API, all in one process.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return serveMain(ctx, args, serveHooks{}, stdout, stderr)
}

// serveHooks lets tests run serve in-process.
type serveHooks struct {
	// getenv replaces os.LookupEnv.
	getenv func(string) (string, bool)
	// ready, when set, is called once the server listens and the scheduler
	// has started.
	ready func(*server)
	// noSignals leaves SIGHUP alone (tests call reload directly).
	noSignals bool
}

// serveOptions are serve's flags.
type serveOptions struct {
	addr, publicURL, registryName string
	registryDomain                string
	dataDir                       string
	logFormat, logLevel           string
	meiliURL, meiliKey, meiliBin  string
	meiliRestarts                 int
	index                         string
	upstreams                     stringList
	upstreamsFile                 string
	federationBudget              time.Duration
	federateCrawled               bool
	federationAllowCIDR           stringList
	modelDir                      string
	noEmbeddings                  bool
	semanticRatio                 float64
	noQueryRewrite                bool
	schedule                      string
	crawlWorkers                  int
	minRefresh, maxBackoff        time.Duration
	crawl                         bool
	shutdownTimeout               time.Duration
	adminToken                    string
	pageTokenKey                  string
	perHost, maxCatalogs          int
	delay                         time.Duration
	noDNS                         bool
	http                          searchapi.HTTPConfig
	bodyTimeout                   time.Duration
	rateLimit                     float64
	rateBurst                     int
	trustedProxies                stringList
	corsOrigins                   stringList
	accessLog                     bool
	crawlFlags
}

func serveCLI(o *serveOptions) *cli {
	c := newCLI("serve", "[flags]\n\nCrawls the seeds on a schedule, keeps the Meilisearch index in step, and serves the\nAgent Finder API (POST /search, GET /agents, ...) with federation to upstream registries.")
	fs := c.fs
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen `address` of the API")
	fs.IntVar(&o.http.MaxHeaderKiB, "max-header-kib", searchapi.DefaultMaxHeaderKiB, "largest request line and headers, in `KiB`, of one request (larger: 431)")
	fs.IntVar(&o.http.MaxConns, "max-conns", searchapi.DefaultMaxConns, "open client `connections` at most; more wait to be accepted (negative: no bound)")
	fs.DurationVar(&o.bodyTimeout, "body-timeout", 5*time.Second, "how long an API request's body may take to arrive (then 408); the request takes a slot only once it has")
	fs.Float64Var(&o.rateLimit, "rate-limit", searchapi.DefaultRatePerSecond, "API requests per second per client address, sustained (0: no limit; /healthz, /readyz and /metrics are never limited)")
	fs.IntVar(&o.rateBurst, "rate-burst", searchapi.DefaultRateBurst, "API requests a client may send at once above --rate-limit")
	fs.Var(&o.corsOrigins, "cors-origin", "browser `origin` allowed to call the read-only API, e.g. https://app.example (repeatable; default *, any; none: no CORS); never the admin endpoints")
	fs.BoolVar(&o.accessLog, "access-log", true, "log one line per HTTP request at info level (method, route, status, duration, correlation id)")
	fs.Var(&o.trustedProxies, "trusted-proxy", "`CIDR` of a reverse proxy whose X-Forwarded-For names the client (repeatable); other peers are the client themselves")
	fs.StringVar(&o.publicURL, "public-url", "", "public base `URL` of this registry, used as results' source and in the self catalog (default http://<addr>/)")
	fs.StringVar(&o.registryName, "registry-name", "agentfinder", "registry `name` in urn:ai:<domain>:registry:<name>")
	fs.StringVar(&o.registryDomain, "registry-domain", "", "the registry's own `domain` in its identifier and self catalog (default: the --public-url host when it is a domain name, else "+searchapi.DefaultRegistryDomain+")")
	fs.StringVar(&o.dataDir, "data-dir", "./data", "`directory` for scheduler state and the managed Meilisearch")
	fs.StringVar(&o.logFormat, "log-format", "text", "log `format`: text or json")
	fs.StringVar(&o.logLevel, "log-level", "info", "log `level`: debug, info, warn or error")
	fs.StringVar(&o.meiliURL, "meili-url", "", "external Meilisearch `URL`; empty starts a managed Meilisearch under <data-dir>/meili")
	c.setEnv("meili-url", "MEILI_URL")
	fs.StringVar(&o.meiliKey, "meili-api-key", "", "API `key` of the external Meilisearch (prefer the environment variable)")
	c.setEnv("meili-api-key", "MEILI_API_KEY")
	fs.StringVar(&o.meiliBin, "meili-bin", "", "Meilisearch `binary` for the managed instance (default ./.bin/meilisearch, then PATH)")
	fs.IntVar(&o.meiliRestarts, "meili-restarts", 5, "failed restarts in a row of the managed Meilisearch before serve gives up and /healthz fails (negative: never restart)")
	fs.StringVar(&o.index, "index", "agents", "Meilisearch index `name`")
	fs.Var(&o.upstreams, "upstream", "upstream registry `URL` to federate to (repeatable)")
	fs.StringVar(&o.upstreamsFile, "upstreams-file", "", "`file` of upstream registry URLs, one per line, # comments")
	fs.DurationVar(&o.federationBudget, "federation-budget", 1500*time.Millisecond, "total time budget of a federated search")
	fs.BoolVar(&o.federateCrawled, "federate-crawled", false, "also fan out to registries learned by crawling (otherwise they are only referred to)")
	fs.Var(&o.federationAllowCIDR, "federation-allow-cidr", "let upstream registries, configured or learned, use this private `CIDR` (internal registries; repeatable; --allow-private opens all)")
	fs.StringVar(&o.modelDir, "model-dir", "./.cache/model", "`directory` of the sentence-embedding model (make model fetches it)")
	fs.BoolVar(&o.noEmbeddings, "no-embeddings", false, "keyword search only: no vectors, no hybrid search")
	fs.Float64Var(&o.semanticRatio, "semantic-ratio", 0, "weight of semantic search in hybrid ranking, 0..1 (0: the search API's default)")
	fs.BoolVar(&o.noQueryRewrite, "no-query-rewrite", false, "send the request text to Meilisearch as is (no filler removal)")
	fs.StringVar(&o.schedule, "schedule", "@every 1h", "recrawl `schedule` (cron syntax or @every DURATION)")
	fs.IntVar(&o.crawlWorkers, "crawl-workers", 2, "seeds crawled at once")
	fs.DurationVar(&o.minRefresh, "min-refresh", time.Minute, "floor for refreshes that catalogs ask for (max-age, ttl, expiresAt)")
	fs.DurationVar(&o.maxBackoff, "max-backoff", 24*time.Hour, "longest wait before retrying a seed that keeps failing")
	fs.BoolVar(&o.crawl, "crawl", true, "run the crawl scheduler (--crawl=false on all but one replica sharing an index)")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long shutdown waits for requests in flight and for the index flush (crawls in flight get half, then are abandoned)")
	o.crawlFlags.register(c)
	fs.IntVar(&o.perHost, "per-host", 2, "requests in flight per host (negative: unlimited)")
	fs.DurationVar(&o.delay, "delay", 0, "minimum pause between requests to one host (robots.txt Crawl-delay may raise it)")
	fs.IntVar(&o.maxCatalogs, "max-catalogs", 1000, "catalogs fetched per seed at most")
	fs.BoolVar(&o.noDNS, "no-dns", false, "skip DNS SVCB/TXT discovery")
	c.envOnly("AGENTFINDER_PAGE_TOKEN_KEY", "key that signs page tokens; give every replica behind one load balancer the same (default: a key kept in <data-dir>/page-token.key)")
	c.envOnly("AGENTFINDER_ADMIN_TOKEN", "bearer token for POST /admin/crawl and GET /admin/status; without it the admin endpoints are off")
	return c
}

// noCrawlAlias accepts --no-crawl as --crawl=false.
func noCrawlAlias(args []string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if a == "--no-crawl" || a == "-no-crawl" {
			a = "--crawl=false"
		}
		out = append(out, a)
	}
	return out
}

// server is a running serve: its parts, for the admin endpoints and tests.
type server struct {
	opts      serveOptions
	log       *slog.Logger
	addr      string // bound listen address
	publicURL string
	index     string
	meiliURL  string
	meiliKey  string
	managed   *meili.Managed
	indexer   *ingest.Indexer
	crawler   *crawler.Crawler
	sched     *scheduler.Scheduler
	fed       *federation.Federator
	embedNote string // why embeddings are off, "" when on
	handler   http.Handler
	routes    []string             // every route pattern served, for the OpenAPI coverage test
	metrics   *prometheus.Registry // served at GET /metrics
}

func serveMain(ctx context.Context, args []string, hooks serveHooks, stdout, stderr io.Writer) int {
	var o serveOptions
	c := serveCLI(&o)
	if code := c.parseOrExit(noCrawlAlias(args), hooks.getenv, stdout, stderr); code >= 0 {
		return code
	}
	if len(c.args) > 0 {
		fmt.Fprintf(stderr, "agentfinder serve: unexpected arguments %q\n", c.args)
		return 2
	}
	getenv := hooks.getenv
	if getenv == nil {
		getenv = os.LookupEnv
	}
	o.adminToken, _ = getenv("AGENTFINDER_ADMIN_TOKEN")
	o.pageTokenKey, _ = getenv("AGENTFINDER_PAGE_TOKEN_KEY")
	log, err := newLogger(stderr, o.logFormat, o.logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "agentfinder serve: %v\n", err)
		return 2
	}
	if err := serve(ctx, o, hooks, log); err != nil {
		log.Error("serve failed", "err", err)
		return 1
	}
	return 0
}

// serve runs until ctx is done, then shuts down in order: stop accepting
// requests, stop the scheduler (finish or abandon crawls), flush ingest,
// stop the managed Meilisearch.
func serve(ctx context.Context, o serveOptions, hooks serveHooks, log *slog.Logger) (err error) {
	s := &server{opts: o, log: log, index: o.index, metrics: newMetricsRegistry()}
	// One owner per data directory (scheduler state, managed Meilisearch).
	lock, err := lockDataDir(o.dataDir, "agentfinder serve")
	if err != nil {
		return err
	}
	defer lock.release()

	// Check what can be checked before anything starts.
	if _, err := cron.ParseStandard(o.schedule); err != nil {
		return fmt.Errorf("--schedule %q: %w", o.schedule, err)
	}
	ccfg, err := o.crawlFlags.crawlerConfig()
	if err != nil {
		return err
	}
	ccfg.PerHostConcurrency, ccfg.Delay, ccfg.MaxCatalogsPerSeed, ccfg.DisableDNS = o.perHost, o.delay, o.maxCatalogs, o.noDNS
	ccfg.Metrics = s.metrics

	// Listen first: a taken port fails before Meilisearch starts.
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", o.addr, err)
	}
	defer ln.Close()
	s.addr = ln.Addr().String()
	s.publicURL = o.publicURL
	if s.publicURL == "" {
		s.publicURL = defaultPublicURL(ln.Addr())
	}

	// Meilisearch: external, or a managed child process.
	var m *meili.Managed
	mc := meili.ManagedConfig{Bin: o.meiliBin, MaxRestarts: o.meiliRestarts, Metrics: s.metrics}
	s.meiliURL, s.meiliKey, m, err = meiliServer(ctx, o.meiliURL, o.meiliKey, o.dataDir, mc, lock, log)
	if err != nil {
		return err
	}
	if m != nil {
		s.managed = m
		defer func() {
			if err := m.Stop(); err != nil {
				log.Warn("stop managed meilisearch", "err", err)
			}
			log.Info("managed meilisearch stopped")
		}()
		log.Info("managed meilisearch started", "url", m.URL, "bin", m.Bin, "data", filepath.Join(o.dataDir, "meili"))
	}
	client := meili.New(s.meiliURL, s.meiliKey)

	// Embeddings: optional; without the model, keyword search only.
	var embedder *embed.Model
	switch {
	case o.noEmbeddings:
		s.embedNote = "disabled by --no-embeddings"
	default:
		embedder, s.embedNote, err = loadEmbedder(o.modelDir)
		switch {
		case err != nil:
			return err
		case embedder == nil:
			log.Warn("embedding model missing: keyword search only", "dir", o.modelDir)
		default:
			log.Info("embedding model loaded", "dir", o.modelDir)
		}
	}

	// Ingest.
	icfg := ingest.Config{Index: o.index, Logger: log, Metrics: s.metrics}
	if embedder != nil {
		icfg.Embedder = embedder
	}
	ix, err := ingest.New(ctx, client, icfg)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	s.indexer = ix
	flushed := false
	defer func() {
		if flushed {
			return
		}
		cctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
		defer cancel()
		if err := ix.Close(cctx); err != nil {
			log.Warn("close ingest", "err", err)
		}
	}()

	// Page tokens: one key for this data dir, or shared by replicas.
	tokenKey := []byte(o.pageTokenKey)
	if len(tokenKey) == 0 {
		if tokenKey, err = secretKey(o.dataDir, "page-token.key"); err != nil {
			return err
		}
	}

	// Federation: configured upstreams now, crawled registries as they come.
	s.fed, err = newFederation(s, deriveKey(tokenKey, "federation"))
	if err != nil {
		return err
	}
	defer s.fed.Close()

	// Search API.
	api, err := newSearchAPI(s, client, embedder, deriveKey(tokenKey, "searchapi"))
	if err != nil {
		return err
	}
	if o.registryDomain == "" && strings.Contains(api.Identifier(), ":"+searchapi.DefaultRegistryDomain+":") {
		log.Info("the public URL has no domain name: set --registry-domain to name this registry", "identifier", api.Identifier(), "public_url", s.publicURL)
	}

	// Crawler and scheduler.
	ccfg.UserAgent = fmt.Sprintf("%s/%s (+%s)", crawler.RobotsAgent, version, s.publicURL)
	tap := &refreshTap{sink: ix, now: time.Now, book: s.fed.Book()}
	cr, err := crawler.New(ccfg, tap, log)
	if err != nil {
		return err
	}
	defer cr.Close()
	s.crawler = cr
	sched, err := scheduler.New(scheduler.Config{
		Schedule:    o.schedule,
		Concurrency: o.crawlWorkers,
		MinRefresh:  o.minRefresh,
		MaxBackoff:  o.maxBackoff,
		StatePath:   filepath.Join(o.dataDir, "scheduler.json"),
		Seeds:       scheduler.SeedsFrom(o.seeds, o.seedsFile),
		Extra:       validatorState{cr},
		Logger:      log,
		Metrics:     s.metrics,
	}, &seedCrawler{crawler: cr, tap: tap, learn: s.learnRegistries})
	if err != nil {
		return err
	}
	s.sched = sched

	// HTTP: the search API, with the metrics and (when enabled) the admin
	// endpoints in front.
	mux := &searchapi.Mux{}
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		MaxRequestsInFlight: 4,
	}))
	if o.adminToken != "" {
		mux.Handle("/admin/", s.adminHandler(o.adminToken))
	}
	mux.Handle("/", api.Handler())
	s.routes = append(append(s.routes, mux.Patterns()...), api.Routes()...)
	s.handler = mux
	if o.accessLog {
		s.handler = searchapi.AccessLog(mux, log.With("component", "http"))
	}
	srv := searchapi.NewHTTPServer(s.handler, o.http, log)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(o.http.Listener(ln)) }()
	log.Info("serving", "addr", s.addr, "public_url", s.publicURL, "index", o.index,
		"meili", s.meiliURL, "managed_meili", s.managed != nil, "embeddings", embedder != nil,
		"admin", o.adminToken != "", "crawl", o.crawl)

	// Crawls run on their own context: shutdown first lets them finish,
	// then abandons them.
	runCtx, abandon := context.WithCancel(context.WithoutCancel(ctx))
	defer abandon()
	if o.crawl {
		if err := sched.Start(runCtx); err != nil {
			srv.Close()
			return err
		}
	}
	if !hooks.noSignals {
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-hup:
					s.reload()
				}
			}
		}()
	}
	if hooks.ready != nil {
		hooks.ready(s)
	}

	select {
	case <-ctx.Done():
	case err := <-serveErr:
		abandon()
		<-sched.Stop().Done()
		return fmt.Errorf("http server: %w", err)
	}
	log.Info("shutting down")
	// Each phase has its own budget, so a slow one cannot starve the flush.
	hctx, hcancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer hcancel()
	if err := srv.Shutdown(hctx); err != nil {
		log.Warn("http shutdown", "err", err)
		srv.Close()
	}
	if o.crawl {
		stopped := sched.Stop()
		grace := time.NewTimer(o.shutdownTimeout / 2)
		defer grace.Stop()
		select {
		case <-stopped.Done():
		case <-grace.C:
			log.Warn("abandoning crawls in flight", "running", sched.Status().Running)
			abandon()
			<-stopped.Done()
		}
	}
	flushed = true
	fctx, fcancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer fcancel()
	if err := ix.Close(fctx); err != nil {
		log.Warn("close ingest", "err", err)
	}
	log.Info("stopped")
	return nil
}

// newMetricsRegistry is serve's own Prometheus registry (never the global
// one, so servers side by side in one process do not collide), with the Go
// runtime and process collectors; the packages add theirs through their
// Config.Metrics.
func newMetricsRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "agentfinder_build_info",
		Help:        "Always 1; the labels say which build is running.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version()},
	})
	build.Set(1)
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		build,
	)
	return reg
}

// corsOrigins is --cors-origin as searchapi wants it: the default when
// none is given, nothing for "none".
func corsOrigins(flag []string) []string {
	switch {
	case len(flag) == 0:
		return searchapi.DefaultCORSOrigins
	case slices.Contains(flag, "none"):
		return nil
	}
	return flag
}

// defaultPublicURL is http://<listen address>/, with "localhost" for an
// unspecified address (0.0.0.0, ::), which clients cannot use.
func defaultPublicURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String() + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// reload re-reads the seeds (SIGHUP).
func (s *server) reload() {
	if err := s.sched.Reload(); err != nil {
		s.log.Error("reload seeds failed", "err", err)
		return
	}
	if err := s.reloadUpstreams(); err != nil {
		s.log.Error("reload upstreams failed", "err", err)
	}
	s.log.Info("seeds reloaded")
}

// seedCrawler adapts the crawler to the scheduler: one seed per crawl, the
// report summarised for scheduling, registries handed to the book.
type seedCrawler struct {
	crawler *crawler.Crawler
	tap     *refreshTap
	learn   func([]crawler.Registry)
}

func (a *seedCrawler) Crawl(ctx context.Context, seed string) (scheduler.Result, error) {
	ctx, expiry := a.tap.watch(ctx)
	rep, err := a.crawler.Crawl(ctx, []string{seed})
	if rep == nil {
		return scheduler.Result{}, err
	}
	res := scheduler.Result{
		Catalogs:    rep.Totals.Catalogs,
		Succeeded:   rep.Totals.OK + rep.Totals.NotModified,
		NotModified: rep.Totals.NotModified,
		Records:     rep.Totals.Records,
		Report:      rep,
	}
	for _, c := range rep.Catalogs {
		if c.MaxAge > 0 && (res.Refresh == 0 || c.MaxAge < res.Refresh) {
			res.Refresh = c.MaxAge
		}
	}
	if d := expiry.soonest(); d > 0 && (res.Refresh == 0 || d < res.Refresh) {
		res.Refresh = d
	}
	a.learn(rep.Registries)
	return res, err
}

// refreshTap passes results to the sink and, for the crawl whose context
// it marked, notes the soonest expiresAt and max-age among them.
type refreshTap struct {
	sink crawler.Sink
	now  func() time.Time
	book *federation.Book
}

type tapKey struct{}

// expiryWatch collects the soonest refresh a crawl's catalogs ask for.
type expiryWatch struct {
	mu   sync.Mutex
	soon time.Duration
}

func (w *expiryWatch) note(d time.Duration) {
	if d <= 0 {
		return
	}
	w.mu.Lock()
	if w.soon == 0 || d < w.soon {
		w.soon = d
	}
	w.mu.Unlock()
}

func (w *expiryWatch) soonest() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.soon
}

func (t *refreshTap) watch(ctx context.Context) (context.Context, *expiryWatch) {
	w := &expiryWatch{}
	return context.WithValue(ctx, tapKey{}, w), w
}

// Put notes refresh hints and registries, and forwards res.
func (t *refreshTap) Put(ctx context.Context, res normalize.CatalogResult) error {
	if len(res.Registries) > 0 && t.book != nil {
		t.book.AddFromRecords(res.Registries)
	}
	if w, ok := ctx.Value(tapKey{}).(*expiryWatch); ok && res.Status != normalize.StatusFailed {
		w.note(res.MaxAge)
		now := t.now()
		for _, r := range res.Records {
			if r.ExpiresAt == "" {
				continue
			}
			if at, err := time.Parse(time.RFC3339, r.ExpiresAt); err == nil && at.After(now) {
				w.note(at.Sub(now))
			}
		}
	}
	return t.sink.Put(ctx, res)
}

// Holds passes the crawler's question on to the sink (see crawler.Holder),
// so a validator is used and kept only once ingest wrote the catalog.
func (t *refreshTap) Holds(catalog string) bool {
	h, ok := t.sink.(crawler.Holder)
	return !ok || h.Holds(catalog)
}

var (
	_ crawler.Holder = (*refreshTap)(nil)
	_ crawler.Holder = (*ingest.Indexer)(nil)
)

// validatorState persists the crawler's conditional-GET validators in the
// scheduler's state file (only those of catalogs ingest has written).
type validatorState struct{ c *crawler.Crawler }

func (v validatorState) MarshalState() ([]byte, error) { return json.Marshal(v.c.Validators()) }

func (v validatorState) UnmarshalState(b []byte) error {
	var m map[string]crawler.Validator
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	v.c.SetValidators(m)
	return nil
}

// adminHandler serves /admin/crawl and /admin/status behind a bearer token.
func (s *server) adminHandler(token string) http.Handler {
	mux := &searchapi.Mux{}
	mux.HandleFunc("POST /admin/crawl", s.adminCrawl)
	mux.HandleFunc("GET /admin/status", s.adminStatus)
	mux.HandleFunc("/admin/", adminFallback)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !bearerMatches(r.Header.Get("Authorization"), token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentfinder-admin"`)
			writeAdminError(w, http.StatusUnauthorized, "unauthorized", "a valid admin bearer token is required")
			return
		}
		mux.ServeHTTP(w, r)
	})
	s.routes = append(s.routes, mux.Patterns()...)
	return h
}

// bearerMatches reports whether an Authorization header value carries token
// under the Bearer scheme, whose name is case-insensitive (RFC 9110 §11.1).
func bearerMatches(header, token string) bool {
	scheme, got, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}

// adminAllow is the Allow header of each admin endpoint.
var adminAllow = map[string]string{"/admin/crawl": "POST", "/admin/status": "GET, HEAD"}

// adminFallback answers what no admin route matched in the error model: a
// known endpoint with the wrong method is 405 with Allow, anything else 404.
func adminFallback(w http.ResponseWriter, r *http.Request) {
	if allow, ok := adminAllow[r.URL.Path]; ok {
		w.Header().Set("Allow", allow)
		writeAdminError(w, http.StatusMethodNotAllowed, "invalid_request", "method "+r.Method+" is not allowed on "+r.URL.Path)
		return
	}
	writeAdminError(w, http.StatusNotFound, "not_found", "no such admin endpoint")
}

// adminCrawl re-reads the seeds and crawls now: the seeds named by ?seed=
// (repeatable) or a JSON body {"seeds": [...]}, else every seed.
func (s *server) adminCrawl(w http.ResponseWriter, r *http.Request) {
	if !s.opts.crawl {
		writeAdminError(w, http.StatusConflict, "conflict", "crawling is off in this replica (--crawl=false)")
		return
	}
	names := r.URL.Query()["seed"]
	if r.ContentLength != 0 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var body struct {
			Seeds []string `json:"seeds"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
			writeAdminError(w, http.StatusBadRequest, "invalid_request", "body must be {\"seeds\": [...]}")
			return
		}
		names = append(names, body.Seeds...)
	}
	reloadErr := s.sched.Reload()
	if reloadErr != nil {
		s.log.Error("reload seeds failed", "err", reloadErr)
	}
	triggered := s.sched.Trigger(names...)
	if len(names) > 0 && len(triggered) < len(names) {
		writeAdminError(w, http.StatusNotFound, "not_found", "unknown seed: add it to --seed or the seeds file first")
		return
	}
	resp := map[string]any{"triggered": triggered}
	if reloadErr != nil {
		resp["reloadError"] = reloadErr.Error()
	}
	writeJSON(w, http.StatusAccepted, resp)
}

// adminStatus shows the seeds (only those named by ?seed=, when given),
// their state and last reports, a count of seeds per outcome, ingest's
// counters, the registry book and whether embeddings are on.
func (s *server) adminStatus(w http.ResponseWriter, r *http.Request) {
	emb := map[string]any{"enabled": s.embedNote == ""}
	if s.embedNote != "" {
		emb["reason"] = s.embedNote
	}
	st := s.sched.Status()
	byOutcome := map[string]int{}
	for _, sd := range st.Seeds {
		o := sd.Outcome
		if o == "" {
			o = "pending"
		}
		byOutcome[o]++
	}
	if want := r.URL.Query()["seed"]; len(want) > 0 {
		keep := st.Seeds[:0]
		for _, sd := range st.Seeds {
			if slices.Contains(want, sd.Seed) {
				keep = append(keep, sd)
			}
		}
		st.Seeds = keep
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"version":    version,
		"index":      s.index,
		"crawl":      s.opts.crawl,
		"outcomes":   byOutcome,
		"scheduler":  st,
		"ingest":     s.indexer.Stats(),
		"registries": s.fed.Book().Registries(),
		"embeddings": emb,
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// writeAdminError writes the xu error model, with a fresh correlation id
// also in the X-Correlation-Id header.
func writeAdminError(w http.ResponseWriter, status int, code, msg string) {
	raw := make([]byte, 8)
	_, _ = rand.Read(raw)
	id := hex.EncodeToString(raw)
	w.Header().Set("X-Correlation-ID", id)
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg, "correlationId": id}})
}

// newFederation builds the federator with the configured upstreams (flags
// and file); registries learned by crawling are added to its book later.
func newFederation(s *server, tokenKey []byte) (*federation.Federator, error) {
	o := s.opts
	ups := append([]string(nil), o.upstreams...)
	if o.upstreamsFile != "" {
		more, err := federation.LoadUpstreamsFile(o.upstreamsFile)
		if err != nil {
			return nil, err
		}
		ups = append(ups, more...)
	}
	allow, err := parseCIDRs("federation-allow-cidr", o.federationAllowCIDR)
	if err != nil {
		return nil, err
	}
	cfg := federation.Config{
		Name:            strings.TrimSuffix(s.publicURL, "/"),
		Upstreams:       ups,
		FederateLearned: o.federateCrawled,
		AllowPrivate:    o.allowPrivate,
		AllowCIDRs:      allow,
		Budget:          o.federationBudget,
		TokenKey:        tokenKey,
	}
	if o.caFile != "" {
		pool, err := certPool(o.caFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	return federation.New(cfg, s.log)
}

// certPool is the system roots plus the PEM certificates in file.
func certPool(file string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w", err)
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--ca-file %s: no PEM certificates", file)
	}
	return pool, nil
}

// reloadUpstreams adds upstreams newly listed in the upstreams file (the
// book only grows: removing one takes a restart).
func (s *server) reloadUpstreams() error {
	if s.opts.upstreamsFile == "" {
		return nil
	}
	list, err := federation.LoadUpstreamsFile(s.opts.upstreamsFile)
	if err != nil {
		return err
	}
	var errs []error
	for _, u := range list {
		if err := s.fed.Book().AddConfigured(u); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// learnRegistries puts the registries a crawl reported into the book:
// _search._agents DNS records here; catalog entries are added by the tap as
// their records pass.
func (s *server) learnRegistries(regs []crawler.Registry) {
	for _, r := range regs {
		if r.Via != crawler.RegistryViaDNS {
			continue
		}
		if err := s.fed.Book().AddDNS(r.Domain, r.URL); err != nil {
			s.log.Warn("dns registry skipped", "domain", r.Domain, "url", r.URL, "err", err)
		}
	}
}

// secretKey returns the key in <data-dir>/<name>, creating it (32 random
// bytes, hex, 0600) on first use, so page tokens survive restarts. Replicas
// behind one load balancer share it through AGENTFINDER_PAGE_TOKEN_KEY.
func secretKey(dataDir, name string) ([]byte, error) {
	path := filepath.Join(dataDir, name)
	if b, err := os.ReadFile(path); err == nil && len(bytes.TrimSpace(b)) >= 32 {
		return bytes.TrimSpace(b), nil
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	key := []byte(hex.EncodeToString(raw))
	if err := os.WriteFile(path, append(key, '\n'), 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return key, nil
}

// deriveKey gives each user of the page-token key its own key.
func deriveKey(key []byte, purpose string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

// crawlInfo tells the about page what this replica crawls, when a crawl
// last finished and which configured registries it federates to.
func (s *server) crawlInfo() searchapi.CrawlInfo {
	var ci searchapi.CrawlInfo
	if s.sched != nil && s.opts.crawl {
		for _, sd := range s.sched.Status().Seeds {
			ci.Seeds = append(ci.Seeds, sd.Seed)
			if sd.LastFinish.After(ci.LastCrawl) {
				ci.LastCrawl = sd.LastFinish
			}
		}
	}
	for _, r := range s.fed.Book().Registries() {
		if r.Trusted() {
			ci.Upstreams = append(ci.Upstreams, r.Endpoint)
		}
	}
	return ci
}

// newSearchAPI builds the search API over the index.
func newSearchAPI(s *server, client searchapi.Meili, embedder *embed.Model, tokenKey []byte) (*searchapi.Server, error) {
	proxies, err := parseCIDRs("trusted-proxy", s.opts.trustedProxies)
	if err != nil {
		return nil, err
	}
	cfg := searchapi.Config{
		BodyTimeout:    s.opts.bodyTimeout,
		RateLimit:      searchapi.RateLimit{PerSecond: s.opts.rateLimit, Burst: s.opts.rateBurst, TrustedProxies: proxies},
		Index:          s.index,
		PublicURL:      s.publicURL,
		RegistryName:   s.opts.registryName,
		RegistryDomain: s.opts.registryDomain,
		CORSOrigins:    corsOrigins(s.opts.corsOrigins),
		Meili:          client,
		Federation:     s.fed,
		SemanticRatio:  s.opts.semanticRatio,
		PageTokenKey:   tokenKey,
		Version:        version,
		ReadyDetails:   map[string]string{"embeddings": "on"},
		Metrics:        s.metrics,
		Crawl:          s.crawlInfo,
	}
	if embedder != nil {
		cfg.Embedder = embedder
	} else {
		cfg.ReadyDetails["embeddings"] = "off: " + s.embedNote
	}
	if !s.opts.noQueryRewrite {
		cfg.QueryRewriter = query.Rewrite
	}
	if !s.opts.crawl {
		cfg.ReadyDetails["crawl"] = "off in this replica"
	}
	if s.managed != nil {
		cfg.Supervisor = s.managed
	}
	return searchapi.New(cfg, s.log)
}
