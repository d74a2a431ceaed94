package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
)

// maxPayload keeps one documents request well under Meilisearch's default
// 100 MB payload limit.
const maxPayload = 32 << 20

type line struct {
	id  string
	raw []byte
}

// chunkDocs is how many documents one add task carries at most; a batch
// of BatchSize documents goes out as several such tasks, all enqueued before
// the first is awaited so Meilisearch can index them as one batch of its own.
const chunkDocs = 5000

// embeddedBatchDocs is the default BatchSize with an Embedder (see Config).
const embeddedBatchDocs = 2500

// opKind says what one task of a commit writes.
type opKind string

// Operation kinds.
const (
	opAdd     opKind = "add"     // whole documents
	opDelete  opKind = "delete"  // documents removed
	opPatch   opKind = "flags"   // partial documents: stale flags, lost claims
	opSources opKind = "sources" // catalog health states
	// Tasks of the tools index (toolsindex.go).
	opToolAdd    opKind = "tool add"    // whole tool documents
	opToolDelete opKind = "tool delete" // tool documents removed
	opToolPatch  opKind = "tool flags"  // partial tool documents
)

// op is one task of a commit and what to do when it fails.
type op struct {
	kind  opKind
	t     *task
	lines []line   // add
	ids   []string // delete, flags (patches of stale and lostClaims), tools index tasks
	srcs  []*source
	err   error
}

// commit writes a batch: whole documents, deletes, stale flags and catalog
// health. Every task is enqueued first and then each is awaited, in order.
// This is safe because a batch holds at most one operation per document id
// (see batch), so the tasks of one commit never touch the same document. A
// task that fails for good is reported on the results whose documents it
// carried (Meilisearch's error included): a failed add is split in halves
// and retried so only the rejected documents fail, and ingest re-reads the
// documents of any failed write so its ownership table matches the index
// again. Only the end of ctx (Close gave up) stops a commit early.
func (ix *Indexer) commit(ctx context.Context, b *batch) {
	start := time.Now()
	c := &commitRun{ix: ix, b: b, failed: map[int]error{}}
	ix.repairTools(ctx)
	c.planUpserts(ctx)
	c.planDeletes()
	c.planPatches()
	c.planTools()
	c.planSources()
	c.each(ctx, func(o *op) error { c.tasks++; return ix.st.enqueue(ctx, o.t) })
	c.each(ctx, func(o *op) error { return ix.st.finish(ctx, o.t) })
	c.settle(ctx)
	if c.fatal != nil {
		c.lastErr = c.fatal
		ix.st.logger.Error("batch abandoned", "results", len(b.results), "err", c.fatal)
	} else if len(c.reread) > 0 {
		ix.reread(ctx, c.reread)
		for _, id := range c.reread {
			ix.toolsPending[id] = true // its tool document may not match it
		}
		ix.repairTools(ctx)
	}
	ix.st.logger.Debug("batch written", "results", len(b.results), "upserts", len(b.upserts), "deletes", len(b.deletes),
		"patches", len(b.patches), "tasks", c.tasks, "took", time.Since(start))
	c.report()
}

// commitRun is one commit of a batch: its tasks and what went wrong.
type commitRun struct {
	ix      *Indexer
	b       *batch
	ops     []*op
	failed  map[int]error // result index -> first error
	reread  []string      // ids whose state must be read back
	tasks   int64
	fails   int64
	lastErr error
	fatal   error // ctx ended: the rest of the commit is abandoned
}

// fail records err as the first error of result ri (-1: none).
func (c *commitRun) fail(ri int, err error) {
	if ri >= 0 && c.failed[ri] == nil {
		c.failed[ri] = err
	}
}

