package ingest

import (
	"context"
	"maps"
	"slices"

	"github.com/agentfinder/agentfinder/normalize"
)

// HealthSource knows the last probed health of records (the endpoint
// prober's state). Health is called from the indexer's goroutine and must
// not block.
type HealthSource interface {
	// Health returns the health of the record with identifier as catalog
	// lists it (its endpoints are that catalog's), and false when it has
	// none (never probed, or nothing to probe).
	Health(identifier, catalog string) (normalize.Health, bool)
}

// claimKey names a record as one catalog lists it.
type claimKey struct{ identifier, catalog string }

// healthUpdate is one probe verdict on its way to the writer goroutine.
type healthUpdate struct {
	identifier string
	id         string // the document, once the writer resolved it (ownedKey)
	catalog    string
	health     normalize.Health
	held       chan bool // answered once applied: whether ingest holds the document
}

// healthFor returns the health document id (of identifier, from catalog)
// carries when written: the last one probed, else unknown, so that filters
// and facets see every record. Without a health source (a one-off crawl, serve with
// the prober off) it is the health the index already holds, so a rewrite
// never throws a known health away.
func (ix *Indexer) healthFor(id, identifier, catalog string) *normalize.Health {
	if ix.cfg.Health != nil {
		if h, ok := ix.cfg.Health.Health(identifier, catalog); ok && h.Status != "" {
			return &h
		}
	} else if h, ok := ix.healths[id]; ok {
		return &h
	}
	return &normalize.Health{Status: normalize.HealthUnknown}
}

// keepHealth remembers the stored health of document id when ingest has no
// health source (healthFor then falls back to it).
func (ix *Indexer) keepHealth(id string, h *normalize.Health) {
	switch {
	case ix.cfg.Health != nil:
	case h == nil || h.Status == "" || h.Status == normalize.HealthUnknown:
		delete(ix.healths, id)
	default:
		ix.healths[id] = *h
	}
}

// SetHealth writes a probe's verdict on the record with identifier, of the
// endpoints catalog lists for it, by updating its health field alone (the
// record is not rewritten, nor re-embedded). It returns once the indexer
// has taken the update into its next write, with held false when ingest
// holds no document for identifier from that catalog (none, or another
// catalog's claim won): nothing is written then, so a losing claim's
// endpoints never speak for the record. It blocks like Put while the queue
// is full.
func (ix *Indexer) SetHealth(ctx context.Context, identifier, catalog string, h normalize.Health) (bool, error) {
	u := &healthUpdate{identifier: identifier, catalog: catalog, health: h, held: make(chan bool, 1)}
	if err := ix.send(ctx, item{health: u}); err != nil {
		return false, err
	}
	select {
	case held := <-u.held:
		return held, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// setHealth puts a verdict into batch b: onto the document b writes anyway,
// else as a patch of the health field.
func (ix *Indexer) setHealth(b *batch, u *healthUpdate) bool {
	id, ok := ix.ownedKey(u.catalog, u.identifier)
	if !ok {
		return false
	}
	u.id = id
	h := u.health
	ix.keepHealth(u.id, &h)
	if d, ok := b.upserts[u.id]; ok {
		d.Health = &h
		return true
	}
	b.patch(u.id, normalize.FieldHealth, h)
	return true
}

// stampUnstamped gives documents indexed before records carried health
// theirs (or unknown), so that a health filter sees them without waiting
// for their catalogs to change.
func (ix *Indexer) stampUnstamped(ctx context.Context) error {
	ids := slices.Sorted(maps.Keys(ix.unstamped))
	for start := 0; start < len(ids); start += chunkDocs {
		part := ids[start:min(start+chunkDocs, len(ids))]
		patch := make([]map[string]any, len(part))
		for i, id := range part {
			patch[i] = map[string]any{normalize.FieldID: id, normalize.FieldHealth: ix.healthFor(id, ix.unstamped[id].identifier, ix.unstamped[id].catalog)}
		}
		if err := ix.st.write(ctx, "stamp health on documents", ix.st.patchTask(ix.index, patch).send); err != nil {
			return err
		}
	}
	if len(ids) > 0 {
		ix.st.logger.Info("health stamped on documents indexed without it", "documents", len(ids))
	}
	ix.unstamped = nil
	return nil
}
