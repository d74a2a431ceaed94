package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
)

// docMeta is what ingest remembers of each indexed document: who owns it
// and what precedence needs to compare.
type docMeta struct {
	catalog   string
	hash      string
	verified  bool
	updatedTs int64
	seq       int64
	stale     bool
}

// metaFields are the document fields load reads back into docMeta.
var metaFields = []string{normalize.FieldID, normalize.FieldSourceCatalog, normalize.FieldContentHash,
	normalize.FieldPublisherVerified, normalize.FieldUpdatedAtTs, "seq", normalize.FieldStale}

type metaDoc struct {
	ID                string `json:"id"`
	SourceCatalog     string `json:"sourceCatalog"`
	ContentHash       string `json:"contentHash"`
	PublisherVerified bool   `json:"publisherVerified"`
	UpdatedAtTs       int64  `json:"updatedAtTs"`
	Seq               int64  `json:"seq"`
	Stale             bool   `json:"stale"`
}

// sourceState is one catalog's fetch health, persisted in <index>_sources.
type sourceState struct {
	ID                  string                `json:"id"`
	Catalog             string                `json:"catalog"`
	LastStatus          normalize.FetchStatus `json:"lastStatus"`
	ConsecutiveFailures int                   `json:"consecutiveFailures"`
	LastOKAt            time.Time             `json:"lastOkAt"`
	LastFetchAt         time.Time             `json:"lastFetchAt"`
	LastError           string                `json:"lastError,omitempty"`
	Stale               bool                  `json:"stale"`
}

// source is a catalog's state plus the documents it owns (derived from the
// documents' sourceCatalog; never persisted separately).
type source struct {
	state sourceState
	saved sourceState
	owned map[string]struct{}
}

// timeSlack is how far fetch times may drift from their persisted values
// before the source state is written again. It keeps an unchanged re-sync
// free of writes while the age rule stays accurate to minutes.
const timeSlack = 10 * time.Minute

func (s *source) dirty() bool {
	a, b := s.state, s.saved
	if a.LastStatus != b.LastStatus || a.ConsecutiveFailures != b.ConsecutiveFailures ||
		a.LastError != b.LastError || a.Stale != b.Stale || a.Catalog != b.Catalog {
		return true
	}
	return a.LastOKAt.Sub(b.LastOKAt).Abs() > timeSlack || a.LastFetchAt.Sub(b.LastFetchAt).Abs() > timeSlack
}

// load reads ownership from the documents and catalog health from the
// sources index.
func (ix *Indexer) load(ctx context.Context) error {
	err := ix.st.scan(ctx, ix.index, metaFields, nil, func(raw []byte) error {
		var m metaDoc
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("load %s: %w", ix.index, err)
		}
		ix.setMeta(m)
		return nil
	})
	if err != nil {
		return err
	}
	return ix.st.scan(ctx, ix.sources, nil, nil, func(raw []byte) error {
		var s sourceState
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("load %s: %w", ix.sources, err)
		}
		src := ix.source(s.Catalog)
		src.state, src.saved = s, s
		return nil
	})
}

func (ix *Indexer) setMeta(m metaDoc) {
	if old, ok := ix.docs[m.ID]; ok {
		if src := ix.srcs[old.catalog]; src != nil {
			delete(src.owned, m.ID)
		}
	}
	ix.docs[m.ID] = &docMeta{catalog: m.SourceCatalog, hash: m.ContentHash, verified: m.PublisherVerified,
		updatedTs: m.UpdatedAtTs, seq: m.Seq, stale: m.Stale}
	ix.source(m.SourceCatalog).owned[m.ID] = struct{}{}
}

func (ix *Indexer) source(catalog string) *source {
	s := ix.srcs[catalog]
	if s == nil {
		s = &source{state: sourceState{ID: normalize.DocID(catalog), Catalog: catalog}, owned: map[string]struct{}{}}
		s.saved = s.state
		ix.srcs[catalog] = s
	}
	return s
}

// batch collects the writes of several results. Per document id exactly one
// of upserts, deletes or flags holds an operation, so the order in which the
// three kinds of task run cannot matter.
type batch struct {
	upserts map[string]*normalize.Document
	from    map[string]int // upsert id -> index in results
	deletes map[string]int // id -> index in results
	flags   map[string]bool
	dirty   map[string]*source
	results []ApplyResult
	flushes []chan error
	docs    int
	forced  bool
}

func (ix *Indexer) newBatch() *batch {
	return &batch{upserts: map[string]*normalize.Document{}, from: map[string]int{},
		deletes: map[string]int{}, flags: map[string]bool{}, dirty: map[string]*source{}}
}