// planUpserts embeds and encodes the batch's whole documents into add
// tasks of at most chunkDocs documents. Documents that cannot be embedded
// or encoded fail their results and are read back.
func (c *commitRun) planUpserts(ctx context.Context) {
	b, ix := c.b, c.ix
	if len(b.upserts) == 0 {
		return
	}
	ids := slices.Sorted(maps.Keys(b.upserts))
	docs := make([]*normalize.Document, len(ids))
	for i, id := range ids {
		docs[i] = b.upserts[id]
	}
	if ix.cfg.Embedder != nil {
		if err := embedDocs(ctx, ix.cfg.Embedder, ix.vcache, docs); err != nil {
			err = fmt.Errorf("ingest: %w", err)
			c.lastErr = err
			c.fails++
			for _, id := range ids {
				c.fail(b.from[id], err)
			}
			c.reread = append(c.reread, ids...)
			return
		}
	}
	ix.optOutDocs(docs)
	lines := make([]line, 0, len(docs))
	for i, d := range docs {
		raw, err := json.Marshal(normalize.RecordDocument(d)) // its tools go to the tools index (planTools)
		if err != nil {
			err = fmt.Errorf("ingest: encode %s: %w", d.Identifier, err)
			c.fail(b.from[ids[i]], err)
			c.reread = append(c.reread, ids[i])
			continue
		}
		lines = append(lines, line{id: ids[i], raw: raw})
	}
	for _, chunk := range chunks(lines, chunkDocs) {
		c.ops = append(c.ops, &op{kind: opAdd, t: ix.st.addTask(ix.index, ndjson(chunk)), lines: chunk})
	}
}

// planDeletes adds one task deleting the batch's deleted documents.
func (c *commitRun) planDeletes() {
	if len(c.b.deletes) == 0 {
		return
	}
	ids := slices.Sorted(maps.Keys(c.b.deletes))
	c.ops = append(c.ops, &op{kind: opDelete, t: c.ix.st.deleteTask(c.ix.index, ids), ids: ids})
}

// planPatches adds one task writing the batch's partial documents.
func (c *commitRun) planPatches() {
	if len(c.b.patches) == 0 {
		return
	}
	ids := slices.Sorted(maps.Keys(c.b.patches))
	patch := make([]map[string]any, len(ids))
	for i, id := range ids {
		patch[i] = maps.Clone(c.b.patches[id])
		patch[i][normalize.FieldID] = id
	}
	c.ops = append(c.ops, &op{kind: opPatch, t: c.ix.st.patchTask(c.ix.index, patch), ids: ids})
}

// planSources adds one task saving the catalog states that changed.
func (c *commitRun) planSources() {
	var states []sourceState
	var srcs []*source
	for _, cat := range slices.Sorted(maps.Keys(c.b.dirty)) {
		if s := c.b.dirty[cat]; s.dirty() {
			states = append(states, s.state)
			srcs = append(srcs, s)
		}
	}
	if len(states) > 0 {
		c.ops = append(c.ops, &op{kind: opSources, t: c.ix.st.upsertTask(c.ix.sources, states), srcs: srcs})
	}
}

// each runs step on every op that has not failed yet, in order; an error
// once ctx ended makes the commit fatal and stops it.
func (c *commitRun) each(ctx context.Context, step func(o *op) error) {
	for _, o := range c.ops {
		if c.fatal != nil {
			return
		}
		if o.err != nil {
			continue
		}
		if err := step(o); err != nil {
			if ctx.Err() != nil {
				c.fatal = err
				return
			}
			o.err = err
		}
	}
}

// settle deals with each awaited op: a saved catalog state is remembered,
// a failed add is retried in halves to find the rejected documents, and
// any other failure fails its results and has its documents read back.
func (c *commitRun) settle(ctx context.Context) {
	b, ix := c.b, c.ix
	for _, o := range c.ops {
		if c.fatal != nil {
			return
		}
		switch o.kind {
		case opToolAdd, opToolDelete, opToolPatch:
			c.settleTools(o)
			continue
		}
		if o.err == nil {
			if o.kind == opSources {
				for _, s := range o.srcs {
					s.saved = s.state
				}
			}
			continue
		}
		if o.kind == opAdd {
			c.settleAdd(ctx, o)
			continue
		}
		c.lastErr = o.err
		c.fails++
		switch o.kind {
		case opDelete:
			for _, id := range o.ids {
				c.fail(b.deletes[id], o.err)
			}
			c.reread = append(c.reread, o.ids...)
			ix.st.logger.Error("delete failed", "documents", len(o.ids), "err", o.err)
		case opPatch:
			c.reread = append(c.reread, o.ids...)
			ix.st.logger.Error("document patch failed", "documents", len(o.ids), "err", o.err)
		case opSources:
			ix.st.logger.Error("catalog state update failed", "err", o.err)
		}
	}
}

// settleAdd finds the documents a failed add task failed for.
func (c *commitRun) settleAdd(ctx context.Context, o *op) {
	n, bad, err := c.ix.addLines(ctx, o.lines, o.err)
	c.tasks += n
	if err != nil {
		c.fatal = err
		return
	}
	for id, err := range bad {
		c.lastErr = err
		c.fails++
		c.fail(c.b.from[id], err)
		c.reread = append(c.reread, id)
		c.ix.st.logger.Error("document rejected by meilisearch", "id", id, "err", err)
	}
}

