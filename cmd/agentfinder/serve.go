package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/meilisearch/meilisearch-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/robfig/cron/v3"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/probe"
	"github.com/agentfinder/agentfinder/crawler/statefile"
	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/embed"
	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/scheduler"
	"github.com/agentfinder/agentfinder/searchapi"
	"github.com/agentfinder/agentfinder/searchapi/authn"
	"github.com/agentfinder/agentfinder/searchapi/indexnow"
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
	// meili, when set, is the Meilisearch client to use (a cluster's
	// replica set) instead of --meili-url or a managed Meilisearch.
	meili meilisearch.ServiceManager
	// readOnly builds no ingest, crawler, scheduler, prober or IndexNow:
	// a cluster node's search API, while another node crawls.
	readOnly bool
	// schedState and probeState, when set, keep the scheduler's and the
	// prober's state instead of files in the data directory.
	schedState, probeState statefile.Doc
	// freshValidators restores the crawler's state but its validators (a
	// new crawl leader; see freshValidators in cluster.go).
	freshValidators bool
	// forward, when set, serves /indexnow and /admin/* by passing them to
	// the crawl leader (a cluster node; see cluster_forward.go).
	forward *leaderForwarder
}

// serveOptions are serve's flags.
type serveOptions struct {
	addr, publicURL, registryName string
	registryDomain                string
	auth                          authFlags
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
	minScore                      int
	noQueryRewrite                bool
	schedule                      string
	crawlWorkers                  int
	minRefresh, maxBackoff        time.Duration
	crawl                         bool
	shutdownTimeout               time.Duration
	adminToken                    string
	pageTokenKey                  string
	http                          searchapi.HTTPConfig
	bodyTimeout                   time.Duration
	rateLimit                     float64
	rateBurst                     int
	trustedProxies                stringList
	corsOrigins                   stringList
	accessLog                     bool
	indexNow                      indexNowOptions
	probe                         probeOptions
	crawlFlags
	cluster clusterOptions
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
	o.auth.register(fs)
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
	fs.Var(&o.upstreams, "upstream", "upstream registry `URL` to federate to, optionally followed by \" forwardAuth\" to send it the caller's verified credential (repeatable)")
	fs.StringVar(&o.upstreamsFile, "upstreams-file", "", "`file` of upstream registry URLs, one per line (a URL may be followed by \"forwardAuth\"), # comments")
	fs.DurationVar(&o.federationBudget, "federation-budget", 1500*time.Millisecond, "total time budget of a federated search")
	fs.BoolVar(&o.federateCrawled, "federate-crawled", false, "also fan out to registries learned by crawling (otherwise they are only referred to)")
	fs.Var(&o.federationAllowCIDR, "federation-allow-cidr", "let upstream registries, configured or learned, use this private `CIDR` (internal registries; repeatable; --allow-private opens all)")
	fs.StringVar(&o.modelDir, "model-dir", "./.cache/model", "`directory` of the sentence-embedding model (make model fetches it)")
	fs.BoolVar(&o.noEmbeddings, "no-embeddings", false, "keyword search only: no vectors, no hybrid search")
	fs.Float64Var(&o.semanticRatio, "semantic-ratio", 0, "weight of semantic search in hybrid ranking, 0..1 (0: the search API's default)")
	fs.IntVar(&o.minScore, "min-score", -1, "default cut-off: results scoring below `N` (0..100) are left out unless a request sends minScore; 0 returns every result, -1 the scoring model's own (15 with embeddings, 5 keyword only)")
	fs.BoolVar(&o.noQueryRewrite, "no-query-rewrite", false, "send the request text to Meilisearch as is (no filler removal)")
	fs.StringVar(&o.schedule, "schedule", "@every 1h", "recrawl `schedule` (cron syntax or @every DURATION)")
	fs.IntVar(&o.crawlWorkers, "crawl-workers", 2, "seeds crawled at once")
	fs.DurationVar(&o.minRefresh, "min-refresh", time.Minute, "floor for refreshes that catalogs ask for (max-age, ttl, expiresAt)")
	fs.DurationVar(&o.maxBackoff, "max-backoff", 24*time.Hour, "longest wait before retrying a seed that keeps failing")
	fs.BoolVar(&o.crawl, "crawl", true, "run the crawl scheduler (--crawl=false on all but one replica sharing an index)")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long shutdown waits for requests in flight and for the index flush (crawls in flight get half, then are abandoned)")
	o.crawlFlags.register(c)
	o.indexNow.register(c)
	o.probe.register(c)
	o.cluster.register(c)
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
	seeder    *seedCrawler         // the scheduler's crawler
	indexNow  *indexnow.Handler    // GET/POST /indexnow; nil when off
	seedHosts seedHosts            // the seed list by host, for IndexNow
	prober    *probe.Prober        // endpoint health; nil when off
	late      lateHooks            // connections to parts built later

	// What build's steps hand on to the steps after them.
	crawlCfg crawler.Config
	ln       net.Listener
	client   meilisearch.ServiceManager
	embedder *embed.Model // nil: keyword search only
	tokenKey []byte
	api      *searchapi.Server

	hooks   serveHooks
	apiKeys *authn.Keys // --api-keys, reloaded on SIGHUP; nil without
	closers []func()    // what close undoes, in the order build made it
	flushed bool        // run flushed ingest: close need not
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
// stop the managed Meilisearch. build makes the parts, run runs them.
func serve(ctx context.Context, o serveOptions, hooks serveHooks, log *slog.Logger) error {
	if o.cluster.on() && hooks.meili == nil {
		return serveCluster(ctx, o, hooks, log)
	}
	s := &server{opts: o, log: log, index: o.index, metrics: newMetricsRegistry(), hooks: hooks}
	// One owner per data directory (scheduler state, managed Meilisearch).
	lock, err := lockDataDir(o.dataDir, "agentfinder serve")
	if err != nil {
		return err
	}
	defer lock.release()
	defer s.close()
	if err := s.build(ctx, lock); err != nil {
		return err
	}
	return s.run(ctx, s.ln, hooks)
}

// buildStep is one part of the server and how to build it.
type buildStep struct {
	part string
	// writer parts are the index-writing side (ingest, the crawl, the
	// prober, IndexNow): a read-only node (hooks.readOnly) builds none.
	writer bool
	build  func(ctx context.Context) error
}

// buildSteps are the server's parts in the order build makes them: each
// step uses only what the steps before it made, and reaches a part built
// after it only through s.late, whose hooks exist before any step runs.
func (s *server) buildSteps(lock *dataDirLock) []buildStep {
	return []buildStep{
		{part: "options", build: s.checkOptions},
		{part: "listener", build: s.listen}, // a taken port fails before Meilisearch starts
		{part: "meilisearch", build: func(ctx context.Context) error { return s.connectMeili(ctx, lock) }},
		{part: "embedding model", build: s.loadModel},
		{part: "prober", writer: true, build: s.buildProber},
		{part: "ingest", writer: true, build: s.buildIndexer}, // connects late.health
		{part: "page token key", build: s.loadPageTokenKey},
		{part: "federation", build: s.buildFederation},
		{part: "crawler and scheduler", writer: true, build: s.buildCrawl},
		{part: "indexnow", writer: true, build: s.buildIndexNow}, // connects late.written
		{part: "search api", build: s.buildSearchAPI},
		{part: "http handler", build: s.buildHandler},
	}
}

// build makes every part of the server (buildSteps); close undoes what it
// made, also when it fails halfway.
func (s *server) build(ctx context.Context, lock *dataDirLock) error {
	for _, st := range s.buildSteps(lock) {
		if st.writer && s.hooks.readOnly {
			continue
		}
		if err := st.build(ctx); err != nil {
			return err
		}
		s.log.Debug("built", "part", st.part)
	}
	return nil
}

// lateHooks connect a part to one built after it. They are made with the
// server, before any part, so the earlier part can hold one; the step that
// builds the later part connects it.
type lateHooks struct {
	// health takes the prober's verdicts and tool lists to ingest, which
	// is built after the prober (ingest reads the prober's state for every
	// record it writes); the ingest step connects it.
	health healthSink
	// written takes the catalogs ingest wrote to the IndexNow handler,
	// built after ingest; the indexnow step connects it.
	written writtenHook
	// pinged are the crawl targets IndexNow pings queued: the scheduler's
	// crawler (built before IndexNow) asks it whether a crawl is urgent.
	pinged pingedTargets
}

// checkOptions refuses what can be checked before anything starts and
// reads the crawl flags.
func (s *server) checkOptions(context.Context) error {
	o := s.opts
	if _, err := cron.ParseStandard(o.schedule); err != nil {
		return fmt.Errorf("--schedule %q: %w", o.schedule, err)
	}
	if err := o.probe.check(); err != nil {
		return err
	}
	if o.minScore < -1 || o.minScore > 100 {
		return fmt.Errorf("--min-score %d: want -1 (the model's default), 0 (no cut-off) or a score up to 100", o.minScore)
	}
	ccfg, err := o.crawlFlags.crawlerConfig()
	if err != nil {
		return err
	}
	ccfg.Metrics = s.metrics
	s.crawlCfg = ccfg
	return nil
}

// listen binds the listen address; the public URL defaults to it.
func (s *server) listen(context.Context) error {
	ln, err := net.Listen("tcp", s.opts.addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", s.opts.addr, err)
	}
	s.onClose(func() { ln.Close() })
	s.ln = ln
	s.addr = ln.Addr().String()
	s.publicURL = s.opts.publicURL
	if s.publicURL == "" {
		s.publicURL = defaultPublicURL(ln.Addr())
	}
	return nil
}

// connectMeili makes the Meilisearch client: the hooks' (a cluster's
// replica set), or one to the external or managed Meilisearch.
func (s *server) connectMeili(ctx context.Context, lock *dataDirLock) error {
	if s.client = s.hooks.meili; s.client != nil {
		return nil
	}
	if err := s.startMeili(ctx, lock); err != nil {
		return err
	}
	s.client = meili.New(s.meiliURL, s.meiliKey)
	return nil
}

// loadPageTokenKey reads the page-token key (pageTokenKey).
func (s *server) loadPageTokenKey(context.Context) error {
	k, err := s.pageTokenKey()
	s.tokenKey = k
	return err
}

// buildFederation makes the federator: configured upstreams now, crawled
// registries as the crawls report them.
func (s *server) buildFederation(context.Context) error {
	fed, err := newFederation(s, deriveKey(s.tokenKey, "federation"))
	if err != nil {
		return err
	}
	s.fed = fed
	s.onClose(fed.Close)
	return nil
}

// buildSearchAPI makes the search API over the index, federation and
// what the scheduler tells the about page.
func (s *server) buildSearchAPI(context.Context) error {
	api, err := newSearchAPI(s, s.client, s.embedder, deriveKey(s.tokenKey, "searchapi"))
	if err != nil {
		return err
	}
	if s.opts.registryDomain == "" && strings.Contains(api.Identifier(), ":"+searchapi.DefaultRegistryDomain+":") {
		s.log.Info("the public URL has no domain name: set --registry-domain to name this registry", "identifier", api.Identifier(), "public_url", s.publicURL)
	}
	s.api = api
	return nil
}

// onClose adds f to what close runs, last added first.
func (s *server) onClose(f func()) { s.closers = append(s.closers, f) }

// close releases what build made, in reverse order.
func (s *server) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// startMeili connects to the external Meilisearch or starts a managed one.
func (s *server) startMeili(ctx context.Context, lock *dataDirLock) error {
	o, log := s.opts, s.log
	mc := meili.ManagedConfig{Bin: o.meiliBin, MaxRestarts: o.meiliRestarts, Metrics: s.metrics}
	var m *meili.Managed
	var err error
	s.meiliURL, s.meiliKey, m, err = meiliServer(ctx, o.meiliURL, o.meiliKey, o.dataDir, mc, lock, log)
	if err != nil || m == nil {
		return err
	}
	s.managed = m
	s.onClose(func() {
		if err := m.Stop(); err != nil {
			log.Warn("stop managed meilisearch", "err", err)
		}
		log.Info("managed meilisearch stopped")
	})
	log.Info("managed meilisearch started", "url", m.URL, "bin", m.Bin, "data", filepath.Join(o.dataDir, "meili"))
	return nil
}

// loadModel loads the embedding model: optional; without it (or with
// --no-embeddings) search is keyword only and s.embedNote says why.
func (s *server) loadModel(context.Context) error {
	if s.opts.noEmbeddings {
		s.embedNote = "disabled by --no-embeddings"
		return nil
	}
	embedder, note, err := loadEmbedder(s.opts.modelDir)
	s.embedNote = note
	switch {
	case err != nil:
		return err
	case embedder == nil:
		s.log.Warn("embedding model missing: keyword search only", "dir", s.opts.modelDir)
	default:
		s.log.Info("embedding model loaded", "dir", s.opts.modelDir)
	}
	s.embedder = embedder
	return nil
}

// buildIndexer starts ingest and connects the prober's hook to it; close
// flushes it unless run already did.
func (s *server) buildIndexer(ctx context.Context) error {
	icfg := ingest.Config{Index: s.opts.index, Logger: s.log, Metrics: s.metrics, OnResult: s.late.written.onResult}
	if s.embedder != nil {
		icfg.Embedder = s.embedder
	}
	if s.prober != nil {
		icfg.Health = s.prober
		icfg.Tools = s.prober
	}
	ix, err := ingest.New(ctx, s.client, icfg)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	s.indexer = ix
	s.late.health.ix = ix
	s.onClose(func() {
		if s.flushed {
			return
		}
		cctx, cancel := context.WithTimeout(context.Background(), s.opts.shutdownTimeout)
		defer cancel()
		if err := ix.Close(cctx); err != nil {
			s.log.Warn("close ingest", "err", err)
		}
	})
	return nil
}

// pageTokenKey is the page-token key: one for this data dir, or shared by
// replicas through AGENTFINDER_PAGE_TOKEN_KEY.
func (s *server) pageTokenKey() ([]byte, error) {
	if k := []byte(s.opts.pageTokenKey); len(k) > 0 {
		return k, nil
	}
	return secretKey(s.opts.dataDir, "page-token.key")
}

// buildCrawl makes the crawler, writing to ingest, and the scheduler over it.
func (s *server) buildCrawl(context.Context) error {
	o, ccfg := s.opts, s.crawlCfg
	ccfg.UserAgent = fmt.Sprintf("%s/%s (+%s)", crawler.RobotsAgent, version, s.publicURL)
	var sink crawler.Sink = s.indexer
	if s.prober != nil {
		sink = probedSink{Indexer: s.indexer, prober: s.prober}
	}
	cr, err := crawler.New(ccfg, sink, s.log)
	if err != nil {
		return err
	}
	s.onClose(func() { cr.Close() })
	s.crawler = cr
	s.seeder = &seedCrawler{crawler: cr, learn: s.learnRegistries, urgent: s.late.pinged.take}
	seeds := s.seedHosts.track(withPingedSeeds(checkedSeeds(scheduler.SeedsFrom(o.fixedSeeds(), o.seedsFile)), filepath.Join(o.dataDir, pingedSeedsFile)))
	if list, err := seeds(); err == nil && len(list) == 0 {
		s.log.Warn("no seeds: this registry crawls nothing, and searches of its index say so", "fix", "give --seed DOMAIN or --seeds FILE (AGENTFINDER_SEED, AGENTFINDER_SEEDS), then SIGHUP or POST /admin/crawl")
	}
	s.sched, err = scheduler.New(scheduler.Config{
		Schedule:    o.schedule,
		Concurrency: o.crawlWorkers,
		MinRefresh:  o.minRefresh,
		MaxBackoff:  o.maxBackoff,
		StatePath:   filepath.Join(o.dataDir, "scheduler.json"),
		State:       s.hooks.schedState,
		Seeds:       seeds,
		Extra:       s.crawlerState(cr),
		Logger:      s.log,
		Metrics:     s.metrics,
	}, s.seeder)
	return err
}

// crawlerState persists the crawler's state with the scheduler's; with
// freshValidators its validators are not restored.
func (s *server) crawlerState(cr *crawler.Crawler) scheduler.Persister {
	if s.hooks.freshValidators {
		return freshValidators{crawlerState{cr}}
	}
	return crawlerState{cr}
}

// buildHandler puts the metrics and (when enabled) the admin endpoints in
// front of the search API.
func (s *server) buildHandler(context.Context) error {
	api := s.api
	mux := &searchapi.Mux{}
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		MaxRequestsInFlight: 4,
	}))
	switch {
	case s.hooks.forward != nil:
		s.hooks.forward.mount(mux)
	default:
		if s.opts.adminToken != "" {
			mux.Handle("/admin/", s.adminHandler(s.opts.adminToken))
		}
		if s.indexNow != nil { // public: publishers are not API users
			mux.Handle("GET /indexnow", s.indexNow)
			mux.Handle("POST /indexnow", s.indexNow)
		}
	}
	mux.Handle("/", api.Handler())
	s.routes = append(append(s.routes, mux.Patterns()...), api.Routes()...)
	s.handler = searchapi.NoSniff(mux)
	if s.opts.accessLog {
		s.handler = searchapi.AccessLog(s.handler, s.log.With("component", "http"))
	}
	return nil
}

