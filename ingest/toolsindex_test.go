package ingest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

// toolDoc is a tool document as the tools index holds it.
type toolDoc struct {
	ID         string             `json:"id"`
	Identifier string             `json:"identifier"`
	Stale      bool               `json:"stale"`
	Visibility []string           `json:"visibility"`
	Health     *normalize.Health  `json:"health"`
	ToolWords  string             `json:"toolWords"`
	Tools      *normalize.ToolSet `json:"tools"`
	Version    int                `json:"toolDocVersion"`
	// Fields a tool document must not carry.
	Description string `json:"description"`
	URL         string `json:"url"`
}

// toolDocOf returns the tools index's document for identifier, or nil.
func (e *env) toolDocOf(identifier string) *toolDoc {
	e.t.Helper()
	var d toolDoc
	err := e.client.Index(normalize.ToolsIndex(e.index)).GetDocumentWithContext(e.t.Context(), normalize.DocID(identifier), nil, &d)
	if err != nil {
		if apiCode(err) == "document_not_found" {
			return nil
		}
		e.t.Fatalf("get tool document %s: %v", identifier, err)
	}
	return &d
}

// toolNames are the names of the tools a tool document's list holds (nil:
// no document or no list).
func toolNames(d *toolDoc) []string {
	if d == nil || d.Tools == nil {
		return nil
	}
	var out []string
	for _, t := range d.Tools.Items {
		out = append(out, t.Name)
	}
	return out
}

// toolWords are the words a tool document holds ("": no document).
func toolWords(d *toolDoc) string {
	if d == nil {
		return ""
	}
	return d.ToolWords
}

// withTools returns res with the tools of names declared on the record of
// identifier.
func withTools(res normalize.CatalogResult, identifier string, names ...string) normalize.CatalogResult {
	res.Records = slices.Clone(res.Records)
	for i := range res.Records {
		if res.Records[i].Identifier != identifier {
			continue
		}
		ts := &normalize.ToolSet{Source: normalize.ToolsDeclared, Listed: len(names)}
		for _, n := range names {
			ts.Items = append(ts.Items, normalize.Tool{Name: n, Description: "does " + n})
		}
		res.Records[i].Tools = ts
	}
	return res
}

