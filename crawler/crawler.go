// Package crawler owns Web Ingestion: from a seed (a domain or a URL) it
// discovers every catalog the publisher advertises (well-known URIs, robots.txt
// Agentmap lines, <link rel="ai-catalog"> tags and HTTP Link headers, DNS SVCB
// records), fetches them politely and safely with colly (robots.txt, per-host
// limits, size/time/redirect bounds, retries, conditional GET, the network
// guard of package netguard in the dialer), follows collections and nested
// catalogs, enriches entries from the artifacts they point to, and hands each
// catalog, normalized, to a Sink.
//
// It imports normalize and its own leaf package netguard, nothing else of
// ours: never ingest, never Meilisearch.
package crawler

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/agentfinder/agentfinder/crawler/netguard"
	"github.com/agentfinder/agentfinder/crawler/sigcheck"
	"github.com/agentfinder/agentfinder/normalize"
)

// Sink receives what one catalog fetch produced. Put is called from several
// goroutines at once; a Put error is counted in the report and returned by
// Crawl, and the crawl goes on.
type Sink interface {
	Put(ctx context.Context, res normalize.CatalogResult) error
}

// BatchSink is an optional interface of a Sink: PutAll takes several
// results at once, to be applied in order exactly as Put would apply each.
// An MCP registry walk hands on a page's servers (one result each) through
// it, so the sink can write them in batches as large as a catalog's.
type BatchSink interface {
	PutAll(ctx context.Context, results []normalize.CatalogResult) error
}

// Holder is an optional interface of a Sink. Holds reports whether the sink
// has durably applied a successful fetch of catalog (the final URL of a
// CatalogResult): a result only queued, or whose write failed, is not held.
// The crawler uses and exports a conditional GET validator only for catalogs
// its sink holds, so a 304 never stands in for records the sink has not
// written (a restart while its store was down would otherwise lose them
// until the publisher changes the catalog). A Sink without it holds all.
type Holder interface {
	Holds(catalog string) bool
}

// Starter is an optional interface of a Sink. CrawlStarted is called once
// per seed before any result of its crawl is put, with the crawl's start
// time (on the crawler's clock, the one results are stamped with): the
// sink learns that the catalogs of this crawl of seed are those it is about
// to receive, so a catalog of seed that this crawl does not fetch (gone,
// moved, no longer linked) is no longer confirmed by it.
type Starter interface {
	CrawlStarted(ctx context.Context, seed string, at time.Time) error
}

// Crawler discovers and fetches catalogs. It is safe for concurrent Crawl
// calls; conditional GET state persists across calls. Call Close when done
// to release idle connections.
type Crawler struct {
	cfg       Config
	sink      Sink
	log       *slog.Logger
	res       *resolver
	transport *http.Transport
	client    *http.Client
	sem       chan struct{}      // bounds tasks in flight across concurrent crawls
	metrics   *metrics           // nil: no metrics
	verifier  *sigcheck.Verifier // nil: signatures and digests not checked

	valMu      sync.Mutex
	validators map[string]Validator

	regMu      sync.Mutex
	registries map[string]MCPRegistryState // MCP registry base URL -> walk state
	regTurns   map[string]chan struct{}    // one walk at a time per registry
}

