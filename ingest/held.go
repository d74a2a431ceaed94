package ingest

import (
	"sync"

	"github.com/agentfinder/agentfinder/normalize"
)

// heldSet is the catalogs whose last successful fetch is durably in the
// index: a write of their records that Meilisearch finished, or a source
// state loaded from the index at start. The crawler asks it (through Holds)
// before it sends a conditional GET, so a 304 never stands in for records
// that were queued but lost (Meilisearch down, then a restart), or wiped.
type heldSet struct {
	mu sync.RWMutex
	m  map[string]bool
}

func (h *heldSet) has(catalog string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.m[catalog]
}

func (h *heldSet) set(catalog string, held bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]bool{}
	}
	if held {
		h.m[catalog] = true
	} else {
		delete(h.m, catalog)
	}
}

// Holds reports whether the index durably holds the result of a successful
// fetch of catalog (a CatalogResult.Catalog URL): its records were written
// and Meilisearch finished the write, in this process or before it started.
// A result still queued, or whose write failed, is not held. Safe for
// concurrent use; it satisfies the crawler's optional Holder interface.
func (ix *Indexer) Holds(catalog string) bool { return ix.held.has(catalog) }

// markHeld updates what is held once a batch was written: an ok result whose
// writes all finished is held; one whose write failed is not (the index may
// lack some of its records), so the next fetch of that catalog is a full one.
// Not-modified and failed fetches change nothing. The catalogs a result asks
// to refetch (their claims on a record it deleted are gone) are not held
// either. Results are taken in the order they were applied, so a later
// result of such a catalog, which claimed the record anew, holds it again.
func (ix *Indexer) markHeld(results []ApplyResult) {
	for _, ar := range results {
		switch {
		case ar.Err != nil:
			ix.held.set(ar.Catalog, false)
		case ar.Status == normalize.StatusOK:
			ix.held.set(ar.Catalog, true)
		}
		for _, c := range ar.Refetch {
			ix.held.set(c, false)
		}
	}
}

// loadHeld marks every catalog with a successful fetch in its persisted
// source state as held.
func (ix *Indexer) loadHeld() {
	for c, src := range ix.srcs {
		if !src.saved.LastOKAt.IsZero() {
			ix.held.set(c, true)
		}
	}
}
