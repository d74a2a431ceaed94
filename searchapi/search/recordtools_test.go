package search

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

// TestRecordToolsOlderIngest: an index an older ingest wrote (records
// holding their tool lists, tool documents of version 1 holding words and
// no list), as a read-only node meets it until the writer's ingest brings
// it in step, shows each whole record with the list it holds (Agent and
// listings); a record whose list was taken off (stored as null) shows
// none.
func TestRecordToolsOlderIngest(t *testing.T) {
	held := toolServer("held.test", "zebrafinch_invoices", "Parse zebrafinch invoices.", nil)
	none := toolServer("none.test", "unused", "Unused.", func(r *normalize.Record) { r.Tools = nil })
	eng := toolsEngine(t, []normalize.Record{held, none})
	ms := meilitest.Connect(t)
	tools := ms.Client.Index(normalize.ToolsIndex(eng.cfg.Index))
	var doc map[string]any
	if err := tools.GetDocument(normalize.DocID(held.Identifier), nil, &doc); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{normalize.FieldTools, normalize.FieldToolsKey, normalize.FieldToolDocVersion} {
		delete(doc, f)
	}
	wait := func(task *meilisearch.TaskInfo, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
			t.Fatal(err)
		}
	}
	wait(tools.AddDocuments([]map[string]any{doc}, nil))
	wait(ms.Client.Index(eng.cfg.Index).UpdateDocuments([]map[string]any{
		{normalize.FieldID: normalize.DocID(held.Identifier), normalize.FieldTools: held.Tools},
		{normalize.FieldID: normalize.DocID(none.Identifier), normalize.FieldTools: nil},
	}, nil))

	check := func(door string, rec map[string]json.RawMessage) {
		t.Helper()
		var id string
		_ = json.Unmarshal(rec[normalize.FieldIdentifier], &id)
		raw, has := rec[normalize.FieldTools]
		switch id {
		case held.Identifier:
			var ts normalize.ToolSet
			if err := json.Unmarshal(raw, &ts); err != nil || len(ts.Items) != 1 || ts.Items[0].Name != "zebrafinch_invoices" {
				t.Errorf("%s %s: tools %s (%v), want the list its record holds", door, id, raw, err)
			}
		case none.Identifier:
			if has {
				t.Errorf("%s %s: tools %s, want none", door, id, raw)
			}
		default:
			t.Errorf("%s: unexpected record %q", door, id)
		}
	}
	ctx := context.Background()
	for _, r := range []normalize.Record{held, none} {
		rec, err := eng.Agent(ctx, r.Identifier, nil)
		if err != nil {
			t.Fatal(err)
		}
		check("Agent", rec)
	}
	page, err := eng.List(ctx, Listing{Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 2 {
		t.Fatalf("List: %d items, want 2", len(page.Items))
	}
	for _, rec := range page.Items {
		check("List", rec)
	}
}
