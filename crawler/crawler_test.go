package crawler_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

// discoveryVias are the vias of discovery mechanisms (not following).
var discoveryVias = []string{normalize.ViaWellKnown, normalize.ViaAgentmap, normalize.ViaLinkTag, normalize.ViaDNS}

func TestEachDiscoveryMechanismAlone(t *testing.T) {
	web := startWeb(t)
	cases := []struct {
		name string
		seed string
		via  string
		want string // catalog URL; "" when any URL with that via will do
	}{
		{"wellknown", fixtures.HostAcme, normalize.ViaWellKnown, "https://acme.test/.well-known/ai-catalog.json"},
		{"agentmap", fixtures.HostRobotsOnly, normalize.ViaAgentmap, web.URL(fixtures.HostRobotsOnly, "/agents/catalog.json")},
		{"agentmap relative", fixtures.HostRobotsOnly, normalize.ViaAgentmap, "https://robots-only.test/catalogs/tools.json"},
		{"linktag", fixtures.HostLinkOnly, normalize.ViaLinkTag, "https://linktag.test/static/agents.json"},
		{"dns svcb service", fixtures.HostDNSService, normalize.ViaDNS, web.URL(fixtures.HostDNSServiceTarget, fixtures.PathWellKnown)},
		{"dns svcb cap", fixtures.HostDNSAID, normalize.ViaDNS, web.URL(fixtures.HostDNSAIDTarget, fixtures.PathDNSAIDManifest)},
		{"dns svcb alias", fixtures.HostDNSAlias, normalize.ViaDNS, web.URL(fixtures.HostDNSAliasTarget, fixtures.PathWellKnown)},
		{"dns txt", fixtures.HostDNSTXT, normalize.ViaDNS, web.URL(fixtures.HostDNSTXTTarget, fixtures.PathDNSTXTManifest)},
		{"dns _entries", fixtures.HostDNSEntries, normalize.ViaDNS, web.URL(fixtures.HostDNSEntriesTarget, fixtures.PathWellKnown)},
		{"dns _index", fixtures.HostDNSIndex, normalize.ViaDNS, web.URL(fixtures.HostDNSIndexTarget, fixtures.PathWellKnown)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sink := &crawlertest.Collector{}
			c := newCrawler(t, webConfig(web), sink)
			rep := crawl(t, c, tc.seed)
			got, ok := find(rep, tc.want)
			if !ok {
				t.Fatalf("catalog %s not found; report: %+v", tc.want, rep.Catalogs)
			}
			if got.Via != tc.via || got.Status != normalize.StatusOK || got.Records == 0 {
				t.Fatalf("catalog %s: via %s status %s reason %s records %d, want via %s, ok with records",
					tc.want, got.Via, got.Status, got.Reason, got.Records, tc.via)
			}
			// Alone: no other discovery mechanism found a catalog for this seed.
			for _, c := range rep.Catalogs {
				if slices.Contains(discoveryVias, c.Via) && c.Via != tc.via && c.Status == normalize.StatusOK {
					t.Errorf("catalog %s found via %s, want only %s", c.URL, c.Via, tc.via)
				}
			}
			// The sink got the same result, records carrying their provenance.
			var res *normalize.CatalogResult
			for _, r := range sink.Results() {
				if r.Catalog == tc.want {
					res = &r
				}
			}
			if res == nil {
				t.Fatalf("sink did not receive %s", tc.want)
			}
			for _, rec := range res.Records {
				if rec.Source.Via != tc.via || rec.Source.Catalog != tc.want {
					t.Errorf("record %s source = %+v, want via %s catalog %s", rec.Identifier, rec.Source, tc.via, tc.want)
				}
			}
		})
	}
}

func TestRobotsDisallowedPathsAreNeverRequested(t *testing.T) {
	web := startWeb(t)
	c := newCrawler(t, webConfig(web), &crawlertest.Collector{})
	rep := crawl(t, c, fixtures.HostRobotsOnly)
	if web.Fetched(fixtures.HostRobotsOnly, fixtures.PathRobotsForbidden) {
		t.Fatalf("%s%s was requested although robots.txt disallows it", fixtures.HostRobotsOnly, fixtures.PathRobotsForbidden)
	}
	// The home page links the private catalog: it is reported, not fetched.
	got, ok := find(rep, "https://"+fixtures.HostRobotsOnly+fixtures.PathRobotsForbidden)
	if !ok || got.Status != normalize.StatusFailed || got.Reason != crawler.ReasonRobotsDisallowed {
		t.Fatalf("private catalog report = %+v (found %v), want failed robots_disallowed", got, ok)
	}
	// Every request carried our agent; robots.txt came first.
	reqs := web.RequestsFor(fixtures.HostRobotsOnly)
	if len(reqs) == 0 || reqs[0].Path != fixtures.PathRobots {
		t.Fatalf("first request to %s = %+v, want robots.txt", fixtures.HostRobotsOnly, reqs)
	}
	for _, r := range reqs {
		if !strings.HasPrefix(r.UserAgent, crawler.RobotsAgent+"/") {
			t.Errorf("request %s with User-Agent %q", r.Path, r.UserAgent)
		}
		if strings.HasPrefix(r.Path, "/private/") {
			t.Errorf("disallowed path requested: %s", r.Path)
		}
	}
}

