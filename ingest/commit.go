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

// opKind says what one task of a commit writes.
type opKind string

// Operation kinds.
const (
	opAdd     opKind = "add"     // whole documents
	opDelete  opKind = "delete"  // documents removed
	opPatch   opKind = "flags"   // partial documents: stale flags, lost claims
	opSources opKind = "sources" // catalog health states
)

// op is one task of a commit and what to do when it fails.
type op struct {
	kind  opKind
	t     *task
	lines []line   // add
	ids   []string // delete, flags (patches of stale and lostClaims)
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
	var (
		fatal   error
		failed  = map[int]error{} // result index -> first error
		reread  []string          // ids whose state must be read back
		tasks   int64
		fails   int64
		lastErr error
		ops     []*op
		start   = time.Now()
	)
	fail := func(ri int, err error) {
		if ri >= 0 && failed[ri] == nil {
			failed[ri] = err
		}
	}

	if len(b.upserts) > 0 {
		ids := slices.Sorted(maps.Keys(b.upserts))
		docs := make([]*normalize.Document, len(ids))
		for i, id := range ids {
			docs[i] = b.upserts[id]
		}
		var err error
		if ix.cfg.Embedder != nil {
			if err = embedDocs(ctx, ix.cfg.Embedder, ix.vcache, docs); err != nil {
				err = fmt.Errorf("ingest: %w", err)
			}
		}
		if err != nil {
			lastErr = err
			fails++
			for _, id := range ids {
				fail(b.from[id], err)
			}
			reread = append(reread, ids...)
		} else {
			lines := make([]line, 0, len(docs))
			for i, d := range docs {
				raw, err := json.Marshal(d)
				if err != nil {
					err = fmt.Errorf("ingest: encode %s: %w", d.Identifier, err)
					fail(b.from[ids[i]], err)
					reread = append(reread, ids[i])
					continue
				}
				lines = append(lines, line{id: ids[i], raw: raw})
			}
			for _, chunk := range chunks(lines, chunkDocs) {
				ops = append(ops, &op{kind: opAdd, t: ix.st.addTask(ix.index, ndjson(chunk)), lines: chunk})
			}
		}
	}
	if len(b.deletes) > 0 {
		ids := slices.Sorted(maps.Keys(b.deletes))
		ops = append(ops, &op{kind: opDelete, t: ix.st.deleteTask(ix.index, ids), ids: ids})
	}
	if len(b.patches) > 0 {
		ids := slices.Sorted(maps.Keys(b.patches))
		patch := make([]map[string]any, len(ids))
		for i, id := range ids {
			patch[i] = maps.Clone(b.patches[id])
			patch[i][normalize.FieldID] = id
		}
		ops = append(ops, &op{kind: opPatch, t: ix.st.patchTask(ix.index, patch), ids: ids})
	}
	var states []sourceState
	var srcs []*source
	for _, c := range slices.Sorted(maps.Keys(b.dirty)) {
		if s := b.dirty[c]; s.dirty() {
			states = append(states, s.state)
			srcs = append(srcs, s)
		}
	}
	if len(states) > 0 {
		ops = append(ops, &op{kind: opSources, t: ix.st.upsertTask(ix.sources, states), srcs: srcs})
	}

	// Enqueue everything, then await in order. each runs step on every op
	// that has not failed yet; an error once ctx ended stops the commit.
	each := func(step func(o *op) error) {
		for _, o := range ops {
			if fatal != nil {
				return
			}
			if o.err != nil {
				continue
			}
			if err := step(o); err != nil {
				if ctx.Err() != nil {
					fatal = err
					return
				}
				o.err = err
			}
		}
	}
	each(func(o *op) error { tasks++; return ix.st.enqueue(ctx, o.t) })
	each(func(o *op) error { return ix.st.finish(ctx, o.t) })

	for _, o := range ops {
		if fatal != nil {
			break
		}
		if o.err == nil {
			if o.kind == opSources {
				for _, s := range o.srcs {
					s.saved = s.state
				}
			}
			continue
		}
		switch o.kind {
		case opAdd:
			// The task failed as a whole; find the documents it failed for.
			n, bad, err := ix.addLines(ctx, o.lines, o.err)
			tasks += n
			if err != nil {
				fatal = err
				break
			}
			for id, err := range bad {
				lastErr = err
				fails++
				fail(b.from[id], err)
				reread = append(reread, id)
				ix.st.logger.Error("document rejected by meilisearch", "id", id, "err", err)
			}
		case opDelete:
			lastErr = o.err
			fails++
			for _, id := range o.ids {
				fail(b.deletes[id], o.err)
			}
			reread = append(reread, o.ids...)
			ix.st.logger.Error("delete failed", "documents", len(o.ids), "err", o.err)
		case opPatch:
			lastErr = o.err
			fails++
			reread = append(reread, o.ids...)
			ix.st.logger.Error("document patch failed", "documents", len(o.ids), "err", o.err)
		case opSources:
			lastErr = o.err
			fails++
			ix.st.logger.Error("catalog state update failed", "err", o.err)
		}
	}

	if fatal != nil {
		lastErr = fatal
		ix.st.logger.Error("batch abandoned", "results", len(b.results), "err", fatal)
	} else if len(reread) > 0 {
		ix.reread(ctx, reread)
	}

	ix.st.logger.Debug("batch written", "results", len(b.results), "upserts", len(b.upserts), "deletes", len(b.deletes),
		"patches", len(b.patches), "tasks", tasks, "took", time.Since(start))
	var sum Stats
	for i := range b.results {
		ar := &b.results[i]
		if fatal != nil {
			ar.Err = fatal
		} else if err := failed[i]; err != nil {
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
		s.Tasks += tasks
		s.TaskFailures += fails
		if fatal != nil {
			s.TaskFailures++
		}
		if lastErr != nil {
			s.LastError = lastErr.Error()
		}
	})
	if ix.cfg.OnResult != nil {
		for _, ar := range b.results {
			ix.cfg.OnResult(ar.Catalog, ar)
		}
	}
	var flushErr error
	if fatal != nil {
		flushErr = fatal
	} else if len(failed) > 0 || lastErr != nil {
		flushErr = lastErr
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
