package e2e_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

// TestRestartWhileMeilisearchDownLosesNoCatalog replays the sequence that
// lost records: Meilisearch is killed (SIGKILL), a catalog served with an
// ETag is crawled, the service stops and abandons the pending write, the
// validators it would persist are kept, Meilisearch and the service start
// again. The recrawl must fetch the catalog in full (a 304 would leave its
// records out of the index until the publisher changes it) and index it;
// only then is its validator kept and used.
func TestRestartWhileMeilisearchDownLosesNoCatalog(t *testing.T) {
	ctx := t.Context()
	m := meilitest.Managed(t)

	const host = "etag-shop.test"
	web := crawlertest.Web(t, fixtures.Options{NoWorld: true})
	web.SetFile(host, "/.well-known/ai-catalog.json", []byte(`{"specVersion": "1.0", "entries": [
	  {"identifier": "urn:ai:etag-shop.test:agent:one", "displayName": "One", "type": "application/a2a-agent-card+json",
	   "url": "https://etag-shop.test/agents/one.json", "description": "The first agent."},
	  {"identifier": "urn:ai:etag-shop.test:agent:two", "displayName": "Two", "type": "application/a2a-agent-card+json",
	   "url": "https://etag-shop.test/agents/two.json", "description": "The second agent."}]}`))
	catalogURL := "https://" + host + "/.well-known/ai-catalog.json"
	ids := []string{"urn:ai:etag-shop.test:agent:one", "urn:ai:etag-shop.test:agent:two"}

	client := meili.New(m.URL, m.APIKey)
	newIndexer := func() *ingest.Indexer {
		ix, err := ingest.New(ctx, client, ingest.Config{Index: "agents", RetryMin: 20 * time.Millisecond, RetryMax: 100 * time.Millisecond})
		if err != nil {
			t.Fatalf("ingest.New: %v", err)
		}
		return ix
	}
	newCrawler := func(sink crawler.Sink) *crawler.Crawler {
		cfg := fixtureCrawlerConfig(web)
		cfg.DisableEnrichment, cfg.DisableDNS, cfg.MaxAttempts = true, true, 0
		cr, err := crawler.New(cfg, sink, nil)
		if err != nil {
			t.Fatalf("crawler.New: %v", err)
		}
		t.Cleanup(func() { _ = cr.Close() })
		return cr
	}
	status := func(cr *crawler.Crawler) normalize.FetchStatus {
		t.Helper()
		rep, err := cr.Crawl(ctx, []string{host})
		if err != nil {
			t.Fatalf("crawl: %v", err)
		}
		for _, c := range rep.Catalogs {
			if c.URL == catalogURL {
				return c.Status
			}
		}
		t.Fatalf("crawl did not report %s: %+v", catalogURL, rep.Catalogs)
		return ""
	}

	// First life: Meilisearch dies, the catalog (with its ETag) is crawled
	// and queued, the service stops before it could be written.
	ix := newIndexer()
	cr := newCrawler(ix)
	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	if got := status(cr); got != normalize.StatusOK {
		t.Fatalf("first crawl: %s", got)
	}
	persisted := cr.Validators() // what the scheduler's state file keeps
	if _, ok := persisted[catalogURL]; ok {
		t.Errorf("the validator of %s is kept though ingest never wrote the catalog", catalogURL)
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	if err := ix.Close(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("close with Meilisearch down: %v, want the pending write abandoned", err)
	}
	cancel()

	// Second life. A validator from an older state file (If-None-Match: *
	// matches any ETag) must not be used either: the index lacks the catalog.
	if err := m.Start(ctx); err != nil {
		t.Fatalf("start meilisearch again: %v", err)
	}
	persisted[catalogURL] = crawler.Validator{ETag: "*", URL: catalogURL}
	ix = newIndexer()
	t.Cleanup(func() { _ = ix.Close(context.Background()) })
	cr = newCrawler(ix)
	cr.SetValidators(persisted)
	if got := status(cr); got != normalize.StatusOK {
		t.Fatalf("recrawl after the restart: %s, want a full fetch (ok)", got)
	}
	if err := ix.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	for _, id := range ids {
		var d map[string]any
		if err := client.Index("agents").GetDocumentWithContext(ctx, normalize.DocID(id), nil, &d); err != nil {
			var me *meilisearch.Error
			if errors.As(err, &me) && me.StatusCode == 404 {
				t.Errorf("%s is not indexed after the restart and recrawl", id)
				continue
			}
			t.Fatalf("get %s: %v", id, err)
		}
	}

	// Written now: the validator is kept and the next crawl is conditional.
	if _, ok := cr.Validators()[catalogURL]; !ok {
		t.Errorf("no validator kept for %s once written", catalogURL)
	}
	if got := status(cr); got != normalize.StatusNotModified {
		t.Errorf("crawl once written: %s, want not_modified", got)
	}
}