// TestToolsIndexInStep: every write, patch and delete of a record keeps
// its tool document in step: written with the record's filterable fields,
// its tool list and its tools' words (and nothing else of it), changed when its tools change,
// deleted when it lists none any more or is deleted, patched with the
// record's health and stale flag.
func TestToolsIndexInStep(t *testing.T) {
	e := newEnv(t, Config{StaleAfterFailures: 1})
	const origin = "https://tools.test/.well-known/ai-catalog.json"
	a, b, c := "urn:air:tools.test:agent:a", "urn:air:tools.test:agent:b", "urn:air:tools.test:agent:c"
	cat := catalog(t, origin, manifest(entry(a, "A", "first", "2026-01-01"), entry(b, "B", "second", "2026-01-01"), entry(c, "C", "third", "2026-01-01")))
	cat = withTools(withTools(cat, a, "pdf_to_markdown", "ocr"), c, "geocode")
	e.sync(cat)

	if got, want := toolWords(e.toolDocOf(a)), "pdf to markdown does ocr"; got != want {
		t.Fatalf("%s: tool document's words %q, want %q", a, got, want)
	}
	if d := e.toolDocOf(b); d != nil {
		t.Errorf("%s lists no tools but has a tool document %+v", b, d)
	}
	d := e.toolDocOf(a)
	if d.Identifier != a || d.Health == nil || d.Health.Status != normalize.HealthUnknown || d.Stale {
		t.Errorf("%s: tool document %+v does not carry the record's identifier, health and stale flag", a, d)
	}
	if d.Description != "" || d.URL != "" {
		t.Errorf("%s: tool document carries fields nothing filters on or reads: %+v", a, d)
	}
	if got := toolNames(d); !slices.Equal(got, []string{"pdf_to_markdown", "ocr"}) || d.Version != normalize.ToolDocVersion {
		t.Errorf("%s: tool document's list %v (version %d), want the record's tools (version %d)", a, got, d.Version, normalize.ToolDocVersion)
	}

	t.Run("a health verdict patches the tool document", func(t *testing.T) {
		down := normalize.Health{Status: normalize.HealthDown, CheckedAt: time.Date(2026, 1, 10, 13, 0, 0, 0, time.UTC)}
		if held, err := e.ix.SetHealth(t.Context(), a, origin, down); err != nil || !held {
			t.Fatalf("SetHealth: %v, %v", held, err)
		}
		e.flush()
		if d := e.toolDocOf(a); d == nil || d.Health == nil || d.Health.Status != normalize.HealthDown {
			t.Errorf("tool document after SetHealth: %+v, want health down", d)
		}
		if d := e.toolDocOf(b); d != nil {
			t.Errorf("a health patch created a tool document for %s, which lists no tools: %+v", b, d)
		}
	})

	t.Run("tools that change between probes", func(t *testing.T) {
		listed := &normalize.ToolSet{Source: normalize.ToolsListed, Listed: 1, Items: []normalize.Tool{{Name: "ocr", Description: "reads images"}}}
		if held, err := e.ix.SetTools(t.Context(), a, origin, listed); err != nil || !held {
			t.Fatalf("SetTools: %v, %v", held, err)
		}
		e.flush()
		if got, want := toolWords(e.toolDocOf(a)), "ocr reads images"; got != want {
			t.Errorf("tool document after the tools changed: %q, want %q (pdf_to_markdown disappeared)", got, want)
		}
		if d := e.toolDocOf(a); d == nil || !slices.Equal(toolNames(d), []string{"ocr"}) || d.Tools.Items[0].Description != "reads images" {
			t.Errorf("tool document's list after the tools changed: %+v, want ocr alone, as listed", d)
		}
		if held, err := e.ix.SetTools(t.Context(), c, origin, &normalize.ToolSet{Source: normalize.ToolsListed}); err != nil || !held {
			t.Fatalf("SetTools: %v, %v", held, err)
		}
		e.flush()
		if d := e.toolDocOf(c); d != nil {
			t.Errorf("%s lists no tools any more but keeps a tool document %+v", c, d)
		}
	})

	t.Run("stale marks reach the tool document", func(t *testing.T) {
		e.sync(failed(origin))
		if d := e.toolDocOf(a); d == nil || !d.Stale || !slices.Equal(toolNames(d), []string{"ocr"}) {
			t.Errorf("tool document after the catalog failed: %+v, want stale, its list kept", d)
		}
	})

	t.Run("a record deleted takes its tool document", func(t *testing.T) {
		e.sync(withTools(catalog(t, origin, manifest(entry(b, "B", "second, with tools", "2026-01-02"))), b, "translate"))
		if d := e.toolDocOf(a); d != nil {
			t.Errorf("%s was deleted but its tool document stays: %+v", a, d)
		}
		if got, want := toolWords(e.toolDocOf(b)), "translate does"; got != want {
			t.Errorf("%s: tool document %q, want %q", b, got, want)
		}
		if d := e.toolDocOf(b); d == nil || d.Stale {
			t.Errorf("%s: tool document %+v, want fresh again", b, d)
		}
	})
}

