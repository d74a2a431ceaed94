package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
)

// docMeta is what ingest remembers of each indexed document: the claim that
// holds it (its catalog owns the document) and the claims that lost to it.
type docMeta struct {
	claim
	lost   lostClaims
	keyset []string // the keys indexKeys pointed at the document
}

// metaFields are the document fields load reads back into docMeta.
var metaFields = []string{normalize.FieldID, normalize.FieldIdentifier, normalize.FieldSourceCatalog, normalize.FieldContentHash,
	normalize.FieldPublisherVerified, normalize.FieldUpdatedAtTs, "seq", normalize.FieldStale, normalize.FieldLostClaims, normalize.FieldVisibility, "trust",
	normalize.FieldHealth, normalize.FieldSourceKind, normalize.FieldMatchKeys, normalize.FieldAliasKeys, normalize.FieldUnembedded,
	normalize.FieldToolNames, normalize.FieldToolsKey, normalize.FieldDeclaredTools + ".source"}

type metaDoc struct {
	ID                string            `json:"id"`
	Identifier        string            `json:"identifier"`
	SourceCatalog     string            `json:"sourceCatalog"`
	ContentHash       string            `json:"contentHash"`
	PublisherVerified bool              `json:"publisherVerified"`
	UpdatedAtTs       int64             `json:"updatedAtTs"`
	Seq               int64             `json:"seq"`
	Stale             bool              `json:"stale"`
	LostClaims        []normalize.Claim `json:"lostClaims"`
	Visibility        []string          `json:"visibility"`
	Trust             *normalize.Trust  `json:"trust"`
	Health            *normalize.Health `json:"health"`
	SourceKind        string            `json:"sourceKind"`
	MatchKeys         []string          `json:"matchKeys"`
	AliasKeys         []string          `json:"aliasKeys"`
	Unembedded        bool              `json:"unembedded"`
	// Tools holds the tools' names alone: whether the record still holds
	// its tools, as records written before the tools index became their
	// lists' one home do (normalize.RecordDocument).
	Tools *struct {
		Items []struct{} `json:"items"`
	} `json:"tools"`
	ToolsKey string `json:"toolsKey"`
	// DeclaredTools holds the declared tools' source alone: whether the
	// record still holds them, as records an older ingest wrote do (the
	// tools index keeps them now, normalize.ToolDocument).
	DeclaredTools *struct {
		Source string `json:"source"`
	} `json:"declaredTools"`
}

// claimHash is what decides whether a catalog's record changed: its content
// hash; for a record not public, its visibility, so that marking a seed
// with groups (or unmarking it) rewrites records whose content is the same;
// and its trust verdict (level, signer, problem codes; not when it was
// checked), so that a signature that expires or a key that goes away
// rewrites a record whose catalog did not change.
func claimHash(contentHash string, visibility []string, trust *normalize.Trust) string {
	h := contentHash
	if len(visibility) > 0 {
		h += " visibility=" + strings.Join(visibility, ",")
	}
	if trust != nil {
		h += " trust=" + trust.Level + " " + trust.Signer
		for _, p := range trust.Problems {
			h += " " + p.Code
		}
	}
	return h
}

// signed reports whether a trust verdict is a valid signature by the
// publisher: what precedence ranks first after staleness.
func signed(trust *normalize.Trust) bool {
	return trust != nil && trust.Level == normalize.TrustSigned
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
	// Seed is the seed whose crawl last fetched the catalog successfully
	// ("" when unknown): see confirmed.
	Seed string `json:"seed,omitempty"`
}

// source is a catalog's state plus the documents it owns and those it has
// a losing claim on (derived from the documents' sourceCatalog and
// lostClaims; never persisted separately).
type source struct {
	state sourceState
	saved sourceState
	owned map[string]struct{}
	lost  map[string]struct{}
}

// timeSlack is how far fetch times may drift from their persisted values
// before the source state is written again. It keeps an unchanged re-sync
// free of writes while the age rule stays accurate to minutes.
const timeSlack = 10 * time.Minute

