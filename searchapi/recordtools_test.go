package searchapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/searchtest"
)

// probed is an ingest.ToolSource holding what a prober last read.
type probed struct {
	mu    sync.Mutex
	tools map[string]*normalize.ToolSet
}

func (p *probed) Tools(identifier, _ string) (*normalize.ToolSet, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ts, ok := p.tools[identifier]
	return ts, ok
}

// TestRecordToolsWhole: the records index stores no tool lists (the tools
// index is their one home), and a record's tools still come back whole
// through GET /agents/{id}, the GET /agents listing and MCP get_agent, after a health patch, a stale
// mark, tools the prober read, and a rewrite of the record by its catalog.
func TestRecordToolsWhole(t *testing.T) {
	ctx := context.Background()
	ms := meilitest.Connect(t)
	name := meilitest.NewIndexName("rectools")
	t.Cleanup(func() {
		for _, uid := range []string{name, name + "_sources", normalize.ToolsIndex(name)} {
			if task, err := ms.Client.DeleteIndex(uid); err == nil {
				_ = meilitest.Wait(ms.Client, task.TaskUID)
			}
		}
	})
	src := &probed{tools: map[string]*normalize.ToolSet{}}
	ix, err := ingest.New(ctx, ms.Client, ingest.Config{Index: name, Tools: src, StaleAfterFailures: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close(context.Background()) })
	const catalog = "https://quill.test/catalog.json"
	const id = "urn:ai:quill.test:mcp:quill"
	declared := &normalize.ToolSet{Source: normalize.ToolsDeclared, Listed: 2, Items: []normalize.Tool{
		{Name: "pdf_to_markdown", Title: "PDF to Markdown", Description: "Convert a PDF to Markdown.", Params: []string{"url"},
			Annotations: &normalize.ToolAnnotations{ReadOnlyHint: new(true)}},
		{Name: "ocr", Description: "Read the text of an image."}}}
	put := func(desc string) {
		t.Helper()
		rec := normalize.Record{Identifier: id, DisplayName: "Quill", Type: normalize.TypeMCP, Description: desc,
			Publisher: "quill.test", Protocols: []string{"mcp"}, Tools: declared}
		res := normalize.CatalogResult{Catalog: catalog, Status: normalize.StatusOK, FetchedAt: time.Now(), Records: []normalize.Record{rec}}
		if err := ix.Put(ctx, res); err != nil {
			t.Fatal(err)
		}
		flush(t, ix)
	}
	put("Turns documents into text.")

	f := &fixture{t: t, meili: ms, index: name}
	srv, err := New(Config{Index: name, Meili: ms.Client, PublicURL: "https://finder.test.example", RegistryName: "Test Finder",
		PageTokenKey: []byte("test-key"), MinScore: new(int)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	f.http = httptest.NewServer(srv.Handler())
	t.Cleanup(f.http.Close)
	cs := searchtest.MCPSession(t, f.http.URL+"/mcp", f.http.Client())

	check := func(step string, want *normalize.ToolSet) {
		t.Helper()
		var stored map[string]json.RawMessage
		if err := ms.Client.Index(name).GetDocument(normalize.DocID(id), nil, &stored); err != nil {
			t.Fatal(err)
		}
		if raw, ok := stored[normalize.FieldTools]; ok && string(raw) != "null" {
			t.Errorf("%s: the records index stores the tool list: %s", step, raw)
		}
		wantJSON, _ := json.Marshal(want)
		var rec map[string]json.RawMessage
		if resp := f.do(http.MethodGet, "/agents/"+url.PathEscape(id), nil, nil, &rec); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: GET /agents/{id}: %d", step, resp.StatusCode)
		}
		if got := canonical(t, rec[normalize.FieldTools]); got != canonical(t, wantJSON) {
			t.Errorf("%s: GET /agents/{id} tools\n%s\nwant\n%s", step, got, canonical(t, wantJSON))
		}
		if _, ok := rec[normalize.FieldToolsKey]; ok {
			t.Errorf("%s: GET /agents/{id} shows the internal %s", step, normalize.FieldToolsKey)
		}
		var list struct {
			Items []map[string]json.RawMessage `json:"items"`
		}
		if resp := f.do(http.MethodGet, "/agents?includeStale=true", nil, nil, &list); resp.StatusCode != http.StatusOK || len(list.Items) != 1 {
			t.Fatalf("%s: GET /agents: %d, %d items", step, resp.StatusCode, len(list.Items))
		}
		if got := canonical(t, list.Items[0][normalize.FieldTools]); got != canonical(t, wantJSON) {
			t.Errorf("%s: GET /agents tools\n%s\nwant\n%s", step, got, canonical(t, wantJSON))
		}
		if _, ok := list.Items[0][normalize.FieldID]; ok {
			t.Errorf("%s: GET /agents shows the record's internal id", step)
		}
		var viaMCP map[string]json.RawMessage
		if res := callTool(t, cs, "get_agent", map[string]any{"identifier": id}, &viaMCP); res.IsError {
			t.Fatalf("%s: get_agent: %s", step, toolText(res))
		}
		if got := canonical(t, viaMCP[normalize.FieldTools]); got != canonical(t, wantJSON) {
			t.Errorf("%s: MCP get_agent tools\n%s\nwant\n%s", step, got, canonical(t, wantJSON))
		}
	}
	check("written", declared)

	down := normalize.Health{Status: normalize.HealthDown, CheckedAt: time.Now().UTC().Truncate(time.Second)}
	if held, err := ix.SetHealth(ctx, id, catalog, down); err != nil || !held {
		t.Fatalf("SetHealth: %v, %v", held, err)
	}
	flush(t, ix)
	check("health patched", declared)

	if err := ix.Put(ctx, normalize.CatalogResult{Catalog: catalog, Status: normalize.StatusFailed, FetchedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	flush(t, ix)
	var stale struct {
		Stale bool `json:"stale"`
	}
	if err := ms.Client.Index(name).GetDocument(normalize.DocID(id), nil, &stale); err != nil || !stale.Stale {
		t.Fatalf("the catalog's failure did not mark the record stale: %+v, %v", stale, err)
	}
	check("marked stale", declared)

	listed := &normalize.ToolSet{Source: normalize.ToolsListed, Listed: 1, ReadAt: time.Now().UTC().Truncate(time.Second),
		Items: []normalize.Tool{{Name: "summarize", Description: "Summarize a document."}}}
	src.mu.Lock()
	src.tools[id] = listed
	src.mu.Unlock()
	if held, err := ix.SetTools(ctx, id, catalog, listed); err != nil || !held {
		t.Fatalf("SetTools: %v, %v", held, err)
	}
	flush(t, ix)
	check("tools read by the prober", listed)

	put("Turns documents into text, and summarizes them.")
	check("rewritten by its catalog", listed)
}

// flush waits until everything ix was given is written.
func flush(t *testing.T, ix *ingest.Indexer) {
	t.Helper()
	if err := ix.Flush(t.Context()); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// canonical re-encodes a JSON value with sorted keys.
func canonical(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	if len(raw) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
