package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/ingest/embed"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi"
	"github.com/agentfinder/agentfinder/searchapi/query"
	"github.com/agentfinder/agentfinder/searchapi/search"
	"github.com/agentfinder/agentfinder/searchapi/web"
)

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

// reload re-reads the seeds, the upstreams and the API keys (SIGHUP).
func (s *server) reload() {
	if s.apiKeys != nil {
		if err := s.apiKeys.Reload(); err != nil {
			s.log.Error("reload api keys failed; the keys loaded before stay", "err", err)
		} else {
			s.log.Info("api keys reloaded")
		}
	}
	if s.sched != nil { // nil on a cluster node's search API: the crawl leader has the seeds
		if err := s.sched.Reload(); err != nil {
			s.log.Error("reload seeds failed", "err", err)
			return
		}
	}
	if err := s.reloadUpstreams(); err != nil {
		s.log.Error("reload upstreams failed", "err", err)
	}
	s.log.Info("seeds reloaded")
}

// newFederation builds the federator with the configured upstreams (flags
// and file); registries learned by crawling are added to its book later.
func newFederation(s *server, tokenKey []byte) (*federation.Federator, error) {
	o := s.opts
	var list []federation.Upstream
	for _, v := range o.upstreams {
		u, err := federation.ParseUpstream(v)
		if err != nil {
			return nil, fmt.Errorf("--upstream %q: %w", v, err)
		}
		list = append(list, u)
	}
	if o.upstreamsFile != "" {
		more, err := federation.LoadUpstreamsFile(o.upstreamsFile)
		if err != nil {
			return nil, err
		}
		list = append(list, more...)
	}
	var ups, forward []string
	for _, u := range list {
		ups = append(ups, u.URL)
		if u.ForwardAuth {
			forward = append(forward, u.URL)
		}
	}
	allow, err := parseCIDRs("federation-allow-cidr", o.federationAllowCIDR)
	if err != nil {
		return nil, err
	}
	cfg := federation.Config{
		Name:            strings.TrimSuffix(s.publicURL, "/"),
		Upstreams:       ups,
		ForwardAuthTo:   forward,
		FederateLearned: o.federateCrawled,
		AllowPrivate:    o.allowPrivate,
		AllowCIDRs:      allow,
		Budget:          o.federationBudget,
		TokenKey:        tokenKey,
	}
	if o.caFile != "" {
		pool, err := crawler.CertPool(o.caFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		cfg.RootCAs = pool
	}
	return federation.New(cfg, s.log)
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
		if err := s.fed.Book().AddUpstream(u); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// learnRegistries puts the registries a crawl reported into the book:
// those _search._agents DNS records named and the registry entries of
// catalogs.
func (s *server) learnRegistries(regs []crawler.Registry) {
	learn(s.fed.Book(), regs, s.log)
}

func learn(book *federation.Book, regs []crawler.Registry, log *slog.Logger) {
	for _, r := range regs {
		switch r.Via {
		case crawler.RegistryViaDNS:
			if err := book.AddDNS(r.Domain, r.URL); err != nil {
				log.Warn("dns registry skipped", "domain", r.Domain, "url", r.URL, "err", err)
			}
		case crawler.RegistryViaCatalog:
			book.AddFromRecords([]normalize.Record{{Identifier: r.Identifier, DisplayName: r.DisplayName,
				Description: r.Description, Tags: r.Tags, Type: normalize.TypeAIRegistry, URL: r.URL}})
		}
	}
}

// crawlInfo tells the about page what this replica crawls, when a crawl
// last finished and which configured registries it federates to.
func (s *server) crawlInfo() web.CrawlInfo {
	var ci web.CrawlInfo
	if s.sched != nil && s.opts.crawl {
		seeds := s.sched.Status().Seeds
		ci.Unseeded = len(seeds) == 0
		for _, sd := range seeds {
			if p, err := crawler.ParseSeed(sd.Seed); err == nil && len(p.Groups) == 0 {
				ci.Seeds = append(ci.Seeds, sd.Seed) // a marked seed's name is not for everyone
			}
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
func newSearchAPI(s *server, client search.Meili, embedder *embed.Model, tokenKey []byte) (*searchapi.Server, error) {
	proxies, err := parseCIDRs("trusted-proxy", s.opts.trustedProxies)
	if err != nil {
		return nil, err
	}
	mode, keys, verifiers, err := s.opts.auth.verifiers(context.Background())
	if err != nil {
		return nil, err
	}
	s.apiKeys = keys
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
		MinScore:       configMinScore(s.opts.minScore),
		PageTokenKey:   tokenKey,
		Version:        version,
		ReadyDetails:   map[string]string{"embeddings": "on"},
		Metrics:        s.metrics,
		Crawl:          s.crawlInfo,
		Auth:           mode,
		Verifiers:      verifiers,
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

// configMinScore is --min-score as searchapi.Config.MinScore: the same
// cut-off (0 none, N at least N), and -1, the model's own, as no value.
func configMinScore(flag int) *int {
	if flag < 0 {
		return nil
	}
	return &flag
}
