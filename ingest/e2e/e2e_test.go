// Package e2e_test runs the crawler over the fixture web into a real
// Meilisearch through ingest: the sync rules seen end to end. It lives apart
// from package ingest so the crawler's and fixtures' own goroutines do not
// weigh on ingest's leak checks.
package e2e_test

import (
	"sync"
	"testing"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/normalize"
)

func TestCrawlFixtureWebIntoIndex(t *testing.T) {
	var mu sync.Mutex
	last := map[string]ingest.ApplyResult{}
	st := newStack(t, "e2e", stackOptions{
		ingest: func(c *ingest.Config) {
			c.OnResult = func(catalog string, a ingest.ApplyResult) {
				mu.Lock()
				last[catalog] = a
				mu.Unlock()
			}
		},
		crawler: quickRetries,
	})
	s, w, ix, index, ctx := st.s, st.w, st.ix, st.index, t.Context()
	crawl := func() {
		t.Helper()
		st.crawl(t, w.Seeds())
	}
	get := func(identifier string) *normalize.Document {
		t.Helper()
		var d normalize.Document
		if err := s.Client.Index(index).GetDocumentWithContext(ctx, normalize.DocID(identifier), nil, &d); err != nil {
			return nil // not found (or unreachable: the checks below then fail)
		}
		return &d
	}

	crawl()
	if st := ix.Stats(); st.Documents == 0 || st.TaskFailures != 0 {
		t.Fatalf("first crawl: %+v", st)
	}
	const (
		assistant = "urn:ai:acme.test:agent:assistant"
		lost      = "urn:ai:changing.test:agent:lost-and-found"
		alerts    = "urn:ai:changing.test:agent:service-alerts"
		trip      = "urn:ai:changing.test:agent:trip-planner"
	)
	// spoofer.test republishes acme's assistant, newer: acme's record stands.
	d := get(assistant)
	if d == nil || !d.PublisherVerified || d.Version == "9.9.9" {
		t.Fatalf("acme's assistant after crawling the spoofer: %+v", d)
	}
	acmeCatalog := d.SourceCatalog
	if get(lost) == nil || get(alerts) != nil {
		t.Fatal("changing.test first version not indexed as served")
	}

	// Second crawl: changing.test now drops lost-and-found, changes the trip
	// planner and adds service alerts; everything else answers 304.
	crawl()
	if get(lost) != nil {
		t.Fatal("an entry changing.test no longer lists is still indexed")
	}
	if get(alerts) == nil {
		t.Fatal("changing.test's new entry is not indexed")
	}
	if d := get(trip); d == nil || d.UpdatedAt != "2026-02-20T00:00:00Z" {
		t.Fatalf("changing.test's changed entry: %+v", d)
	}

	// Third crawl: acme.test's catalog fails; nothing of it is deleted.
	before := countCatalog(t, s.Client, index, acmeCatalog)
	if before == 0 {
		t.Fatalf("no documents from %s", acmeCatalog)
	}
	w.Script(fixtures.HostAcme, fixtures.PathWellKnown, fixtures.Behavior{Status: 503})
	crawl()
	mu.Lock()
	a := last[acmeCatalog]
	mu.Unlock()
	if a.Status != normalize.StatusFailed {
		t.Fatalf("acme.test's last result: %+v, want a failed fetch", a)
	}
	if after := countCatalog(t, s.Client, index, acmeCatalog); after != before {
		t.Fatalf("a failed fetch of acme.test changed its documents: %d -> %d", before, after)
	}
}

func countCatalog(t *testing.T, c meilisearch.ServiceManager, index, catalog string) int64 {
	t.Helper()
	res, err := c.Index(index).SearchWithContext(t.Context(), "", &meilisearch.SearchRequest{
		Limit: 0, Filter: normalize.FieldSourceCatalog + ` = "` + catalog + `"`})
	if err != nil {
		t.Fatalf("count %s: %v", catalog, err)
	}
	return res.EstimatedTotalHits
}