// New builds a Crawler. sink may be nil (results are only reported); logger
// may be nil (discard).
func New(cfg Config, sink Sink, logger *slog.Logger) (*Crawler, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("crawler config: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	pool, err := CertPool(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("crawler config: %w", err)
	}
	res := newResolver(cfg.DNSServer)
	d := &dialer{
		res:     res,
		guard:   netguard.New(netguard.Config{AllowPrivate: cfg.AllowPrivate, Allow: cfg.AllowCIDRs}),
		portMap: cfg.PortMap,
		net:     net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second},
	}
	tr := &http.Transport{
		Proxy:       nil, // a proxy would bypass the network guard
		DialContext: d.DialContext,
		TLSClientConfig: &tls.Config{
			RootCAs:    pool,
			MinVersion: tls.VersionTLS12,
			// Session resumption: a host is revisited for robots.txt, the home page,
			// catalogs and artifacts; resuming skips the certificate verification and
			// key exchange that otherwise dominate a crawl's CPU.
			ClientSessionCache: tls.NewLRUClientSessionCache(4096),
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024, // many hosts are crawled side by side; a small pool evicts and re-handshakes
		MaxIdleConnsPerHost:   cfg.Concurrency,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   cfg.Timeout,
		ResponseHeaderTimeout: cfg.Timeout,
		DisableCompression:    false, // gzip, decoded (and size-limited) transparently; see inflateTransport
	}
	c := &Crawler{
		cfg:       cfg,
		sink:      sink,
		log:       logger.With("component", "crawler"),
		res:       res,
		transport: tr,
		client: &http.Client{
			Transport: &inflateTransport{rt: tr, limit: cfg.MaxBodySize},
			Timeout:   cfg.Timeout,
			// Redirects are followed by the crawl itself, one hop at a
			// time, so every hop passes robots.txt and host patterns and
			// loops are detected.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		sem:        make(chan struct{}, cfg.Concurrency),
		validators: map[string]Validator{},
		registries: map[string]MCPRegistryState{},
		regTurns:   map[string]chan struct{}{},
	}
	if c.metrics, err = newMetrics(cfg.Metrics); err != nil {
		return nil, err
	}
	if !cfg.DisableVerification {
		c.verifier = sigcheck.New(sigcheck.Config{CacheTTL: cfg.DIDCacheTTL, Clock: cfg.Now})
	}
	return c, nil
}

// Close releases idle connections (HTTP and DNS). The Crawler must not be used after.
func (c *Crawler) Close() error {
	c.transport.CloseIdleConnections()
	c.res.close()
	return nil
}

// HTTPClient returns a client with the crawler's network settings (DNS
// server, port map, trusted CAs, the network guard on every dial, bodies
// inflated within MaxBodySize) for one-off fetches outside a crawl, such as
// validating one catalog. It follows redirects itself (at most 10); each new
// connection is guarded.
func (c *Crawler) HTTPClient() *http.Client {
	return &http.Client{Transport: c.client.Transport, Timeout: c.cfg.Timeout}
}

// Validators returns a copy of the conditional GET state, keyed by catalog
// URL, for the scheduler to persist: only the validators of catalogs the
// sink holds (see Holder).
func (c *Crawler) Validators() map[string]Validator {
	c.valMu.Lock()
	all := make(map[string]Validator, len(c.validators))
	for k, v := range c.validators {
		all[k] = v
	}
	c.valMu.Unlock()
	for k, v := range all {
		if !c.holds(k, v) {
			delete(all, k)
		}
	}
	return all
}

// SetValidators replaces the conditional GET state (e.g. loaded at start).
func (c *Crawler) SetValidators(m map[string]Validator) {
	c.valMu.Lock()
	defer c.valMu.Unlock()
	c.validators = make(map[string]Validator, len(m))
	for k, v := range m {
		c.validators[k] = v
	}
}

// CrawledGroups returns the groups the records of catalog URL u were last
// handed on with (the groups of the seed whose crawl reached it; empty:
// public), and false when the crawler knows no such catalog (it never
// fetched it, or its sink does not hold the result). A crawl of u alone
// (an IndexNow ping) takes them, so it never changes who may see what.
func (c *Crawler) CrawledGroups(u string) ([]string, bool) {
	v, ok := c.validator(u)
	return v.Groups, ok
}

// validator returns the state kept for catalog URL u, when its sink holds
// that catalog's result.
func (c *Crawler) validator(u string) (Validator, bool) {
	c.valMu.Lock()
	v, ok := c.validators[u]
	c.valMu.Unlock()
	if !ok || !c.holds(u, v) {
		return Validator{}, false
	}
	return v, true
}

// holds asks the sink whether it holds the catalog fetched from u (its final
// URL v.URL after redirects).
func (c *Crawler) holds(u string, v Validator) bool {
	h, ok := c.sink.(Holder)
	if !ok {
		return true
	}
	if v.URL != "" {
		u = v.URL
	}
	return h.Holds(u)
}

func (c *Crawler) setValidator(u string, v Validator) {
	c.valMu.Lock()
	defer c.valMu.Unlock()
	c.validators[u] = v
}

// session is one Crawl call: its collector, robots cache, visited set and
// report.
type session struct {
	c    *Crawler // its cfg, log and res serve every crawl
	opts CrawlOptions
	col  *colly.Collector
	fr   *frontier
	// pinHost, when set, is the only host redirects may lead to.
	pinHost string

	hostsMu sync.Mutex
	hosts   map[string]*hostState // "scheme://host" -> robots state
	limited map[string]*hostLimit // host name -> its collector with a LimitRule, and its slots

	requests atomic.Int64

	mu       sync.Mutex
	visited  map[string]bool
	perSeed  map[int]int
	groups   map[int][]string // seed index -> its groups (normalize.Record.Visibility)
	seeds    map[int]string   // seed index -> the seed as given (CatalogResult.Seed)
	report   Report
	sinkErr  error
	notFound int
	skipped  int
}

type taskKind int

const (
	taskDiscover taskKind = iota
	taskCatalog
	taskRegistry // walk an MCP registry's server list
)

// task is one unit of crawl work: discover a domain, or fetch a catalog.
type task struct {
	kind   taskKind
	url    string
	domain string
	via    string
	path   []string
	seed   int
	probe  bool // a well-known guess: 404/410 means "none here", not a failure
	card   bool // an A2A agent card at a well-known URI, not a catalog
}

// CrawlOptions are what one crawl asks beyond its seeds.
type CrawlOptions struct {
	// Urgent marks every result the crawl hands its sink as urgent
	// (normalize.CatalogResult.Urgent): someone is waiting to see them.
	Urgent bool
}

// Crawl discovers and fetches the catalogs of seeds (domains such as
// "acme.test", optionally with a port; or catalog URLs, with or without
// "https://") and their nested catalogs, handing each to
// the sink. One bad host never stops the others. It returns when all work is
// done or ctx ends; on cancellation the partial report comes with ctx's
// error. A sink error is returned (the first one) with the full report.
func (c *Crawler) Crawl(ctx context.Context, seeds []string) (*Report, error) {
	return c.CrawlWith(ctx, seeds, CrawlOptions{})
}

// CrawlWith is Crawl with options.
func (c *Crawler) CrawlWith(ctx context.Context, seeds []string, opts CrawlOptions) (*Report, error) {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := c.newSession(ctx)
	s.opts = opts
	stop := context.AfterFunc(ctx, s.fr.close)
	defer stop()

	for i, line := range seeds {
		if strings.TrimSpace(line) == "" {
			continue
		}
		sd, err := ParseSeed(line)
		if err != nil {
			c.log.Error("bad seed", "seed", line, "err", err)
			continue
		}
		seed := sd.Target
		s.groups[i] = sd.Groups
		s.seeds[i] = seed
		s.report.Totals.Seeds++
		c.started(ctx, seed)
		if sd.Registry {
			s.fr.push(task{kind: taskRegistry, url: sd.Target, via: normalize.ViaRegistry, seed: i})
			continue
		}
		if !strings.Contains(seed, "://") && strings.Contains(seed, "/") {
			seed = "https://" + seed // "host/path" names a catalog URL
		}
		if strings.Contains(seed, "://") {
			s.pushCatalog(task{kind: taskCatalog, url: seed, via: normalize.ViaSeed, seed: i})
			continue
		}
		s.fr.push(task{kind: taskDiscover, domain: strings.TrimSuffix(strings.ToLower(seed), "."), seed: i})
	}
	s.fr.seal()

	var wg sync.WaitGroup
	for range c.cfg.Concurrency {
		wg.Go(func() {
			for {
				t, ok := s.fr.pop()
				if !ok {
					return
				}
				select {
				case c.sem <- struct{}{}:
					s.run(ctx, t)
					<-c.sem
				case <-ctx.Done():
				}
				s.fr.done()
			}
		})
	}
	wg.Wait()

	s.mu.Lock()
	defer s.mu.Unlock()
	rep := s.report
	rep.Totals.Requests = s.requests.Load()
	rep.Totals.NotFound = s.notFound
	rep.Totals.Skipped = s.skipped
	rep.finish()
	c.metrics.crawl(&rep)
	if err := parent.Err(); err != nil {
		return &rep, err
	}
	if s.sinkErr != nil {
		return &rep, fmt.Errorf("crawl: sink: %w", s.sinkErr)
	}
	return &rep, nil
}

// newSession starts the state of one crawl (or one Check, Visitor or
// ownership-file fetch) whose requests end with ctx.
func (c *Crawler) newSession(ctx context.Context) *session {
	return &session{
		c:       c,
		col:     c.newCollector(ctx),
		fr:      newFrontier(),
		hosts:   map[string]*hostState{},
		limited: map[string]*hostLimit{},
		visited: map[string]bool{},
		perSeed: map[int]int{},
		groups:  map[int][]string{},
		seeds:   map[int]string{},
	}
}

// started tells a Starter sink that a crawl of seed begins now. Its error
// is logged only: the crawl still runs, its claims then count as they
// did before it.
func (c *Crawler) started(ctx context.Context, seed string) {
	st, ok := c.sink.(Starter)
	if !ok {
		return
	}
	if err := st.CrawlStarted(ctx, seed, c.cfg.Now()); err != nil {
		c.log.Warn("sink crawl start", "seed", seed, "err", err)
	}
}

func (s *session) run(ctx context.Context, t task) {
	switch t.kind {
	case taskDiscover:
		s.discover(ctx, t)
	case taskCatalog:
		s.catalog(ctx, t)
	case taskRegistry:
		s.walkRegistry(ctx, t)
	}
}

// pushCatalog queues a catalog URL once per crawl, within the seed's cap.
func (s *session) pushCatalog(t task) {
	key := t.url
	if u, err := parseHTTPURL(t.url); err == nil {
		key = u.String()
		t.url = key
	}
	s.mu.Lock()
	if s.visited[key] {
		s.mu.Unlock()
		return
	}
	if s.perSeed[t.seed] >= s.c.cfg.MaxCatalogsPerSeed {
		s.skipped++
		s.mu.Unlock()
		s.c.log.Warn("catalog cap reached", "url", key, "cap", s.c.cfg.MaxCatalogsPerSeed)
		return
	}
	s.visited[key] = true
	s.perSeed[t.seed]++
	s.mu.Unlock()
	t.kind = taskCatalog
	s.fr.push(t)
}

// discover runs every discovery mechanism on one seed domain and queues
// what they find, each URL with the via of the first mechanism naming it,
// and the domain's well-known A2A agent card URIs.
func (s *session) discover(ctx context.Context, t task) {
	d := t.domain
	push := func(via string, urls []string) {
		for _, u := range urls {
			s.pushCatalog(task{url: u, via: via, seed: t.seed, probe: via == normalize.ViaWellKnown})
		}
	}
	push(normalize.ViaWellKnown, wellKnownURLs(d))
	for _, u := range agentCardURLs(d) {
		s.pushCatalog(task{url: u, via: normalize.ViaWellKnown, seed: t.seed, probe: true, card: true})
	}
	// DNS runs beside the HTTP mechanisms (the home page waits for
	// robots.txt anyway).
	var wg sync.WaitGroup
	name := d
	if h, _, err := net.SplitHostPort(d); err == nil {
		name = h
	}
	if _, err := netip.ParseAddr(strings.Trim(name, "[]")); err != nil && !s.c.cfg.DisableDNS {
		wg.Go(func() {
			catalogs, registries := s.discoverDNS(ctx, name)
			push(normalize.ViaDNS, catalogs)
			for _, r := range registries {
				s.addRegistry(Registry{URL: r, Via: RegistryViaDNS, Domain: name})
			}
		})
	}
	if u, err := parseHTTPURL("https://" + d + "/"); err == nil {
		if h, err := s.robotsFor(ctx, u); err == nil {
			push(normalize.ViaAgentmap, h.agentmaps)
		}
	}
	push(normalize.ViaLinkTag, s.discoverLinkTag(ctx, d))
	wg.Wait()
}

func (s *session) addRegistry(r Registry) {
	s.mu.Lock()
	s.report.Registries = append(s.report.Registries, r)
	s.mu.Unlock()
}

// frontier is the crawl's work queue. Workers pop until the queue is empty
// and no task is running (running tasks may push more), or it is closed.
type frontier struct {
	mu     sync.Mutex
	cond   *sync.Cond
	queue  []task
	active int
	sealed bool // seeds are all pushed; an empty idle queue means done
	closed bool
}

func newFrontier() *frontier {
	f := &frontier{}
	f.cond = sync.NewCond(&f.mu)
	return f
}

func (f *frontier) push(t task) {
	f.mu.Lock()
	if !f.closed {
		f.queue = append(f.queue, t)
		f.cond.Signal()
	}
	f.mu.Unlock()
}

func (f *frontier) seal() {
	f.mu.Lock()
	f.sealed = true
	f.cond.Broadcast()
	f.mu.Unlock()
}

func (f *frontier) pop() (task, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.queue) == 0 && !f.closed && (f.active > 0 || !f.sealed) {
		f.cond.Wait()
	}
	if f.closed || len(f.queue) == 0 {
		f.closed = true
		f.cond.Broadcast()
		return task{}, false
	}
	t := f.queue[0]
	f.queue[0] = task{}
	f.queue = f.queue[1:]
	f.active++
	return t, true
}

func (f *frontier) done() {
	f.mu.Lock()
	f.active--
	if f.active == 0 && len(f.queue) == 0 {
		f.cond.Broadcast()
	}
	f.mu.Unlock()
}

func (f *frontier) close() {
	f.mu.Lock()
	f.closed = true
	f.queue = nil
	f.cond.Broadcast()
	f.mu.Unlock()
}
