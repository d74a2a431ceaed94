package ingest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
)

// The tools index (normalize.ToolsIndex) holds one document per record
// with tools (normalize.ToolDocument): its tools' words, searchable there
// and nowhere else, its tool list, and the record's filterable fields, so
// that a search's filter applies to it as to the record. It is the one
// home of the tool lists: the records index stores its documents without
// them (normalize.RecordDocument). ingest keeps it in step with the
// records index in every commit: a record written is written there too
// (or its tool document deleted when it lists no tools any more), a record
// deleted is deleted there, and a patch of a record's fields (health,
// stale, lost claims) patches its tool document. A tool document whose
// write failed, or whose record's write failed, is repaired at the next
// commit (toolsPending): its fields from the stored record, its tools
// from the tool list the failed write held (toolsUnwritten), else from
// the tool document itself; and at start ingest brings the tools index in
// step with the records it holds (syncTools), so a failure or a crash
// between the two writes loses nothing. (A record whose own write failed
// keeps the tool list its commit wrote: the next write of the record
// writes both again.)

// toolRankingRules: what a search reads from the tools index is which
// servers' tools hold the most of a request's informative words (one
// query of all its words, searchapi/hybrid), not where the words
// sit or how close they are: the rules that read word positions
// (attribute, proximity, exactness) and typos are left out. With them the
// tools' text cost a search about as much as it did inside the records
// (docs/MEASUREMENTS.md); their words are stored once a server
// (normalize.ToolWords), so the positions would say little anyway.
var toolRankingRules = []string{"words"}

// ToolsIndexSettings are the tools index's settings: its own searchable
// attribute and ranking rules, no typo tolerance or prefix search, the
// records index's filterable attributes (a search's filter is the same for
// both), the members searches retrieve alone displayed
// (normalize.ToolDisplayedFields: the tool lists are read by the documents
// route), no embedder. Benchmarks that build a tools index by hand apply
// them.
func ToolsIndexSettings() *meilisearch.Settings {
	tt := typoTolerance
	tt.Enabled = false
	return &meilisearch.Settings{
		RankingRules:         slices.Clone(toolRankingRules),
		SearchableAttributes: normalize.ToolSearchableFields(),
		DisplayedAttributes:  normalize.ToolDisplayedFields(),
		FilterableAttributes: normalize.FilterableFields(),
		SortableAttributes:   []string{},
		TypoTolerance:        &tt,
		Pagination:           &meilisearch.Pagination{MaxTotalHits: normalize.MaxTotalHits},
		Faceting:             &meilisearch.Faceting{MaxValuesPerFacet: maxValuesPerFacet},
		ProximityPrecision:   proximityPrecision,
		FacetSearch:          false,
		PrefixSearch:         &noPrefixSearch,
	}
}

// noPrefixSearch turns prefix search off in the tools index: a request's
// last word read as a prefix ("look" of "lookup") would count as held by
// tools that do not hold it, and whole words are what a search matches a
// tool's words on anyway (searchapi/search's matchTools); it also spares
// the query the prefix's derivations.
var noPrefixSearch = "disabled"

// setupTools creates the tools index when missing, applies its settings,
// reads which records it holds, and brings it in step with the records
// index (toolsOutOfStep), writing again the tool documents an older
// ToolDocVersion wrote.
func (ix *Indexer) setupTools(ctx context.Context, toolful map[string]string, stamped []string) error {
	if err := ix.st.ensureIndex(ctx, ix.tools); err != nil {
		return err
	}
	if _, err := ix.st.applySettings(ctx, ix.tools, ToolsIndexSettings(), "", nil); err != nil {
		return err
	}
	keys, outdated, err := ix.loadToolDocs(ctx)
	if err != nil {
		return err
	}
	sync := ix.toolsOutOfStep(toolful, keys, slices.Concat(stamped, outdated))
	if len(sync) > 0 {
		ix.st.logger.Info("bringing the tools index in step", "index", ix.tools, "documents", len(sync))
	}
	return ix.syncTools(ctx, sync)
}

// legacyTools marks, in Indexer.toolful, a stored record that still holds
// its tools or its declared tools (written before the tools index was
// their one home): its tool document is written from them, and they are
// then taken off the record.
const legacyTools = "\x00legacy"

