package ingest

import (
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
)

// TestMovedCatalogTakesOverWithinOneCrawl: a publisher moves its catalog to
// a URL that sorts after the old one. The crawl after the move reaches only
// the new URL (the old one is no longer linked), and the record follows it
// in that crawl although the old URL would win the tie-break on catalog
// URL; the old claim is dropped once StaleAfter has passed. While both
// URLs are reached, the deterministic order still decides.
func TestMovedCatalogTakesOverWithinOneCrawl(t *testing.T) {
	const (
		seed  = "pub.test"
		oldAt = "https://pub.test/a/ai-catalog.json"
		newAt = "https://pub.test/b/ai-catalog.json"
		id    = "urn:ai:pub.test:agent:mover"
	)
	e := newEnv(t, Config{StaleAfter: 48 * time.Hour})
	body := manifest(entry(id, "Mover", "moves its catalog", "2026-01-01T00:00:00Z"))
	crawl := func(catalogs ...string) {
		t.Helper()
		if err := e.ix.CrawlStarted(t.Context(), seed, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Second)
		var rs []normalize.CatalogResult
		for _, c := range catalogs {
			r := catalog(t, c, body)
			r.Seed, r.FetchedAt = seed, e.clock.Now()
			rs = append(rs, r)
		}
		e.sync(rs...)
		e.clock.Advance(time.Hour)
	}
	owner := func() string {
		t.Helper()
		d := e.doc(id)
		if d == nil {
			t.Fatalf("%s not indexed", id)
		}
		return d.SourceCatalog
	}

	// Both URLs reached: equal fresh claims, the URL that sorts first wins.
	crawl(oldAt, newAt)
	if got := owner(); got != oldAt {
		t.Fatalf("both reached: held by %s, want %s", got, oldAt)
	}
	// A crawl that reads nothing (the seed down) unconfirms nothing: a
	// later fetch of the new URL alone does not take the record over.
	if err := e.ix.CrawlStarted(t.Context(), seed, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	down := failed(oldAt)
	down.Seed = seed
	e.sync(down)
	again := catalog(t, newAt, body)
	again.FetchedAt = e.clock.Now()
	e.sync(again)
	if got := owner(); got != oldAt {
		t.Fatalf("after a crawl that read nothing: held by %s, want %s", got, oldAt)
	}
	e.clock.Advance(time.Hour)
	// The move: the next crawl reaches only the new URL.
	crawl(newAt)
	if got := owner(); got != newAt {
		t.Fatalf("after the crawl that reached only %s: held by %s", newAt, got)
	}
	d := e.doc(id)
	if len(d.LostClaims) != 1 || d.LostClaims[0].Catalog != oldAt || d.LostClaims[0].Reason != reasonUnconfirmed {
		t.Fatalf("lostClaims = %+v, want the old URL's, reason %q", d.LostClaims, reasonUnconfirmed)
	}
	// The old claim expires StaleAfter after its last successful fetch.
	e.clock.Advance(72 * time.Hour)
	e.sync() // a flush runs the age check
	if d := e.doc(id); d == nil || d.SourceCatalog != newAt || len(d.LostClaims) != 0 {
		t.Fatalf("after the old claim's expiry: %+v, want held by %s without lost claims", d, newAt)
	}
	// Reached again, the old URL wins again: precedence stays a function
	// of the claims as the latest crawl saw them.
	crawl(oldAt, newAt)
	if got := owner(); got != oldAt {
		t.Fatalf("both reached again: held by %s, want %s", got, oldAt)
	}
}
