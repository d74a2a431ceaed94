package e2e_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
)

// dropIndexes deletes index and its sources index when the test ends.
func dropIndexes(t *testing.T, s *meilitest.Server, index string) {
	t.Cleanup(func() {
		for _, uid := range []string{index, index + "_sources"} {
			if task, err := s.Client.DeleteIndex(uid); err == nil {
				_ = meilitest.Wait(s.Client, task.TaskUID)
			}
		}
	})
}

// fixtureCrawlerConfig is a crawler configuration that reaches w's hosts
// (its DNS, its ports, its CA) and fails fast.
func fixtureCrawlerConfig(w *fixtures.Web) crawler.Config {
	return crawler.Config{
		DNSServer:    w.DNSAddr,
		PortMap:      map[string]string{"443": strconv.Itoa(w.PortFor("https")), "80": strconv.Itoa(w.PortFor("http"))},
		AllowPrivate: true,
		CAFile:       w.CAFile,
		Timeout:      5 * time.Second,
		MaxAttempts:  1,
	}
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

// newStack starts a stack on a new index named after name; tune, when not
// nil, adjusts the crawler's configuration.
func newStack(t *testing.T, name string, tune func(*crawler.Config)) *stack {
	t.Helper()
	ctx := t.Context()
	st := &stack{s: meilitest.Connect(t), index: meilitest.NewIndexName(name)}
	dropIndexes(t, st.s, st.index)
	w, err := fixtures.Start(ctx, fixtures.Options{})
	if err != nil {
		t.Fatalf("fixtures: %v", err)
	}
	t.Cleanup(func() { _ = w.Close() })
	st.w = w
	if st.ix, err = ingest.New(ctx, st.s.Client, ingest.Config{Index: st.index}); err != nil {
		t.Fatalf("ingest: %v", err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = st.ix.Close(cctx)
	})
	cfg := fixtureCrawlerConfig(w)
	if tune != nil {
		tune(&cfg)
	}
	if st.cr, err = crawler.New(cfg, st.ix, nil); err != nil {
		t.Fatalf("crawler: %v", err)
	}
	t.Cleanup(func() { _ = st.cr.Close() })
	return st
}

// crawl crawls seeds and waits until ingest has written what it found.
func (st *stack) crawl(t *testing.T, seeds []string) {
	t.Helper()
	if _, err := st.cr.Crawl(t.Context(), seeds); err != nil {
		t.Fatalf("crawl: %v", err)
	}
	if err := st.ix.Flush(t.Context()); err != nil {
		t.Fatalf("flush: %v", err)
	}
}