// TestToolsIndexRepairedAtStart: a tools index out of step with the
// records (a tool document lost, an orphan left by a crash between two
// writes, one an older version wrote without the tool list) is brought in
// step when ingest starts.
func TestToolsIndexRepairedAtStart(t *testing.T) {
	e := newEnv(t, Config{})
	const origin = "https://repair.test/.well-known/ai-catalog.json"
	a, b, c := "urn:air:repair.test:agent:a", "urn:air:repair.test:agent:b", "urn:air:repair.test:agent:c"
	cat := catalog(t, origin, manifest(entry(a, "A", "first", "2026-01-01"), entry(b, "B", "second", "2026-01-01"), entry(c, "C", "third", "2026-01-01")))
	e.sync(withTools(withTools(cat, a, "ocr"), c, "translate"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.ix.Close(ctx); err != nil {
		t.Fatal(err)
	}
	tools := e.client.Index(normalize.ToolsIndex(e.index))
	task, err := tools.DeleteDocument(normalize.DocID(a), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(e.client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	orphan := map[string]any{"id": normalize.DocID(b), "identifier": b, normalize.FieldToolWords: "ghost"}
	// A tool document as version 1 wrote it: words, no list.
	old := map[string]any{"id": normalize.DocID(c), "identifier": c, normalize.FieldToolWords: "translate does"}
	task, err = tools.AddDocuments([]map[string]any{orphan, old}, &meilisearch.DocumentOptions{PrimaryKey: new("id")})
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(e.client, task.TaskUID); err != nil {
		t.Fatal(err)
	}

	e.open(Config{})
	if got, want := toolWords(e.toolDocOf(a)), "ocr does"; got != want {
		t.Errorf("%s: lost tool document not written again at start: %q, want %q", a, got, want)
	}
	if d := e.toolDocOf(b); d != nil {
		t.Errorf("%s lists no tools but its orphan tool document stays after start: %+v", b, d)
	}
	if d := e.toolDocOf(c); d == nil || !slices.Equal(toolNames(d), []string{"translate"}) || d.Version != normalize.ToolDocVersion {
		t.Errorf("%s: tool document of an older version not written again at start: %+v", c, d)
	}
	if d := e.toolDocOf(a); !slices.Equal(toolNames(d), []string{"ocr"}) {
		t.Errorf("%s: tool document written again at start without its list: %+v", a, d)
	}
}

// flush waits until everything queued is written.
func (e *env) flush() {
	e.t.Helper()
	if err := e.ix.Flush(e.t.Context()); err != nil {
		e.t.Fatalf("Flush: %v", err)
	}
}

// TestToolsIndexWriteFailureRepaired: a tools index write Meilisearch
// refuses loses nothing: the records are written all the same, and the
// tool documents are written from them at the next commit once the tools
// index takes them.
func TestToolsIndexWriteFailureRepaired(t *testing.T) {
	s := meilitest.Connect(t)
	e := &env{t: t, client: s.Client, index: meilitest.NewIndexName("ingest"), results: &results{},
		clock: clockwork.NewFakeClockAt(time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC))}
	t.Cleanup(func() { dropIndexes(s.Client, e.index) })
	// A tools index whose primary key is the identifier refuses every tool
	// document (an identifier is no valid document id).
	tools := normalize.ToolsIndex(e.index)
	task, err := s.Client.CreateIndex(&meilisearch.IndexConfig{Uid: tools, PrimaryKey: "identifier"})
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(s.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	e.open(Config{})
	const origin = "https://refused.test/.well-known/ai-catalog.json"
	a := "urn:air:refused.test:agent:a"
	if err := e.ix.Put(t.Context(), withTools(catalog(t, origin, manifest(entry(a, "A", "first", "2026-01-01"))), a, "ocr")); err != nil {
		t.Fatal(err)
	}
	_ = e.ix.Flush(t.Context()) // reports the failed tool write
	if d := e.doc(a); d == nil || d.Tools == nil || len(d.Tools.Items) != 1 {
		t.Fatalf("the record was not written whole when its tool document was refused: %+v", d)
	}
	if ar := e.results.last(origin); ar.Err != nil || ar.Upserted != 1 {
		t.Errorf("result %+v: the record's own write succeeded", ar)
	}
	if got := e.ix.Stats().TaskFailures; got == 0 {
		t.Error("the refused tool write is not counted as a task failure")
	}
	task, err = s.Client.Index(tools).UpdateIndex(&meilisearch.UpdateIndexRequestParams{PrimaryKey: "id"})
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(s.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	e.sync(notModified(origin)) // any next commit repairs
	if got, want := toolWords(e.toolDocOf(a)), "ocr does"; got != want {
		t.Errorf("tool document after the tools index took documents again: %q, want %q", got, want)
	}
	if got := toolNames(e.toolDocOf(a)); !slices.Equal(got, []string{"ocr"}) {
		t.Errorf("repaired tool document's list %v, want [ocr]", got)
	}
}
