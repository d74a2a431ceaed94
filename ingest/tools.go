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

// The tools a record shows follow one rule (recordTools): the list the
// prober last read from its endpoint when it holds one, else the list its
// server card or server.json declares. The endpoint's list replaces the
// declared one whole: it is the server's own answer today, so a tool the
// endpoint stops listing leaves the index even when a card still declares
// it. An endpoint that cannot be listed (gated, not MCP, a template, never
// probed, listing off) says nothing about its tools, so the declared list
// stands; a failing endpoint keeps the list it last gave (the prober's
// rule). The declared list is kept whatever the record shows
// (normalize.Document.DeclaredTools), on its tool document, not on the
// stored record (whose size every search's fetch pays), so a probe that
// takes the listed tools away brings the declared ones back at once, not
// at the catalog's next change. (A record whose endpoint lists no tools at
// all has no tool document to keep them: its declared tools come back at
// its catalog's next fetch, rewriteAtNextFetch.)

// recordTools is the rule above: listed when read, else declared.
func recordTools(listed, declared *normalize.ToolSet) *normalize.ToolSet {
	if listed != nil {
		return listed
	}
	return declared
}

// putTools sets the tools of doc, written for identifier from catalog
// with the tools its server card declares (doc.Tools as normalize read
// them): those the prober read, else the declared ones, which the
// document keeps either way.
func (ix *Indexer) putTools(doc *normalize.Document, identifier, catalog string) {
	declared := doc.Tools
	doc.Tools, doc.DeclaredTools = ix.toolsFor(identifier, catalog, declared), declared
}

// toolsFor returns the tools a document written for identifier from
// catalog shows: recordTools of those the prober read and declared.
func (ix *Indexer) toolsFor(identifier, catalog string, declared *normalize.ToolSet) *normalize.ToolSet {
	var listed *normalize.ToolSet
	if ix.cfg.Tools != nil {
		if ts, ok := ix.cfg.Tools.Tools(identifier, catalog); ok {
			listed = ts
		}
	}
	return recordTools(listed, declared)
}

// SetTools writes the tools read from the endpoint of the record with
// identifier, as catalog lists it: the document is rewritten with them and
// its tool texts embedded (vectors of the entry's other texts come from the
// cache or are embedded again). tools nil takes the read tools away (the
// endpoint went gated or is no MCP server any more): the document shows
// the tools its server card declares again, if any (recordTools). held is
// false when ingest holds no document for identifier from that catalog. It
// blocks like Put while the queue is full.
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
// (with what b patches on it, and the declared tools its tool document
// keeps).
func (ix *Indexer) setTools(ctx context.Context, b *batch, u *toolsUpdate) bool {
	id, ok := ix.ownedKey(u.catalog, u.identifier)
	if !ok {
		return false
	}
	if d, ok := b.upserts[id]; ok {
		d.Tools = recordTools(u.tools, d.DeclaredTools)
		return true
	}
	d, err := ix.readForTools(ctx, b, id)
	if err != nil {
		ix.st.logger.Warn("tools not written", "id", id, "err", err)
		return true // held: the next probe sends them again
	}
	if u.tools == nil && d.DeclaredTools == nil {
		ix.rewriteAtNextFetch(id)
	}
	d.Tools = recordTools(u.tools, d.DeclaredTools)
	d.Vectors = nil
	b.upsert(id, d, -1)
	return true
}

// readForTools reads the stored document id back for setTools to rewrite:
// with the fields b was about to patch on it (health, stale, lost claims),
// which go onto the rewritten document instead, and the tools it declares
// (readDeclared).
func (ix *Indexer) readForTools(ctx context.Context, b *batch, id string) (*normalize.Document, error) {
	d, err := ix.readDocument(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("document not read back: %w", err)
	}
	if p := b.patches[id]; p != nil {
		raw, err := json.Marshal(p)
		if err == nil {
			err = json.Unmarshal(raw, d)
		}
		if err != nil {
			return nil, fmt.Errorf("patch not applied: %w", err)
		}
	}
	if d.DeclaredTools == nil { // an older ingest's record may hold them still
		if d.DeclaredTools, err = ix.readDeclared(ctx, id); err != nil {
			return nil, fmt.Errorf("declared tools not read back: %w", err)
		}
	}
	return d, nil
}

// readDeclared returns the tools the record id declares: those a failed
// tools index write did not store, else those its tool document keeps
// (normalize.StoredDeclared); nil when it has none.
func (ix *Indexer) readDeclared(ctx context.Context, id string) (*normalize.ToolSet, error) {
	if u, ok := ix.toolsUnwritten[id]; ok {
		return u.declared, nil
	}
	stored, err := ix.storedTools(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	_, declared := stored[id].lists()
	return declared, nil
}

// rewriteAtNextFetch forgets the claim hash of the stored record id, so
// that its catalog's next fetch writes it again, and its tools with it:
// its tools are lost (toolDocOf), or its listed tools were just taken away
// and its tool document keeps no declared ones (a record written before
// they were kept, or one whose endpoint listed no tools, has no tool
// document to keep them; a record that declares none is written once
// more, unchanged).
func (ix *Indexer) rewriteAtNextFetch(id string) {
	if m := ix.docs[id]; m != nil {
		m.hash = ""
	}
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