// loadToolDocs reads the ids of the tools index's documents into
// ix.toolDocs, and returns the ToolsKey each holds, by id, and those an
// older ToolDocVersion wrote.
func (ix *Indexer) loadToolDocs(ctx context.Context) (map[string]string, []string, error) {
	keys := map[string]string{}
	var outdated []string
	err := ix.st.scan(ctx, ix.tools, []string{normalize.FieldID, normalize.FieldToolsKey, normalize.FieldToolDocVersion}, nil, func(raw []byte) error {
		var d struct {
			ID       string `json:"id"`
			ToolsKey string `json:"toolsKey"`
			Version  int    `json:"toolDocVersion"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return fmt.Errorf("load %s: %w", ix.tools, err)
		}
		ix.toolDocs[d.ID] = true
		keys[d.ID] = d.ToolsKey
		if d.Version < normalize.ToolDocVersion {
			outdated = append(outdated, d.ID)
		}
		return nil
	})
	return keys, outdated, err
}

// toolsOutOfStep returns, sorted, the ids whose tool documents are not
// in step with the records index: records with tools (toolful: their
// ToolsKey, or legacyTools) whose tool document is missing or holds
// another ToolsKey (keys: a crash or a failed write between the two
// writes), tool documents of records gone or listing no tools, and those
// of records setup stamped (stamped: their health or alias keys changed,
// or their tool documents are of an older version).
func (ix *Indexer) toolsOutOfStep(toolful, keys map[string]string, stamped []string) []string {
	sync := map[string]bool{}
	for id, key := range toolful {
		if !ix.toolDocs[id] || key == legacyTools || keys[id] != key {
			sync[id] = true
		}
	}
	for id := range ix.toolDocs {
		if ix.docs[id] == nil || toolful[id] == "" {
			sync[id] = true
		}
	}
	for _, id := range stamped {
		if ix.toolDocs[id] {
			sync[id] = true
		}
	}
	return slices.Sorted(maps.Keys(sync))
}

// syncTools makes the tool documents of ids those of the records index's
// records, with each record's tools (toolDocOf): each record's tool
// document is written again, and those of records gone or without tools
// are deleted; records that still held their tools have them taken off
// (stripLegacy). A record whose tool document cannot be built
// (normalize.ToolDocument's error, or tools nowhere to be found) keeps the
// one the tools index has, and is logged.
func (ix *Indexer) syncTools(ctx context.Context, ids []string) error {
	for start := 0; start < len(ids); start += chunkDocs {
		part := ids[start:min(start+chunkDocs, len(ids))]
		stored, err := ix.storedTools(ctx, part)
		if err != nil {
			return err
		}
		r, err := ix.rebuildToolDocs(ctx, part, stored)
		if err != nil {
			return err
		}
		if err := ix.writeToolLines(ctx, r.lines); err != nil {
			return err
		}
		if err := ix.deleteToolDocs(ctx, part, r.keep); err != nil {
			return err
		}
		if err := ix.stripLegacy(ctx, r.legacy); err != nil {
			return err
		}
	}
	return nil
}

// rebuilt is what syncTools makes of a part of its records: the tool
// documents to write, the records that still hold their tools, and the ids
// whose tool documents stay (written again, or kept as they are).
type rebuilt struct {
	lines  []line
	legacy []*normalize.Document
	keep   map[string]bool
}

// rebuildToolDocs reads the stored records of ids and builds their tool
// documents (toolDocOf; stored is what the tools index holds of them).
func (ix *Indexer) rebuildToolDocs(ctx context.Context, ids []string, stored map[string]storedTool) (rebuilt, error) {
	r := rebuilt{keep: map[string]bool{}}
	err := ix.st.scan(ctx, ix.index, nil, ids, func(raw []byte) error {
		var d normalize.Document
		if err := json.Unmarshal(raw, &d); err != nil {
			return err
		}
		return r.add(ix, &d, stored[d.ID])
	})
	if err != nil {
		return rebuilt{}, fmt.Errorf("read records for %s: %w", ix.tools, err)
	}
	return r, nil
}

// add builds the tool document of the stored record d into r.
func (r *rebuilt) add(ix *Indexer, d *normalize.Document, stored storedTool) error {
	own := d.Tools != nil || d.DeclaredTools != nil
	td, err := ix.toolDocOf(d, stored)
	if err != nil {
		// Its siblings are repaired; its tool document stays as it is.
		ix.st.logger.Error("tool document not rebuilt; the tools index keeps it", "id", d.ID, "err", err)
		r.keep[d.ID] = true
		return nil
	}
	if own {
		r.legacy = append(r.legacy, d)
	}
	if td == nil {
		return nil
	}
	b, err := json.Marshal(td)
	if err != nil {
		return err
	}
	r.lines = append(r.lines, line{id: d.ID, raw: b})
	r.keep[d.ID] = true
	return nil
}

// storedTool is what a tool document holds of its record's tools.
type storedTool struct {
	Tools         json.RawMessage `json:"tools"`
	DeclaredTools json.RawMessage `json:"declaredTools"`
	ToolsKey      string          `json:"toolsKey"`
}

// lists decodes what the tool document keeps: its record's tools, and
// those the record declares (normalize.StoredDeclared). A list that
// cannot be read is nil.
func (s storedTool) lists() (tools, declared *normalize.ToolSet) {
	tools = decodeToolSet(s.Tools)
	return tools, normalize.StoredDeclared(tools, decodeToolSet(s.DeclaredTools))
}

// decodeToolSet decodes a stored tool list (nil when absent or unreadable).
func decodeToolSet(raw json.RawMessage) *normalize.ToolSet {
	var ts *normalize.ToolSet
	if len(raw) == 0 || json.Unmarshal(raw, &ts) != nil {
		return nil
	}
	return ts
}

// unwrittenTools are the tool lists of a record a failed tools index write
// did not store: those it shows and those it declares.
type unwrittenTools struct {
	tools, declared *normalize.ToolSet
}

// toolDocOf is the tool document of the stored record d (read without its
// tools, unless written before the tools index held them), whose tool
// document holds stored. Its tools are, in this order: those a failed
// write did not store (toolsUnwritten); the record's own; none when the
// record lists none (its ToolsKey empty); those of its tool document when
// it holds the record's ToolsKey; those the prober read, else those the
// record declares (recordTools), when they do. Its declared tools are
// those a failed write did not store, else the record's own (stored by an
// older ingest), else those its tool document keeps when it is in step
// (an older one may keep a list the card no longer declares: none is
// safer, rewriteAtNextFetch). The tool document's lists are decoded once,
// and only when d lacks one of them.
// Found nowhere (a tool document lost), they are an error, and the
// record's claim hash is forgotten so that its catalog's next fetch
// writes it, and its tools, again.
func (ix *Indexer) toolDocOf(d *normalize.Document, stored storedTool) (map[string]json.RawMessage, error) {
	if u, ok := ix.toolsUnwritten[d.ID]; ok {
		d.Tools, d.DeclaredTools = u.tools, u.declared
	}
	if stored.ToolsKey == d.ToolsKey && (d.Tools == nil || d.DeclaredTools == nil) {
		tools, declared := stored.lists()
		d.DeclaredTools = cmp.Or(d.DeclaredTools, declared)
		if d.ToolsKey != "" {
			d.Tools = cmp.Or(d.Tools, tools)
		}
	}
	if d.Tools != nil || d.ToolsKey == "" {
		return normalize.ToolDocument(d)
	}
	if ts := ix.toolsFor(d.Identifier, d.SourceCatalog, d.DeclaredTools); normalize.ToolsKey(ts) == d.ToolsKey {
		d.Tools = ts
		return normalize.ToolDocument(d)
	}
	ix.rewriteAtNextFetch(d.ID)
	return nil, fmt.Errorf("the tools of %s are lost: its record is written again at its catalog's next fetch", d.ID)
}

// storedTools reads what the tools index holds of the tools of ids.
func (ix *Indexer) storedTools(ctx context.Context, ids []string) (map[string]storedTool, error) {
	out := map[string]storedTool{}
	err := ix.st.scan(ctx, ix.tools, []string{normalize.FieldID, normalize.FieldTools, normalize.FieldDeclaredTools, normalize.FieldToolsKey}, ids, func(raw []byte) error {
		var d struct {
			ID string `json:"id"`
			storedTool
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return err
		}
		out[d.ID] = d.storedTool
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ix.tools, err)
	}
	return out, nil
}

// deleteToolDocs deletes the tool documents of ids not in keep.
func (ix *Indexer) deleteToolDocs(ctx context.Context, ids []string, keep map[string]bool) error {
	var gone []string
	for _, id := range ids {
		if !keep[id] {
			gone = append(gone, id)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	if err := ix.st.write(ctx, "delete documents from "+ix.tools, ix.st.deleteTask(ix.tools, gone).send); err != nil {
		return err
	}
	for _, id := range gone {
		delete(ix.toolDocs, id)
	}
	return nil
}

// stripLegacy takes the tool lists (shown or declared) off stored records
// that still held them, once their tool documents are written: they hold
// their ToolsKey instead (normalize.RecordDocument), as every record
// written since.
func (ix *Indexer) stripLegacy(ctx context.Context, docs []*normalize.Document) error {
	if len(docs) == 0 {
		return nil
	}
	patch := make([]map[string]any, len(docs))
	for i, d := range docs {
		patch[i] = map[string]any{normalize.FieldID: d.ID, normalize.FieldTools: nil, normalize.FieldDeclaredTools: nil,
			normalize.FieldToolsKey: normalize.ToolsKey(d.Tools)}
	}
	return ix.st.write(ctx, "take tool lists off "+ix.index, ix.st.patchTask(ix.index, patch).send)
}

// writeToolLines writes tool documents and waits for them.
func (ix *Indexer) writeToolLines(ctx context.Context, lines []line) error {
	for _, chunk := range chunks(lines, chunkDocs) {
		if err := ix.st.write(ctx, "add documents to "+ix.tools, ix.st.addTask(ix.tools, ndjson(chunk)).send); err != nil {
			return err
		}
		for _, l := range chunk {
			ix.toolDocs[l.id] = true
		}
	}
	return nil
}

// repairTools brings the tool documents a failed write left out of step
// (toolsPending) in step with the records index, before a commit. They stay
// pending, with their unwritten tool lists, when that fails too.
func (ix *Indexer) repairTools(ctx context.Context) {
	if len(ix.toolsPending) == 0 {
		return
	}
	ids := slices.Sorted(maps.Keys(ix.toolsPending))
	if err := ix.syncTools(ctx, ids); err != nil {
		ix.st.logger.Error("tools index not repaired; trying again at the next write", "documents", len(ids), "err", err)
		return
	}
	clear(ix.toolsPending)
	clear(ix.toolsUnwritten)
}

// planTools adds the tasks that keep the tools index in step with the
// batch: tool documents of the records written (deleted when a record
// lists no tools any more), deletes of the records deleted, and the
// batch's patches on the records that have tool documents.
func (c *commitRun) planTools() {
	ix := c.ix
	lines, gone := c.toolWrites()
	for _, id := range slices.Sorted(maps.Keys(c.b.deletes)) {
		if ix.toolDocs[id] {
			gone = append(gone, id)
		}
	}
	for _, chunk := range chunks(lines, chunkDocs) {
		ids := make([]string, len(chunk))
		for i, l := range chunk {
			ids[i] = l.id
		}
		c.ops = append(c.ops, &op{kind: opToolAdd, t: ix.st.addTask(ix.tools, ndjson(chunk)), ids: ids})
	}
	if len(gone) > 0 {
		c.ops = append(c.ops, &op{kind: opToolDelete, t: ix.st.deleteTask(ix.tools, gone), ids: gone})
	}
	c.planToolPatches()
}

// toolWrites returns the tool documents of the records the batch writes,
// and the ids of those that list no tools any more and have one. A
// record whose write already failed (reread) is left to the repair after
// the commit; one whose tool document cannot be built keeps the one it
// has, repaired after the commit (toolsPending).
func (c *commitRun) toolWrites() (lines []line, gone []string) {
	ix, b := c.ix, c.b
	failed := map[string]bool{}
	for _, id := range c.reread {
		failed[id] = true
	}
	for _, id := range slices.Sorted(maps.Keys(b.upserts)) {
		if failed[id] {
			continue
		}
		td, err := normalize.ToolDocument(b.upserts[id])
		if err != nil {
			ix.toolsPending[id] = true
			continue
		}
		if td == nil {
			if ix.toolDocs[id] {
				gone = append(gone, id)
			}
			continue
		}
		raw, err := json.Marshal(td)
		if err != nil {
			ix.toolsPending[id] = true
			continue
		}
		lines = append(lines, line{id: id, raw: raw})
	}
	return lines, gone
}

// planToolPatches adds one task patching the tool documents of the
// batch's patched records with the fields they carry.
func (c *commitRun) planToolPatches() {
	ix := c.ix
	var ids []string
	var patch []map[string]any
	for _, id := range slices.Sorted(maps.Keys(c.b.patches)) {
		if !ix.toolDocs[id] {
			continue
		}
		p := map[string]any{}
		for f, v := range c.b.patches[id] {
			if normalize.ToolDocField(f) {
				p[f] = v
			}
		}
		if len(p) == 0 {
			continue
		}
		p[normalize.FieldID] = id
		ids = append(ids, id)
		patch = append(patch, p)
	}
	if len(patch) > 0 {
		c.ops = append(c.ops, &op{kind: opToolPatch, t: ix.st.patchTask(ix.tools, patch), ids: ids})
	}
}

// settleTools takes a tools index task's outcome: the tool documents it
// wrote or deleted, or, when it failed, its documents left to repair.
func (c *commitRun) settleTools(o *op) {
	ix, ids := c.ix, o.ids
	if o.err != nil {
		c.lastErr = o.err
		c.fails++
		for _, id := range ids {
			ix.toolsPending[id] = true
			if d, ok := c.b.upserts[id]; ok && o.kind != opToolPatch {
				ix.toolsUnwritten[id] = unwrittenTools{d.Tools, d.DeclaredTools} // their one home did not get them
			}
		}
		ix.st.logger.Error("tools index write failed; repairing at the next write", "kind", o.kind, "documents", len(ids), "err", o.err)
		return
	}
	for _, id := range ids {
		switch o.kind {
		case opToolAdd:
			ix.toolDocs[id] = true
			delete(ix.toolsUnwritten, id) // a newer list is stored
		case opToolDelete:
			delete(ix.toolDocs, id)
			delete(ix.toolsUnwritten, id)
		}
	}
}
