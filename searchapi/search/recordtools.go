package search

import (
	"context"
	"encoding/json"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
	"github.com/agentfinder/agentfinder/searchapi/hybrid"
)

// The records index holds no tool lists: a record's tools live in the
// tools index alone (normalize.RecordDocument, normalize.ToolDocument), and
// the engine puts them back on every whole record it shows, here and
// nowhere else. Agent reads the record's tool document at the same time as
// the record, under the same key and access filter; a listing reads the
// tool documents of its page's records by id, under the caller's access.
// Where the tools index does not exist (an index ingest has not run on
// since it came), the records are shown as the records index holds them.

// toolRead is a read of tool lists, by record id, running beside a read of
// records.
type toolRead struct {
	done  chan struct{}
	lists map[string]json.RawMessage // nil: no tools index
	err   error
}

// readToolLists starts reading the tool lists of at most limit tool
// documents f keeps (f holds the caller's access). Its join waits for it.
func (s *Engine) readToolLists(ctx context.Context, f filter.Expr, limit int) *toolRead {
	t := &toolRead{done: make(chan struct{})}
	uid := s.toolIndex(ctx)
	if uid == "" {
		close(t.done)
		return t
	}
	go func() {
		defer close(t.done)
		t.lists, t.err = s.toolDocLists(ctx, uid, f, limit)
	}()
	return t
}

// toolDocLists reads the ids and tool lists of the tool documents f keeps in
// the tools index uid; nil and no error when the index is gone.
func (s *Engine) toolDocLists(ctx context.Context, uid string, f filter.Expr, limit int) (map[string]json.RawMessage, error) {
	var docs meilisearch.DocumentsResult
	err := s.cfg.Meili.Index(uid).GetDocumentsWithContext(ctx, &meilisearch.DocumentsQuery{
		Filter: f.Filter(), Limit: int64(max(limit, 1)), Fields: []string{normalize.FieldID, normalize.FieldTools},
	}, &docs)
	if indexNotFound(err) {
		s.toolsGone()
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	lists := make(map[string]json.RawMessage, len(docs.Results))
	for _, d := range docs.Results {
		if id, ok := hybrid.String(d[normalize.FieldID]); ok && len(d[normalize.FieldTools]) > 0 {
			lists[id] = d[normalize.FieldTools]
		}
	}
	return lists, nil
}

// join waits for the read and puts on each of docs (records read with
// their id) the tool list of its tool document: the tools index is the
// one home of tool lists. A record whose tool document holds none keeps
// the list it holds itself, as an older ingest wrote it (records with
// their lists, tool documents without, until ingest brings the index in
// step: what a read-only node meets meanwhile); a list taken off (null)
// is left out. Without a tools index it leaves docs as they are.
func (t *toolRead) join(docs ...map[string]json.RawMessage) error {
	<-t.done
	if t.err != nil {
		return t.err
	}
	if t.lists == nil {
		return nil
	}
	for _, d := range docs {
		id, _ := hybrid.String(d[normalize.FieldID])
		if l, ok := t.lists[id]; ok {
			d[normalize.FieldTools] = l
		} else if string(d[normalize.FieldTools]) == "null" {
			delete(d, normalize.FieldTools)
		}
	}
	return nil
}

// wait waits for the read to end (a read not joined must not outlive its
// request).
func (t *toolRead) wait() { <-t.done }

// withToolLists joins the tool lists of hits, records a listing read with
// their ids, under the caller's access.
func (s *Engine) withToolLists(ctx context.Context, hits []meiliHit, access []string) error {
	ids := make([]string, 0, len(hits))
	docs := make([]map[string]json.RawMessage, len(hits))
	for i, h := range hits {
		docs[i] = h
		if id, ok := hybrid.String(h[normalize.FieldID]); ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return s.readToolLists(ctx, filter.And(filter.In(normalize.FieldID, ids), filter.Access(access)), len(ids)).join(docs...)
}