// report sets each result's error, adds the commit to the Indexer's Stats,
// hands the results to Config.OnResult and answers the waiting flushes.
func (c *commitRun) report() {
	b, ix := c.b, c.ix
	var sum Stats
	for i := range b.results {
		ar := &b.results[i]
		if c.fatal != nil {
			ar.Err = c.fatal
		} else if err := c.failed[i]; err != nil {
			ar.Err = err
		}
		sum.Results++
		sum.Upserted += int64(ar.Upserted)
		sum.Unchanged += int64(ar.Unchanged)
		sum.Deleted += int64(ar.Deleted)
		sum.Conflicts += int64(len(ar.Conflicts))
		sum.MarkedStale += int64(ar.MarkedStale)
		sum.Recovered += int64(ar.Recovered)
	}
	ix.addStats(func(s *Stats) {
		s.Results += sum.Results
		s.Upserted += sum.Upserted
		s.Unchanged += sum.Unchanged
		s.Deleted += sum.Deleted
		s.Conflicts += sum.Conflicts
		s.MarkedStale += sum.MarkedStale
		s.Recovered += sum.Recovered
		s.Batches++
		s.Tasks += c.tasks
		s.TaskFailures += c.fails
		if c.fatal != nil {
			s.TaskFailures++
		}
		if c.lastErr != nil {
			s.LastError = c.lastErr.Error()
		}
	})
	ix.markHeld(b.results)
	if ix.cfg.OnResult != nil {
		for _, ar := range b.results {
			ix.cfg.OnResult(ar.Catalog, ar)
		}
	}
	var flushErr error
	if c.fatal != nil {
		flushErr = c.fatal
	} else if len(c.failed) > 0 || c.lastErr != nil {
		flushErr = c.lastErr
	}
	for _, ch := range b.flushes {
		ch <- flushErr
	}
}

// chunks splits lines into requests of at most n documents and maxPayload
// bytes.
func chunks(lines []line, n int) [][]line {
	var out [][]line
	start, size := 0, 0
	for i, l := range lines {
		if i > start && (i-start >= n || size+len(l.raw)+1 > maxPayload) {
			out = append(out, lines[start:i])
			start, size = i, 0
		}
		size += len(l.raw) + 1
	}
	if start < len(lines) {
		out = append(out, lines[start:])
	}
	return out
}

func ndjson(lines []line) []byte {
	n := 0
	for _, l := range lines {
		n += len(l.raw) + 1
	}
	buf := bytes.NewBuffer(make([]byte, 0, n))
	for _, l := range lines {
		buf.Write(l.raw)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// addLines finds which of lines Meilisearch rejects, given that adding them
// all as one task failed with werr: it splits them in halves and writes each
// half again, so one bad document costs only itself. bad maps each rejected
// id to Meilisearch's error (a failed task, or a request it refused). err
// is set only when ctx ended.
func (ix *Indexer) addLines(ctx context.Context, lines []line, werr error) (tasks int64, bad map[string]error, err error) {
	if len(lines) == 1 {
		return 0, map[string]error{lines[0].id: werr}, nil
	}
	half := len(lines) / 2
	bad = map[string]error{}
	for _, part := range [][]line{lines[:half], lines[half:]} {
		tasks++
		werr := ix.st.write(ctx, "add documents to "+ix.index, ix.st.addTask(ix.index, ndjson(part)).send)
		if werr == nil {
			continue
		}
		if ctx.Err() != nil {
			return tasks, nil, werr
		}
		n, b, err := ix.addLines(ctx, part, werr)
		tasks += n
		if err != nil {
			return tasks, nil, err
		}
		maps.Copy(bad, b)
	}
	return tasks, bad, nil
}

// reread refreshes the ownership table for ids from the index after a
// write that did not happen as planned.
func (ix *Indexer) reread(ctx context.Context, ids []string) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	found := map[string]bool{}
	err := ix.st.scan(ctx, ix.index, metaFields, ids, func(raw []byte) error {
		var m metaDoc
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		found[m.ID] = true
		ix.setMeta(m)
		return nil
	})
	if err != nil {
		ix.st.logger.Error("re-read after failed write", "documents", len(ids), "err", err)
		return
	}
	for _, id := range ids {
		if found[id] {
			continue
		}
		ix.forget(id)
	}
}
