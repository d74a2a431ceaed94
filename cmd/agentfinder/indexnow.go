package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/scheduler"
	"github.com/agentfinder/agentfinder/searchapi/indexnow"
)

// indexNowOptions are serve's IndexNow flags.
type indexNowOptions struct {
	off       bool
	perMinute float64
	newHosts  bool
}

func (o *indexNowOptions) register(c *cli) {
	fs := c.fs
	fs.BoolVar(&o.off, "no-indexnow", false, "turn off the IndexNow endpoint (GET/POST /indexnow), through which publishers get a changed catalog crawled at once")
	fs.Float64Var(&o.perMinute, "indexnow-per-minute", indexnow.DefaultPerMinute, "IndexNow pings per host and minute that lead to a crawl, and key files fetched per host and minute; more get 429 with Retry-After")
	fs.BoolVar(&o.newHosts, "indexnow-new-hosts", false, "let a verified IndexNow ping for a host this registry does not crawl add the host as a seed (a public engine wants this; an enterprise does not)")
}

// pingedSeedsFile keeps, under the data directory, the hosts that became
// seeds through IndexNow pings, one per line, so they survive restarts.
const pingedSeedsFile = "indexnow-seeds.txt"

// withPingedSeeds adds the seeds in the pinged-seeds file to what load
// returns (a missing file adds none).
func withPingedSeeds(load func() ([]string, error), file string) func() ([]string, error) {
	return func() ([]string, error) {
		list, err := load()
		if err != nil {
			return nil, err
		}
		f, err := os.Open(file)
		if errors.Is(err, os.ErrNotExist) {
			return list, nil
		}
		if err != nil {
			return nil, err
		}
		defer f.Close()
		more, err := scheduler.ParseSeeds(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		for _, s := range more {
			if !slices.Contains(list, s) {
				list = append(list, s)
			}
		}
		return list, nil
	}
}

// pingCrawls adapts the scheduler and ingest to indexnow.Crawls.
type pingCrawls struct {
	sched    *scheduler.Scheduler
	held     func(catalog string) bool
	crawl    bool // this replica crawls
	newHosts bool
	seedFile string
	addMu    sync.Mutex
	urgent   sync.Map // crawl targets queued by a ping: their results are written at once
}

// hostName is the lower-case name of host (a name, optionally with a port).
func hostName(host string) string {
	if u, err := url.Parse("https://" + host); err == nil && u.Hostname() != "" {
		return strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	}
	return strings.ToLower(host)
}

// seedFor returns the seed that names host itself (as pinged, or its
// lower-case name without a port), "" when none. A map lookup: pings must
// not cost a scan of every seed.
func (p *pingCrawls) seedFor(host string) string {
	for _, s := range []string{host, hostName(host)} {
		if p.sched.Has(s) {
			return s
		}
	}
	return ""
}

// known reports whether u is an indexed catalog or a seed itself.
func (p *pingCrawls) known(u string) bool { return p.held(u) || p.sched.Has(u) }

// Admit implements indexnow.Crawls.
func (p *pingCrawls) Admit(host string, urls []string) bool {
	if p.newHosts || p.seedFor(host) != "" {
		return true
	}
	return slices.ContainsFunc(urls, p.known)
}

// Crawl implements indexnow.Crawls: each URL that is a catalog in the index
// is crawled on its own; any other URL (a page that links a catalog, the
// home page, a catalog not yet indexed) makes the host's discovery run.
func (p *pingCrawls) Crawl(host string, urls []string) error {
	if !p.crawl {
		return errors.New("crawling is off in this replica (--crawl=false)")
	}
	var targets []string
	for _, u := range urls {
		t := u
		if !p.known(u) {
			t = p.seedFor(host)
			if t == "" {
				t = host
			}
		}
		if !slices.Contains(targets, t) {
			targets = append(targets, t)
		}
	}
	if p.newHosts && p.seedFor(host) == "" && !slices.ContainsFunc(urls, p.known) {
		if err := p.addSeed(host); err != nil {
			return err
		}
	}
	for _, t := range targets {
		p.urgent.Store(t, true)
		p.sched.RunNow(t)
	}
	return nil
}

// addSeed appends host to the pinged-seeds file and reloads the seeds.
func (p *pingCrawls) addSeed(host string) error {
	p.addMu.Lock()
	defer p.addMu.Unlock()
	f, err := os.OpenFile(p.seedFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, hostName(host)); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return p.sched.Reload()
}

// isUrgent reports (once) whether a ping queued target's crawl.
func (p *pingCrawls) isUrgent(target string) bool {
	_, ok := p.urgent.LoadAndDelete(target)
	return ok
}

// keyFetcher adapts the crawler to indexnow.KeyFetcher.
type keyFetcher struct{ c *crawler.Crawler }

func (k keyFetcher) FetchOwnershipFile(ctx context.Context, u string) ([]byte, error) {
	b, err := k.c.FetchOwnershipFile(ctx, u)
	if errors.Is(err, crawler.ErrOtherHost) {
		return nil, fmt.Errorf("%w: %w", indexnow.ErrOtherHost, err)
	}
	return b, err
}

// writtenHook passes ingest's written catalogs to the IndexNow handler once
// it exists (ingest starts first).
type writtenHook struct {
	h atomic.Pointer[indexnow.Handler]
}

func (w *writtenHook) onResult(catalog string, applied ingest.ApplyResult) {
	if h := w.h.Load(); h != nil && applied.Err == nil {
		h.Written(catalog)
	}
}

// buildIndexNow makes the IndexNow handler over the crawler and the
// scheduler (unless --no-indexnow); buildHandler mounts it.
func (s *server) buildIndexNow() error {
	o := s.opts.indexNow
	if o.off {
		return nil
	}
	pc := &pingCrawls{sched: s.sched, held: s.indexer.Holds, crawl: s.opts.crawl, newHosts: o.newHosts,
		seedFile: filepath.Join(s.opts.dataDir, pingedSeedsFile)}
	h, err := indexnow.New(indexnow.Config{
		Keys:      keyFetcher{s.crawler},
		Crawls:    pc,
		PerMinute: o.perMinute,
		Metrics:   s.metrics,
		Logger:    s.log,
	})
	if err != nil {
		return err
	}
	s.written.h.Store(h)
	s.seeder.urgent = pc.isUrgent
	s.indexNow = h
	return nil
}