func (b *batch) empty() bool {
	return len(b.results) == 0 && len(b.flushes) == 0 && len(b.flags) == 0 && len(b.dirty) == 0
}

func (b *batch) upsert(id string, d *normalize.Document, ri int) {
	b.upserts[id] = d
	b.from[id] = ri
	delete(b.deletes, id)
	delete(b.flags, id)
	b.docs++
}

func (b *batch) remove(id string, ri int) {
	delete(b.upserts, id)
	delete(b.from, id)
	delete(b.flags, id)
	b.deletes[id] = ri
	b.docs++
}

func (b *batch) flag(id string, stale bool) {
	if d, ok := b.upserts[id]; ok {
		d.Stale = stale
		return
	}
	if _, ok := b.deletes[id]; ok {
		return
	}
	b.flags[id] = stale
	b.docs++
}

// add applies one queued item to the in-memory state and records the
// writes it needs in b.
func (ix *Indexer) add(b *batch, it item) {
	if it.flush != nil {
		b.flushes = append(b.flushes, it.flush)
		b.forced = true
		return
	}
	b.results = append(b.results, ix.apply(b, len(b.results), it.res))
}

// apply is the sync rule set for one catalog result.
func (ix *Indexer) apply(b *batch, ri int, res *normalize.CatalogResult) ApplyResult {
	now := ix.cfg.Now()
	ar := ApplyResult{Catalog: res.Catalog, Status: res.Status}
	src := ix.source(res.Catalog)
	b.dirty[res.Catalog] = src
	fetched := res.FetchedAt
	if fetched.IsZero() {
		fetched = now
	}
	src.state.LastFetchAt = fetched
	status := res.Status
	if status == normalize.StatusOK && len(res.Records) == 0 && unreadable(res.Problems) {
		// An "ok" fetch of a document that is not a catalog at all (not
		// JSON, not an object) must not read as "the catalog is now empty".
		status = normalize.StatusFailed
		ar.Status = status
		if res.Error == "" && res.Reason == "" {
			res.Reason = "unreadable"
		}
	}
	src.state.LastStatus = status

	if status != normalize.StatusOK && status != normalize.StatusNotModified {
		// failed (or anything unknown): change nothing but the catalog's health.
		src.state.ConsecutiveFailures++
		src.state.LastError = res.Error
		if res.Error == "" {
			src.state.LastError = res.Reason
		}
		if !src.state.Stale && ix.cfg.StaleAfterFailures > 0 && src.state.ConsecutiveFailures >= ix.cfg.StaleAfterFailures {
			ar.MarkedStale = ix.markStale(b, src, "failures")
		}
		return ar
	}

	src.state.ConsecutiveFailures = 0
	src.state.LastError = ""
	src.state.LastOKAt = fetched
	wasStale := src.state.Stale
	src.state.Stale = false

	seen := make(map[string]struct{}, len(res.Records))
	for i := range res.Records {
		rec := res.Records[i]
		if rec.Identifier == "" {
			continue
		}
		id := normalize.DocID(rec.Identifier)
		if _, dup := seen[id]; dup {
			continue // normalize reports duplicate identifiers; the first stands
		}
		seen[id] = struct{}{}
		if rec.Source.Catalog == "" {
			rec.Source.Catalog = res.Catalog
		}
		if rec.Source.FetchedAt.IsZero() {
			rec.Source.FetchedAt = fetched
		}
		if rec.Source.Via == "" {
			rec.Source.Via = res.Via
		}
		if rec.ContentHash == "" {
			rec.ContentHash = recordHash(rec)
		}
		// Ownership is by the catalog the result came from, whatever the
		// record's own Source says.
		rec.Source.Catalog = res.Catalog
		doc := normalize.NewDocument(rec, now)
		in := docMeta{catalog: res.Catalog, hash: rec.ContentHash, verified: rec.PublisherVerified,
			updatedTs: doc.UpdatedAtTs, seq: rec.Seq}

		cur, exists := ix.docs[id]
		if exists {
			same := cur.catalog == res.Catalog
			if same && cur.hash == in.hash {
				ar.Unchanged++
				if cur.stale {
					cur.stale = false
					b.flag(id, false)
					ar.Recovered++
				}
				continue
			}
			if ok, reason := wins(in, *cur, same); !ok {
				c := Conflict{Identifier: rec.Identifier, Kept: cur.catalog, Lost: res.Catalog, Reason: reason}
				ar.Conflicts = append(ar.Conflicts, c)
				ar.Problems = append(ar.Problems, conflictProblem(c))
				continue
			}
			if !same {
				ix.st.logger.Debug("record taken over", "identifier", rec.Identifier, "from", cur.catalog, "to", res.Catalog)
			}
		}
		ix.setMeta(metaDoc{ID: id, SourceCatalog: res.Catalog, ContentHash: in.hash,
			PublisherVerified: in.verified, UpdatedAtTs: in.updatedTs, Seq: in.seq})
		b.upsert(id, &doc, ri)
		ar.Upserted++
	}

	if status == normalize.StatusOK {
		for id := range src.owned {
			if _, ok := seen[id]; ok {
				continue
			}
			delete(src.owned, id)
			delete(ix.docs, id)
			b.remove(id, ri)
			ar.Deleted++
		}
	}
	if wasStale {
		for id := range src.owned {
			if m := ix.docs[id]; m != nil && m.stale {
				m.stale = false
				b.flag(id, false)
				ar.Recovered++
			}
		}
	}
	return ar
}

