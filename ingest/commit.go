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

// commit writes a batch: whole documents first, then deletes, then stale
// flags, then catalog health, each task awaited. A task that fails for good
// is reported on the results whose documents it carried (Meilisearch's
// error included), and ingest re-reads those documents so its ownership
// table matches the index again. Only the end of ctx (Close gave up) stops
// a commit early; any other error is a failure of the writes it concerns.
func (ix *Indexer) commit(ctx context.Context, b *batch) {
	var (
		fatal  error
		failed = map[int]error{} // result index -> first error
		reread []string          // ids whose state must be read back
		tasks  int64
		fails  int64
	)
	fail := func(ri int, err error) {
		if ri >= 0 && failed[ri] == nil {
			failed[ri] = err
		}
	}
	var lastErr error

	if len(b.upserts) > 0 {
		ids := slices.Sorted(maps.Keys(b.upserts))
		docs := make([]*normalize.Document, len(ids))
		for i, id := range ids {
			docs[i] = b.upserts[id]
		}
		var err error
		if ix.cfg.Embedder != nil {
			err = embedDocs(ctx, ix.cfg.Embedder, ix.vcache, docs)
			if err != nil {
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
			for _, chunk := range ix.chunks(lines) {
				n, bad, err := ix.addLines(ctx, chunk)
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
			}
		}
	}

	if fatal == nil && len(b.deletes) > 0 {
		ids := slices.Sorted(maps.Keys(b.deletes))
		tasks++
		if err := ix.st.deleteIDs(ctx, ix.index, ids); err != nil {
			if ctx.Err() != nil {
				fatal = err
			} else {
				lastErr = err
				fails++
				for _, id := range ids {
					fail(b.deletes[id], err)
				}
				reread = append(reread, ids...)
				ix.st.logger.Error("delete failed", "documents", len(ids), "err", err)
			}
		}
	}

	if fatal == nil && len(b.flags) > 0 {
		ids := slices.Sorted(maps.Keys(b.flags))
		patch := make([]map[string]any, len(ids))
		for i, id := range ids {
			patch[i] = map[string]any{normalize.FieldID: id, normalize.FieldStale: b.flags[id]}
		}
		tasks++
		if err := ix.st.patch(ctx, ix.index, patch); err != nil {
			if ctx.Err() != nil {
				fatal = err
			} else {
				lastErr = err
				fails++
				reread = append(reread, ids...)
				ix.st.logger.Error("stale flag update failed", "documents", len(ids), "err", err)
			}
		}
	}

	if fatal == nil {
		var states []sourceState
		var srcs []*source
		for _, c := range slices.Sorted(maps.Keys(b.dirty)) {
			if s := b.dirty[c]; s.dirty() {
				states = append(states, s.state)
				srcs = append(srcs, s)
			}
		}
		if len(states) > 0 {
			tasks++
			if err := ix.st.upsertRaw(ctx, ix.sources, states); err != nil {
				if ctx.Err() != nil {
					fatal = err
				} else {
					lastErr = err
					fails++
					ix.st.logger.Error("catalog state update failed", "err", err)
				}
			} else {
				for _, s := range srcs {
					s.saved = s.state
				}
			}
		}
	}

	if fatal != nil {
		lastErr = fatal
		ix.st.logger.Error("batch abandoned", "results", len(b.results), "err", fatal)
	} else if len(reread) > 0 {
		ix.reread(ctx, reread)
	}

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

// chunks splits lines into requests of at most BatchSize documents and
// maxPayload bytes.
func (ix *Indexer) chunks(lines []line) [][]line {
	var out [][]line
	start, size := 0, 0
	for i, l := range lines {
		if i > start && (i-start >= ix.cfg.BatchSize || size+len(l.raw)+1 > maxPayload) {
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

// addLines writes lines as one task. When Meilisearch rejects the task, it
// splits the lines in halves and tries again, so one bad document costs
// only itself: bad maps each rejected id to Meilisearch's error (a failed
// task, or a request Meilisearch refused). err is set only when ctx ended.
func (ix *Indexer) addLines(ctx context.Context, lines []line) (tasks int64, bad map[string]error, err error) {
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l.raw)
		buf.WriteByte('\n')
	}
	werr := ix.st.addNDJSON(ctx, ix.index, buf.Bytes())
	tasks = 1
	if werr == nil {
		return tasks, nil, nil
	}
	if ctx.Err() != nil {
		return tasks, nil, werr
	}
	if len(lines) == 1 {
		return tasks, map[string]error{lines[0].id: werr}, nil
	}
	half := len(lines) / 2
	bad = map[string]error{}
	for _, part := range [][]line{lines[:half], lines[half:]} {
		n, b, err := ix.addLines(ctx, part)
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
		if m := ix.docs[id]; m != nil {
			if src := ix.srcs[m.catalog]; src != nil {
				delete(src.owned, id)
			}
			delete(ix.docs, id)
		}
	}
}
