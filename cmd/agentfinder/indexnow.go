package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
// returns (a missing file adds none). A pinged host that a loaded seed
// names already is left out: the configured seed, with its groups, is the
// one that crawls it, never shadowed by a public copy.
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
		configured := indexSeeds(list)
		for _, s := range more {
			if len(configured[hostName(s)]) == 0 && !slices.Contains(list, s) {
				list = append(list, s)
			}
		}
		return list, nil
	}
}

// listedSeed is one line of the seed list and what it says.
type listedSeed struct {
	line string // as the scheduler knows it
	seed crawler.Seed
}

// indexSeeds maps each host to the seeds on it.
func indexSeeds(list []string) map[string][]listedSeed {
	m := map[string][]listedSeed{}
	for _, line := range list {
		sd, err := crawler.ParseSeed(line)
		if err != nil {
			continue // checkedSeeds refused the list before it got here
		}
		if h := sd.Host(); h != "" {
			m[h] = append(m[h], listedSeed{line: line, seed: sd})
		}
	}
	return m
}

// seedHosts indexes the scheduler's seed list by host, so a ping finds the
// seeds covering its URLs (and their groups) without a scan of every seed.
// track keeps it in step with each load of the list.
type seedHosts struct {
	m atomic.Pointer[map[string][]listedSeed]
}

// track returns load, noting each list it returns.
func (h *seedHosts) track(load func() ([]string, error)) func() ([]string, error) {
	return func() ([]string, error) {
		list, err := load()
		if err == nil {
			m := indexSeeds(list)
			h.m.Store(&m)
		}
		return list, err
	}
}

// on returns the seeds on host (a name, optionally with a port).
func (h *seedHosts) on(host string) []listedSeed {
	if m := h.m.Load(); m != nil {
		return (*m)[hostName(host)]
	}
	return nil
}

// pingCrawls adapts the scheduler and ingest to indexnow.Crawls. A ping
// crawls with the groups of the seed covering each URL (see targets), so
// it never changes who may see a catalog's records.
type pingCrawls struct {
	sched    *scheduler.Scheduler
	seeds    *seedHosts
	held     func(catalog string) bool
	groupsOf func(catalog string) ([]string, bool) // crawler.CrawledGroups
	crawl    bool                                  // this replica crawls
	newHosts bool
	seedFile string
	durable  bool // save queued crawls before answering (the state is the cluster's)
	log      *slog.Logger
	addMu    sync.Mutex
	pinged   *pingedTargets // crawl targets queued by a ping: their results are written at once
}

// pingedTargets are the crawl targets IndexNow pings queued, until the
// scheduler's crawl of each asks (take).
type pingedTargets struct{ m sync.Map }

// mark records that a ping queued target's crawl.
func (p *pingedTargets) mark(target string) { p.m.Store(target, true) }

// take reports (once) whether a ping queued target's crawl.
func (p *pingedTargets) take(target string) bool {
	_, ok := p.m.LoadAndDelete(target)
	return ok
}

// hostName is the lower-case name of host (a name, optionally with a port).
func hostName(host string) string {
	if u, err := url.Parse("https://" + host); err == nil && u.Hostname() != "" {
		return strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	}
	return strings.ToLower(host)
}

// urlHost is the host part of URL u ("" when it has none).
func urlHost(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return pu.Host
}

// seedNamed returns the seed whose target is u itself.
func (p *pingCrawls) seedNamed(u string) (listedSeed, bool) {
	for _, sd := range p.seeds.on(urlHost(u)) {
		if sd.seed.Target == u {
			return sd, true
		}
	}
	return listedSeed{}, false
}

// known reports whether u is an indexed catalog or a seed itself.
func (p *pingCrawls) known(u string) bool {
	_, isSeed := p.seedNamed(u)
	return isSeed || p.held(u)
}

// Admit implements indexnow.Crawls.
func (p *pingCrawls) Admit(host string, urls []string) bool {
	if p.newHosts || len(p.seeds.on(host)) > 0 {
		return true
	}
	return slices.ContainsFunc(urls, p.known)
}

// targets are what a ping of u on host crawls, each with the groups of
// the seed that covers it:
//   - a seed itself: that seed;
//   - an indexed catalog: the catalog alone, with the groups its records
//     were crawled with (the crawl of its seed reached it);
//   - anything else (a page linking a catalog, the home page, a catalog
//     not yet indexed): the seeds on host, each with its own groups, or,
//     when there are none, the host's discovery as a new, public host.
func (p *pingCrawls) targets(host, u string) []string {
	if sd, ok := p.seedNamed(u); ok {
		return []string{sd.line}
	}
	if p.held(u) {
		if groups, ok := p.groupsOf(u); ok {
			return []string{crawler.Seed{Target: u, Groups: groups}.String()}
		}
	}
	var out []string
	for _, sd := range p.seeds.on(host) {
		out = append(out, sd.line)
	}
	if len(out) == 0 {
		out = append(out, host)
	}
	return out
}

// Crawl implements indexnow.Crawls: each URL that is a catalog in the index
// is crawled on its own; any other URL makes the host's seeds (or, for a
// new host, its discovery) run.
func (p *pingCrawls) Crawl(host string, urls []string) error {
	if !p.crawl {
		return errors.New("crawling is off in this replica (--crawl=false)")
	}
	var targets []string
	for _, u := range urls {
		for _, t := range p.targets(host, u) {
			if !slices.Contains(targets, t) {
				targets = append(targets, t)
			}
		}
	}
	if p.newHosts && len(p.seeds.on(host)) == 0 && !slices.ContainsFunc(urls, p.known) {
		if err := p.addSeed(host); err != nil {
			return err
		}
	}
	for _, t := range targets {
		p.pinged.mark(t)
		p.sched.RunNow(t)
	}
	// In a cluster, queued crawls are saved with the scheduler's state
	// before the ping is answered, so the next crawl leader runs them.
	if p.durable {
		if err := p.sched.Save(); err != nil {
			p.log.Warn("the crawls a ping queued were not saved: a new crawl leader would not run them", "host", host, "err", err)
		}
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
// it exists (ingest is built first): a late hook (lateHooks.written),
// connected by the indexnow step.
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
func (s *server) buildIndexNow(context.Context) error {
	o := s.opts.indexNow
	if o.off {
		return nil
	}
	pc := &pingCrawls{sched: s.sched, seeds: &s.seedHosts, held: s.indexer.Holds, groupsOf: s.crawler.CrawledGroups,
		crawl: s.opts.crawl, newHosts: o.newHosts, seedFile: filepath.Join(s.opts.dataDir, pingedSeedsFile), pinged: &s.late.pinged,
		durable: s.hooks.schedState != nil, log: s.log}
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
	s.late.written.h.Store(h)
	s.indexNow = h
	return nil
}