func TestFollowingEndsCyclesAndStopsAtMaxDepth(t *testing.T) {
	web := startWeb(t)
	c := newCrawler(t, webConfig(web), &crawlertest.Collector{})
	rep := crawl(t, c, fixtures.HostBroken)

	count := map[string]int{}
	for _, r := range web.RequestsFor(fixtures.HostBroken) {
		count[r.Path]++
	}
	for _, p := range []string{fixtures.PathCycleA, fixtures.PathCycleB} {
		if count[p] != 1 {
			t.Errorf("%s requested %d times, want once (cycle)", p, count[p])
		}
	}
	// Depth 0 is the well-known catalog, so the default MaxDepth 4 reaches
	// deep/0 .. deep/3 and no further.
	for i := range fixtures.DeepLevels + 1 {
		p := fmt.Sprintf("/deep/%d.json", i)
		if want := i < 4; (count[p] > 0) != want {
			t.Errorf("%s requested %d times, want fetched=%v", p, count[p], want)
		}
	}
	last, ok := find(rep, web.URL(fixtures.HostBroken, "/deep/3.json"))
	if !ok || last.Status != normalize.StatusOK || len(last.Path) != 4 {
		t.Fatalf("deep/3 report = %+v, want ok with a path of 4 catalogs", last)
	}
	if !hasProblem(last.Problems, normalize.CodeDepthExceeded) {
		t.Errorf("deep/3 problems %+v lack depth_exceeded", last.Problems)
	}
}

// funcSink adapts a function to crawler.Sink.
type funcSink func(context.Context, normalize.CatalogResult) error

func (f funcSink) Put(ctx context.Context, r normalize.CatalogResult) error { return f(ctx, r) }

func TestCancelAndSinkErrors(t *testing.T) {
	web := startWeb(t)

	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		sink := funcSink(func(context.Context, normalize.CatalogResult) error { cancel(); return nil })
		c := newCrawler(t, webConfig(web), sink)
		rep, err := c.Crawl(ctx, []string{fixtures.HostAcme, fixtures.HostBroken})
		if !errors.Is(err, context.Canceled) || rep == nil {
			t.Fatalf("Crawl = %v, %v; want a partial report and context.Canceled", rep, err)
		}
	})

	t.Run("sink error", func(t *testing.T) {
		boom := errors.New("index down")
		sink := funcSink(func(context.Context, normalize.CatalogResult) error { return boom })
		c := newCrawler(t, webConfig(web), sink)
		rep, err := c.Crawl(t.Context(), []string{fixtures.HostAcme})
		if !errors.Is(err, boom) {
			t.Fatalf("Crawl error = %v, want the sink's", err)
		}
		if rep.Totals.SinkErrors == 0 || rep.Totals.OK == 0 {
			t.Fatalf("totals %+v: want the crawl completed with sink errors counted", rep.Totals)
		}
	})
}

func TestConcurrentCrawlsShareOneCrawler(t *testing.T) {
	web := startWeb(t)
	c := newCrawler(t, webConfig(web), &crawlertest.Collector{})
	seeds := []string{fixtures.HostAcme, fixtures.HostLinkOnly, fixtures.HostDNSService, fixtures.HostSolo}
	reps := make([]*crawler.Report, len(seeds))
	errs := make([]error, len(seeds))
	var wg sync.WaitGroup
	for i, s := range seeds {
		wg.Go(func() { reps[i], errs[i] = c.Crawl(t.Context(), []string{s}) })
	}
	wg.Wait()
	for i, s := range seeds {
		if errs[i] != nil || reps[i].Totals.OK == 0 {
			t.Errorf("crawl of %s: err %v, totals %+v", s, errs[i], reps[i].Totals)
		}
	}
}

// TestCrawlDelaySpacesRequests checks politeness, not speed: with robots.txt
// asking for Crawl-delay 1 (capped here at 150ms), requests to the host
// arrive at least that far apart, whatever the machine's speed.
func TestCrawlDelaySpacesRequests(t *testing.T) {
	web := startWeb(t)
	cfg := webConfig(web)
	cfg.MaxCrawlDelay = 150 * time.Millisecond
	cfg.PerHostConcurrency = 4 // a delay forces one request at a time anyway
	crawl(t, newCrawler(t, cfg, &crawlertest.Collector{}), fixtures.HostRobotsOnly)
	var reqs []fixtures.Request
	for _, r := range web.RequestsFor(fixtures.HostRobotsOnly) {
		if r.Scheme == "https" && r.Path != fixtures.PathRobots {
			reqs = append(reqs, r)
		}
	}
	if len(reqs) < 3 {
		t.Fatalf("only %d requests to %s", len(reqs), fixtures.HostRobotsOnly)
	}
	slices.SortFunc(reqs, func(a, b fixtures.Request) int { return a.Time.Compare(b.Time) })
	for i := 1; i < len(reqs); i++ {
		if gap := reqs[i].Time.Sub(reqs[i-1].Time); gap < 140*time.Millisecond {
			t.Errorf("%s then %s only %v apart, want >= the 150ms crawl delay", reqs[i-1].Path, reqs[i].Path, gap)
		}
	}
}