// unreadable reports whether problems say the whole document could not be
// read as a catalog.
func unreadable(problems []normalize.Problem) bool {
	for _, p := range problems {
		if p.Severity == normalize.SeverityError && (p.Code == normalize.CodeInvalidJSON || p.Code == normalize.CodeNotAnObject) &&
			(p.Path == "" || p.Path == "$") {
			return true
		}
	}
	return false
}

// wins reports whether an incoming record may replace the current one, and
// the rule that decided. A verified publisher beats an unverified one
// (between different catalogs); between equals the higher ADP seq, then the
// newer updatedAt wins, and an older one is a stale update that never
// replaces a newer record, even from the same catalog. On a tie the current
// holder keeps the record unless the update comes from the same catalog
// (a content change) or the holder has gone stale.
func wins(in, cur docMeta, sameCatalog bool) (bool, string) {
	if !sameCatalog && in.verified != cur.verified {
		return in.verified, "verified publisher"
	}
	if in.seq > 0 && cur.seq > 0 && in.seq != cur.seq {
		return in.seq > cur.seq, "seq"
	}
	if in.updatedTs > 0 && cur.updatedTs > 0 && in.updatedTs != cur.updatedTs {
		return in.updatedTs > cur.updatedTs, "updatedAt"
	}
	return sameCatalog || cur.stale, "tie"
}

func conflictProblem(c Conflict) normalize.Problem {
	var why string
	switch c.Reason {
	case "verified publisher":
		why = "the record held is from a verified publisher and this one is not"
	case "seq":
		why = "this write has a lower seq than the record held"
	case "updatedAt":
		why = "this write has an older updatedAt than the record held (a stale update)"
	default:
		why = "the record held is equally recent and verified; the first holder keeps it"
	}
	return normalize.Problem{
		Path:     fmt.Sprintf("$.entries[?(@.identifier==%q)]", c.Identifier),
		Code:     normalize.CodeConflict,
		Severity: normalize.SeverityWarning,
		Message:  fmt.Sprintf("%s: kept the record from %s, not the one from %s: %s", c.Identifier, c.Kept, c.Lost, why),
	}
}

// markStale flags every record src owns as stale.
func (ix *Indexer) markStale(b *batch, src *source, why string) int {
	src.state.Stale = true
	n := 0
	for id := range src.owned {
		if m := ix.docs[id]; m != nil && !m.stale {
			m.stale = true
			b.flag(id, true)
			n++
		}
	}
	if n > 0 {
		ix.st.logger.Info("catalog records marked stale", "catalog", src.state.Catalog, "records", n, "why", why)
	}
	return n
}

// checkAge applies the age rule: catalogs without a successful fetch for
// StaleAfter get their records marked stale.
func (ix *Indexer) checkAge(b *batch) {
	if ix.cfg.StaleAfter <= 0 {
		return
	}
	now := ix.cfg.Now()
	for _, src := range ix.srcs {
		if src.state.Stale || len(src.owned) == 0 || src.state.LastOKAt.IsZero() {
			continue
		}
		if now.Sub(src.state.LastOKAt) > ix.cfg.StaleAfter {
			n := ix.markStale(b, src, "age")
			b.dirty[src.state.Catalog] = src
			ix.addStats(func(s *Stats) { s.MarkedStale += int64(n) })
		}
	}
}

// recordHash stands in for a missing ContentHash: a hash of the record
// without its fetch and index times.
func recordHash(rec normalize.Record) string {
	rec.Source.FetchedAt = time.Time{}
	rec.IndexedAt = time.Time{}
	raw, _ := json.Marshal(rec)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
