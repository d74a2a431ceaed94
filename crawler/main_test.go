package crawler_test

import (
	"net/netip"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
)

func TestMain(m *testing.M) {
	if v := os.Getenv(fixtureServerEnv); v != "" {
		os.Exit(runFixtureServer(v == fixtureServerSigned))
	}
	goleak.VerifyTestMain(m)
}

// startWeb starts the fixture web for one test.
func startWeb(t testing.TB) *fixtures.Web {
	t.Helper()
	return crawlertest.Web(t, fixtures.Options{})
}

// webConfig is a crawler configuration that reaches the fixture web: its
// DNS server, its CA, its ports, private addresses allowed, and short
// timeouts and retry waits so broken cases end quickly.
func webConfig(web *fixtures.Web) crawler.Config {
	cfg := crawlertest.Config(web)
	cfg.UserAgent = "AgentFinderBot/test (+https://github.com/agentfinder/agentfinder)"
	cfg.Timeout, cfg.MaxAttempts = 2*time.Second, 2
	cfg.RetryBackoff, cfg.MaxRetryAfter = 5*time.Millisecond, 50*time.Millisecond
	cfg.MaxCrawlDelay = 20 * time.Millisecond // robots-only.test asks for 1s
	return cfg
}

// newCrawler builds a crawler closed at the end of the test.
func newCrawler(t testing.TB, cfg crawler.Config, sink crawler.Sink) *crawler.Crawler {
	t.Helper()
	c, err := crawler.New(cfg, sink, nil)
	if err != nil {
		t.Fatalf("crawler.New: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// crawl runs one crawl and fails the test on error.
func crawl(t testing.TB, c *crawler.Crawler, seeds ...string) *crawler.Report {
	t.Helper()
	rep, err := c.Crawl(t.Context(), seeds)
	if err != nil {
		t.Fatalf("crawl %v: %v", seeds, err)
	}
	return rep
}

// find returns the report entry for a catalog URL.
func find(rep *crawler.Report, url string) (crawler.CatalogReport, bool) {
	for _, c := range rep.Catalogs {
		if c.URL == url {
			return c, true
		}
	}
	return crawler.CatalogReport{}, false
}

func mustPrefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}