func (s *source) dirty() bool {
	a, b := s.state, s.saved
	if a.LastStatus != b.LastStatus || a.ConsecutiveFailures != b.ConsecutiveFailures ||
		a.LastError != b.LastError || a.Stale != b.Stale || a.Catalog != b.Catalog || a.Seed != b.Seed {
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
		if m.Tools != nil && len(m.Tools.Items) > 0 || m.DeclaredTools != nil {
			ix.toolful[m.ID] = legacyTools
		} else if m.ToolsKey != "" {
			ix.toolful[m.ID] = m.ToolsKey
		}
		if m.Health == nil {
			ix.unstamped[m.ID] = claimKey{identifier: m.Identifier, catalog: m.SourceCatalog}
		}
		if want := normalize.AliasKeys(m.Identifier, m.LostClaims); !slices.Equal(want, m.AliasKeys) {
			ix.unaliased[m.ID] = want
		}
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

// setMeta takes a document's state as read from the index.
// A document a writer without the model wrote has no vectors: a writer
// with an Embedder forgets its hash, so the next fetch of its catalog
// rewrites it with vectors.
func (ix *Indexer) setMeta(m metaDoc) {
	hash := claimHash(m.ContentHash, m.Visibility, m.Trust)
	if m.Unembedded && ix.cfg.Embedder != nil {
		hash = ""
	}
	ix.forget(m.ID)
	ix.own(m.ID, &docMeta{
		claim: claim{catalog: m.SourceCatalog, identifier: m.Identifier, hash: hash, signed: signed(m.Trust), verified: m.PublisherVerified,
			updatedTs: m.UpdatedAtTs, seq: m.Seq, stale: m.Stale, kind: kindOf(m.SourceKind), keys: joinKeys(m.MatchKeys), vis: visKey(m.Visibility)},
		lost: loadLostClaims(m.LostClaims),
	})
	ix.keepHealth(m.ID, m.Health)
}

// own makes m the state of document id: its catalog owns it and the
// catalogs of its lost claims hold a claim on it.
func (ix *Indexer) own(id string, m *docMeta) {
	if old, ok := ix.docs[id]; ok {
		if src := ix.srcs[old.catalog]; src != nil {
			delete(src.owned, id)
		}
	}
	ix.docs[id] = m
	ix.indexKeys(id, m)
	ix.source(m.catalog).owned[id] = struct{}{}
	delete(ix.source(m.catalog).lost, id)
	for _, c := range m.lost {
		ix.source(c.catalog).lost[id] = struct{}{}
	}
}

// forget drops document id and every claim on it from memory.
func (ix *Indexer) forget(id string) {
	m := ix.docs[id]
	if m == nil {
		return
	}
	delete(ix.healths, id)
	ix.unindexKeys(id, m)
	if src := ix.srcs[m.catalog]; src != nil {
		delete(src.owned, id)
	}
	for _, c := range m.lost {
		if src := ix.srcs[c.catalog]; src != nil {
			delete(src.lost, id)
		}
	}
	delete(ix.docs, id)
}

func (ix *Indexer) source(catalog string) *source {
	s := ix.srcs[catalog]
	if s == nil {
		s = &source{state: sourceState{ID: normalize.DocID(catalog), Catalog: catalog}, owned: map[string]struct{}{},
			lost: map[string]struct{}{}}
		s.saved = s.state
		ix.srcs[catalog] = s
	}
	return s
}

// batch collects the writes of several results. Per document id exactly one
// of upserts, deletes or patches holds an operation, so the order in which
// the three kinds of task run cannot matter.
type batch struct {
	upserts map[string]*normalize.Document
	from    map[string]int            // upsert id -> index in results
	deletes map[string]int            // id -> index in results
	patches map[string]map[string]any // id -> fields to set (stale, lostClaims) on an indexed document
	dirty   map[string]*source
	results []ApplyResult
	flushes []chan error
	docs    int
	forced  bool
}

func (ix *Indexer) newBatch() *batch {
	return &batch{upserts: map[string]*normalize.Document{}, from: map[string]int{},
		deletes: map[string]int{}, patches: map[string]map[string]any{}, dirty: map[string]*source{}}
}

func (b *batch) empty() bool {
	return len(b.results) == 0 && len(b.flushes) == 0 && len(b.patches) == 0 && len(b.dirty) == 0
}

func (b *batch) upsert(id string, d *normalize.Document, ri int) {
	b.upserts[id] = d
	b.from[id] = ri
	delete(b.deletes, id)
	delete(b.patches, id)
	b.docs++
}

func (b *batch) remove(id string, ri int) {
	delete(b.upserts, id)
	delete(b.from, id)
	delete(b.patches, id)
	b.deletes[id] = ri
	b.docs++
}

// flag sets the stale flag of document id.
func (b *batch) flag(id string, stale bool) {
	if d, ok := b.upserts[id]; ok {
		d.Stale = stale
		return
	}
	b.patch(id, normalize.FieldStale, stale)
}

// showLost brings the stored lostClaims of document id, and the alias
// keys they give it, up to date with m.
func (b *batch) showLost(id string, m *docMeta) {
	v := m.lost.stored(m.claim)
	if d, ok := b.upserts[id]; ok {
		setLost(d, v)
		return
	}
	aliases := normalize.AliasKeys(m.identifier, v)
	if v == nil {
		v = []normalize.Claim{} // a patch with null would store null
	}
	if aliases == nil {
		aliases = []string{}
	}
	b.patch(id, normalize.FieldLostClaims, v)
	b.patch(id, normalize.FieldAliasKeys, aliases)
}

// setLost sets a whole document's lost claims and the alias keys they give
// it: a lookup by a merged-away identifier finds the document through them.
func setLost(d *normalize.Document, lost []normalize.Claim) {
	d.LostClaims = lost
	d.AliasKeys = normalize.AliasKeys(d.Identifier, lost)
}

// patch sets one field of an indexed document that this batch neither
// rewrites nor deletes.
func (b *batch) patch(id, field string, v any) {
	if _, ok := b.deletes[id]; ok {
		return
	}
	p := b.patches[id]
	if p == nil {
		p = map[string]any{}
		b.patches[id] = p
		b.docs++
	}
	p[field] = v
}

// add applies one queued item to the in-memory state and records the
// writes it needs in b.
func (ix *Indexer) add(ctx context.Context, b *batch, it item) {
	if it.weight > 0 {
		ix.grouped.Release(it.weight)
	}
	if it.flush != nil {
		b.flushes = append(b.flushes, it.flush)
		b.forced = true
		return
	}
	if it.health != nil {
		it.health.held <- ix.setHealth(b, it.health)
		return
	}
	if it.start != nil {
		ix.startCrawl(*it.start)
		return
	}
	if it.tools != nil {
		it.tools.held <- ix.setTools(ctx, b, it.tools)
		return
	}
	for _, res := range it.res {
		b.results = append(b.results, ix.apply(b, len(b.results), res))
	}
	if it.urgent {
		b.forced = true
	}
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
	if res.Seed != "" {
		src.state.Seed = res.Seed
		ix.reached(res.Seed, fetched)
	}
	wasStale := src.state.Stale
	src.state.Stale = false

	seen := ix.applyRecords(b, ri, &ar, res, fetched, now)
	if status == normalize.StatusOK {
		ix.keepRejected(src, res, seen, &ar)
		ix.dropUnlisted(b, ri, &ar, src, res.Catalog, seen)
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

// applyRecords settles each record of a readable result against what the
// index holds and returns the document ids the result lists.
func (ix *Indexer) applyRecords(b *batch, ri int, ar *ApplyResult, res *normalize.CatalogResult, fetched, now time.Time) map[string]struct{} {
	seen := make(map[string]struct{}, len(res.Records))
	for i := range res.Records {
		rec := res.Records[i]
		if rec.Identifier == "" {
			continue
		}
		own := normalize.RecordKey(rec.Identifier, rec.Visibility)
		if _, dup := seen[own]; dup {
			continue // normalize reports duplicate identifiers; the first stands
		}
		seen[own] = struct{}{}
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
		in := claim{catalog: res.Catalog, identifier: rec.Identifier, hash: claimHash(rec.ContentHash, rec.Visibility, rec.Trust),
			signed: signed(rec.Trust), verified: rec.PublisherVerified, updatedTs: doc.UpdatedAtTs, seq: rec.Seq,
			kind: doc.SourceKind, keys: joinKeys(doc.MatchKeys), vis: visKey(rec.Visibility)}
		id := ix.resolve(own, in)
		if id == own {
			ix.rebridge(b, own, in) // in stays its own agent: it may take a claim it matches best
		}
		doc.Health = ix.healthFor(id, rec.Identifier, res.Catalog)
		ix.putTools(&doc, rec.Identifier, res.Catalog)
		seen[ix.settle(b, ri, ar, id, in, &doc)] = struct{}{}
	}
	return seen
}

// dropUnlisted deletes the documents src owns that an OK result of its
// catalog no longer lists, and withdraws the catalog's losing claims on
// identifiers it no longer lists.
func (ix *Indexer) dropUnlisted(b *batch, ri int, ar *ApplyResult, src *source, catalog string, seen map[string]struct{}) {
	for id := range src.owned {
		if _, ok := seen[id]; ok {
			continue
		}
		if m := ix.docs[id]; m != nil {
			for _, c := range m.lost {
				ar.Refetch = append(ar.Refetch, c.catalog)
			}
		}
		ix.forget(id)
		b.remove(id, ri)
		ar.Deleted++
	}
	slices.Sort(ar.Refetch)
	ar.Refetch = slices.Compact(ar.Refetch)
	for id := range src.lost {
		if _, ok := seen[id]; ok {
			continue
		}
		delete(src.lost, id)
		if m := ix.docs[id]; m != nil {
			m.lost = m.lost.without(catalog)
			ix.indexKeys(id, m)
			b.showLost(id, m)
		}
	}
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
	ix.dropExpiredClaims(b, now)
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

// ownedKey returns the key of the document that catalog's claim on
// identifier holds (in whatever visibility its records have), false when
// that catalog holds none for it (no claim, or another catalog's won).
func (ix *Indexer) ownedKey(catalog, identifier string) (string, bool) {
	if id := normalize.DocID(identifier); ix.docs[id] != nil && ix.docs[id].catalog == catalog {
		return id, true // the public record: the usual case, one lookup
	}
	src := ix.srcs[catalog]
	if src == nil {
		return "", false
	}
	for id := range src.owned {
		if m := ix.docs[id]; m != nil && m.catalog == catalog && normalize.SameIdentifier(m.identifier, identifier) {
			return id, true
		}
	}
	return "", false
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

// keepRejected marks the entries res still lists but that are invalid now
// as seen, so their last good records (or losing claims) are not deleted as
// vanished, and reports each record kept.
func (ix *Indexer) keepRejected(src *source, res *normalize.CatalogResult, seen map[string]struct{}, ar *ApplyResult) {
	for _, ident := range res.Rejected {
		id, owned := ix.ownedKey(res.Catalog, ident)
		if !owned {
			continue
		}
		if _, listed := seen[id]; listed {
			continue
		}
		seen[id] = struct{}{}
		ar.Kept = append(ar.Kept, ident)
		ix.st.logger.Warn("entry invalid now: last good record kept", "catalog", res.Catalog, "identifier", ident)
		ar.Problems = append(ar.Problems, normalize.Problem{
			Path: fmt.Sprintf("$.entries[?(@.identifier==%q)]", ident), Code: normalize.CodeKeptLastGood,
			Severity: normalize.SeverityWarning,
			Message:  fmt.Sprintf("%s: the entry is invalid now; the last good record is kept", ident),
		})
	}
}
