package ingest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentfinder/agentfinder/normalize"
)

// ToolSource knows the tools the prober last read from records' endpoints.
// Tools is called from the indexer's goroutine and must not block.
type ToolSource interface {
	// Tools returns the tools read from the endpoint of the record with
	// identifier as catalog lists it, and false when none were read (never
	// probed, gated, not MCP): the record then keeps the tools its server
	// card declares, if any.
	Tools(identifier, catalog string) (*normalize.ToolSet, bool)
}

// toolsUpdate is one tool list on its way to the writer goroutine.
type toolsUpdate struct {
	identifier string
	catalog    string
	tools      *normalize.ToolSet
	held       chan bool
}

// toolsFor returns the tools a document written for identifier from
// catalog carries: those the prober read, else the record's own (declared
// by its server card).
func (ix *Indexer) toolsFor(identifier, catalog string, declared *normalize.ToolSet) *normalize.ToolSet {
	if ix.cfg.Tools != nil {
		if ts, ok := ix.cfg.Tools.Tools(identifier, catalog); ok {
			return ts
		}
	}
	return declared
}

// SetTools writes the tools read from the endpoint of the record with
// identifier, as catalog lists it: the document is rewritten with them and
// its tool texts embedded (vectors of the entry's other texts come from the
// cache or are embedded again). tools nil takes the read tools away (the
// endpoint went gated or is no MCP server any more); tools its server card
// declares come back at the record's next write. held is false when
// ingest holds no document for identifier from that catalog. It blocks
// like Put while the queue is full.
func (ix *Indexer) SetTools(ctx context.Context, identifier, catalog string, tools *normalize.ToolSet) (bool, error) {
	u := &toolsUpdate{identifier: identifier, catalog: catalog, tools: tools, held: make(chan bool, 1)}
	if err := ix.send(ctx, item{tools: u}); err != nil {
		return false, err
	}
	select {
	case held := <-u.held:
		return held, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// setTools puts a tool list into batch b: onto the document b writes
// anyway, else onto the stored document, read back and rewritten whole
// (with what b patches on it).
func (ix *Indexer) setTools(ctx context.Context, b *batch, u *toolsUpdate) bool {
	id, ok := ix.ownedKey(u.catalog, u.identifier)
	if !ok {
		return false
	}
	if d, ok := b.upserts[id]; ok {
		d.Tools = u.tools
		return true
	}
	d, err := ix.readDocument(ctx, id)
	if err != nil {
		ix.st.logger.Warn("tools not written: document not read back", "id", id, "err", err)
		return true // held: the next probe sends them again
	}
	if p := b.patches[id]; p != nil {
		// Fields b was about to patch (health, stale, lost claims) go onto
		// the rewritten document instead.
		raw, err := json.Marshal(p)
		if err == nil {
			err = json.Unmarshal(raw, d)
		}
		if err != nil {
			ix.st.logger.Warn("tools not written: patch not applied", "id", id, "err", err)
			return true
		}
	}
	d.Tools = u.tools
	d.Vectors = nil
	b.upsert(id, d, -1)
	return true
}

// readDocument reads the stored document id whole (without its vectors).
func (ix *Indexer) readDocument(ctx context.Context, id string) (*normalize.Document, error) {
	var out *normalize.Document
	err := ix.st.scan(ctx, ix.index, nil, []string{id}, func(raw []byte) error {
		var d normalize.Document
		if err := json.Unmarshal(raw, &d); err != nil {
			return err
		}
		out = &d
		return nil
	})
	if err == nil && out == nil {
		err = fmt.Errorf("document %s not in the index", id)
	}
	return out, err
}
