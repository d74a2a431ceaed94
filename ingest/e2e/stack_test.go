package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

// dropIndexes deletes index, its sources index and its tools index when
// the test ends.
func dropIndexes(t *testing.T, s *meilitest.Server, index string) {
	t.Cleanup(func() {
		for _, uid := range []string{index, index + "_sources", normalize.ToolsIndex(index)} {
			if task, err := s.Client.DeleteIndex(uid); err == nil {
				_ = meilitest.Wait(s.Client, task.TaskUID)
			}
		}
	})
}

// fixtureCrawlerConfig is a crawler configuration that reaches w's hosts
// and fails fast.
func fixtureCrawlerConfig(w *fixtures.Web) crawler.Config {
	cfg := crawlertest.Config(w)
	cfg.Timeout, cfg.MaxAttempts = 5*time.Second, 1
	return cfg
}

// quickRetries keeps the crawler's retries (3 attempts) but makes them
// quick.
func quickRetries(c *crawler.Config) {
	c.MaxAttempts, c.RetryBackoff, c.MaxRetryAfter = 0, 10*time.Millisecond, 100*time.Millisecond
}

// stack is the fixture web, a fresh index with its indexer, and a crawler
// writing into it: all closed when the test ends.
type stack struct {
	s     *meilitest.Server
	w     *fixtures.Web
	index string
	ix    *ingest.Indexer
	cr    *crawler.Crawler
}

// stackOptions change what newStack starts; the zero value is the fixture
// world, an indexer with the default configuration and a crawler that
// fails fast (fixtureCrawlerConfig).
type stackOptions struct {
	web     *fixtures.Web    // a web already running, shared (nil: start one with webOpts)
	webOpts fixtures.Options // the web to start
	ingest  func(*ingest.Config)
	crawler func(*crawler.Config)
	// sink wraps the indexer into what the crawler writes to (nil: the
	// indexer itself).
	sink func(*ingest.Indexer) crawler.Sink
}

// newStack starts a stack on a new index named after name, as o says.
func newStack(t *testing.T, name string, o stackOptions) *stack {
	t.Helper()
	ctx := t.Context()
	st := &stack{s: meilitest.Connect(t), index: meilitest.NewIndexName(name), w: o.web}
	dropIndexes(t, st.s, st.index)
	if st.w == nil {
		st.w = crawlertest.Web(t, o.webOpts)
	}
	icfg := ingest.Config{Index: st.index}
	if o.ingest != nil {
		o.ingest(&icfg)
	}
	var err error
	if st.ix, err = ingest.New(ctx, st.s.Client, icfg); err != nil {
		t.Fatalf("ingest: %v", err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = st.ix.Close(cctx)
	})
	cfg := fixtureCrawlerConfig(st.w)
	if o.crawler != nil {
		o.crawler(&cfg)
	}
	var sink crawler.Sink = st.ix
	if o.sink != nil {
		sink = o.sink(st.ix)
	}
	if st.cr, err = crawler.New(cfg, sink, nil); err != nil {
		t.Fatalf("crawler: %v", err)
	}
	t.Cleanup(func() { _ = st.cr.Close() })
	return st
}

// crawl crawls seeds, waits until ingest has written what it found and
// returns the crawl's report.
func (st *stack) crawl(t *testing.T, seeds []string) *crawler.Report {
	t.Helper()
	rep, err := st.cr.Crawl(t.Context(), seeds)
	if err != nil {
		t.Fatalf("crawl: %v", err)
	}
	if err := st.ix.Flush(t.Context()); err != nil {
		t.Fatalf("flush: %v", err)
	}
	return rep
}