// run serves HTTP on ln and runs the scheduler until ctx is done, then
// shuts them down and flushes ingest, each phase within its own budget.
func (s *server) run(ctx context.Context, ln net.Listener, hooks serveHooks) error {
	o, log, sched := s.opts, s.log, s.sched
	srv := searchapi.NewHTTPServer(s.handler, o.http, log)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(o.http.Listener(ln)) }()
	log.Info("serving", "addr", s.addr, "public_url", s.publicURL, "index", o.index,
		"meili", s.meiliURL, "managed_meili", s.managed != nil, "embeddings", s.embedder != nil,
		"admin", o.adminToken != "", "crawl", o.crawl)

	// Crawls run on their own context: shutdown first lets them finish,
	// then abandons them.
	runCtx, abandon := context.WithCancel(context.WithoutCancel(ctx))
	defer abandon()
	if o.crawl && sched != nil {
		if err := sched.Start(runCtx); err != nil {
			srv.Close()
			return err
		}
	}
	stopProber := s.startProber()
	if !hooks.noSignals {
		defer s.reloadOnHUP(ctx)()
	}
	if hooks.ready != nil {
		hooks.ready(s)
	}

	select {
	case <-ctx.Done():
	case err := <-serveErr:
		abandon()
		if sched != nil {
			<-sched.Stop().Done()
		}
		stopProber()
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
	if o.crawl && sched != nil {
		s.stopCrawls(abandon)
	}
	stopProber() // before ingest closes: the prober writes to it
	s.flushed = true
	fctx, fcancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer fcancel()
	if s.indexer != nil {
		if err := s.indexer.Close(fctx); err != nil {
			log.Warn("close ingest", "err", err)
		}
	}
	log.Info("stopped")
	return nil
}

// reloadOnHUP reloads the seeds and upstreams on SIGHUP until ctx is done;
// the returned function stops listening for the signal.
func (s *server) reloadOnHUP(ctx context.Context) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
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
	return func() { signal.Stop(hup) }
}

// stopCrawls stops the scheduler, letting crawls in flight finish for half
// the shutdown budget before abandoning them.
func (s *server) stopCrawls(abandon context.CancelFunc) {
	stopped := s.sched.Stop()
	grace := time.NewTimer(s.opts.shutdownTimeout / 2)
	defer grace.Stop()
	select {
	case <-stopped.Done():
	case <-grace.C:
		s.log.Warn("abandoning crawls in flight", "running", s.sched.Status().Running)
		abandon()
		<-stopped.Done()
	}
}
