package ingest

import (
	"context"
	"time"
)

// crawlStart is the start of one crawl of a seed (CrawlStarted).
type crawlStart struct {
	seed string
	at   time.Time
}

// CrawlStarted records that a crawl of seed starts at at (the crawler's
// clock, the one its results are stamped with); it satisfies
// crawler.Starter. It is queued with the results, so every result of that
// crawl is applied after it. Once the crawl has read a catalog
// successfully (a crawl that reaches nothing changes nothing), a catalog
// that seed's crawls fetched counts as confirmed only once this crawl
// fetches it again: a
// catalog the crawl no longer reaches (gone, moved, no longer linked)
// yields its identifiers to confirmed claims (outranks), and its lost
// claims are dropped once StaleAfter has passed since it was last fetched
// (checkAge).
func (ix *Indexer) CrawlStarted(ctx context.Context, seed string, at time.Time) error {
	if seed == "" {
		return nil
	}
	return ix.send(ctx, item{start: &crawlStart{seed: seed, at: at}})
}

// startCrawl applies a queued CrawlStarted: the start counts once the
// crawl fetches a catalog successfully (reached), so a crawl that fails
// as a whole (the seed unreachable) unconfirms nothing.
func (ix *Indexer) startCrawl(c crawlStart) {
	if c.at.After(ix.seeds[c.seed]) {
		ix.pending[c.seed] = c.at
	}
}

// reached counts the pending start of seed's crawl once a catalog it
// fetched at fetched was read successfully.
func (ix *Indexer) reached(seed string, fetched time.Time) {
	if at, ok := ix.pending[seed]; ok && !fetched.Before(at) {
		ix.seeds[seed] = at
		delete(ix.pending, seed)
	}
}

// confirmed reports whether the latest crawl of catalog's seed fetched it
// successfully: true when no crawl of its seed has started since this
// process began, or its seed is unknown (a result put without one), so
// claims count as they always did until a crawl says otherwise.
func (ix *Indexer) confirmed(catalog string) bool {
	src := ix.srcs[catalog]
	if src == nil || src.state.Seed == "" {
		return true
	}
	start, ok := ix.seeds[src.state.Seed]
	return !ok || !src.state.LastOKAt.Before(start)
}

// refreshConfirmed sets whether m's claim and its lost claims are
// confirmed now, before precedence compares them.
func (ix *Indexer) refreshConfirmed(m *docMeta) {
	m.claim.unconfirmed = !ix.confirmed(m.catalog)
	for i := range m.lost {
		m.lost[i].unconfirmed = !ix.confirmed(m.lost[i].catalog)
	}
}

// dropExpiredClaims withdraws the lost claims of catalogs that are not
// confirmed and were last fetched successfully more than StaleAfter before
// now: a claim nobody re-publishes expires instead of lingering on the
// record it lost to.
func (ix *Indexer) dropExpiredClaims(b *batch, now time.Time) {
	for catalog, src := range ix.srcs {
		if len(src.lost) == 0 || ix.confirmed(catalog) || now.Sub(src.state.LastOKAt) <= ix.cfg.StaleAfter {
			continue
		}
		for id := range src.lost {
			delete(src.lost, id)
			if m := ix.docs[id]; m != nil {
				m.lost = m.lost.without(catalog)
				b.showLost(id, m)
			}
		}
	}
}
