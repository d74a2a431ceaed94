package ingest

import (
	"context"
	"slices"
	"strings"
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
	WordSets   string             `json:"toolWordSets"`
	Tools      *normalize.ToolSet `json:"tools"`
	Declared   *normalize.ToolSet `json:"declaredTools"`
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
	if words, sets := normalize.ToolWordsAndSets(d.Tools); d.ToolWords != words || d.WordSets != sets || sets == "" {
		t.Errorf("%s: tool document's words %q and word sets %q, want %q and %q (its tools')", a, d.ToolWords, d.WordSets, words, sets)
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

// toolSource is a ToolSource holding what a prober read, by identifier.
type toolSource map[string]*normalize.ToolSet

func (s toolSource) Tools(identifier, _ string) (*normalize.ToolSet, bool) {
	ts, ok := s[identifier]
	return ts, ok
}

// listedTools is a tool list as the prober reads it, of the tools of names.
func listedTools(names ...string) *normalize.ToolSet {
	ts := &normalize.ToolSet{Source: normalize.ToolsListed, Listed: len(names)}
	for _, n := range names {
		ts.Items = append(ts.Items, normalize.Tool{Name: n, Description: "lists " + n})
	}
	return ts
}

// TestToolsIndexRepairedAtStart: a tools index out of step with the
// records is brought in step when ingest starts, the tools index being the
// one home of the tool lists: a lost tool document is written again from
// the tools the prober read when they are the record's (its ToolsKey),
// else its record's catalog writes it again at its next fetch (the tools
// a record declares were kept on it too: it showed them, or shows the
// prober's over them); an orphan left by a crash between two writes is
// deleted; a record an older ingest wrote with its tools inside (and its
// tool document of version 1, words and no list) has its tool document
// written from them and its list taken off.
func TestToolsIndexRepairedAtStart(t *testing.T) {
	const origin = "https://repair.test/.well-known/ai-catalog.json"
	a, b, c, d := "urn:air:repair.test:agent:a", "urn:air:repair.test:agent:b", "urn:air:repair.test:agent:c", "urn:air:repair.test:agent:d"
	f := "urn:air:repair.test:agent:f"
	// The prober read a's and d's tools; at the restart it holds d's alone
	// (a's endpoint went gated while ingest was down).
	aListed, dListed := listedTools("scan"), listedTools("reverse_geocode")
	e := newEnv(t, Config{Tools: toolSource{a: aListed, d: dListed}})
	cat := catalog(t, origin, manifest(entry(a, "A", "first", "2026-01-01"), entry(b, "B", "second", "2026-01-01"),
		entry(c, "C", "third", "2026-01-01"), entry(d, "D", "fourth", "2026-01-01"), entry(f, "F", "fifth", "2026-01-01")))
	cat = withTools(withTools(withTools(withTools(cat, a, "ocr"), c, "translate"), d, "geocode"), f, "summarize")
	e.sync(cat)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.ix.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if doc := e.doc(a); doc == nil || doc.Tools != nil || doc.ToolsKey == "" {
		t.Fatalf("the records index stores %s with its tool list or without its ToolsKey: %+v", a, doc)
	}
	tools := e.client.Index(normalize.ToolsIndex(e.index))
	task, err := tools.DeleteDocuments([]string{normalize.DocID(a), normalize.DocID(d), normalize.DocID(f)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(e.client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	orphan := map[string]any{"id": normalize.DocID(b), "identifier": b, normalize.FieldToolWords: "ghost"}
	// A tool document as version 1 wrote it: words, no list; its record
	// holding its tools, as ingest wrote records then.
	old := map[string]any{"id": normalize.DocID(c), "identifier": c, normalize.FieldToolWords: "translate does"}
	task, err = tools.AddDocuments([]map[string]any{orphan, old}, &meilisearch.DocumentOptions{PrimaryKey: new("id")})
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(e.client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	var legacy *normalize.ToolSet
	for _, r := range cat.Records {
		if r.Identifier == c {
			legacy = r.Tools
		}
	}
	task, err = e.client.Index(e.index).UpdateDocuments([]map[string]any{{"id": normalize.DocID(c), normalize.FieldTools: legacy, normalize.FieldToolsKey: nil}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(e.client, task.TaskUID); err != nil {
		t.Fatal(err)
	}

	e.open(Config{Tools: toolSource{d: dListed}})
	if doc := e.toolDocOf(d); !slices.Equal(toolNames(doc), []string{"reverse_geocode"}) {
		t.Errorf("%s: lost tool document not written again at start from the prober's tools: %+v", d, doc)
	}
	for _, id := range []string{a, f} {
		if doc := e.toolDocOf(id); doc != nil {
			t.Errorf("%s: a tool document written at start from nowhere: %+v", id, doc)
		}
	}
	if doc := e.toolDocOf(b); doc != nil {
		t.Errorf("%s lists no tools but its orphan tool document stays after start: %+v", b, doc)
	}
	if doc := e.toolDocOf(c); doc == nil || !slices.Equal(toolNames(doc), []string{"translate"}) || doc.Version != normalize.ToolDocVersion {
		t.Errorf("%s: tool document of an older version not written again at start from its record: %+v", c, doc)
	}
	if doc := e.doc(c); doc == nil || doc.Tools != nil || doc.ToolsKey != normalize.ToolsKey(legacy) {
		t.Errorf("%s: the tool list not taken off the record an older ingest wrote: %+v", c, doc)
	}

	// The catalog, fetched again unchanged, writes a and f and their tools
	// again: those they declare, their endpoints listing none now.
	e.sync(cat)
	if doc := e.toolDocOf(a); !slices.Equal(toolNames(doc), []string{"ocr"}) {
		t.Errorf("%s: lost tool document not written again at its catalog's next fetch: %+v", a, doc)
	}
	if doc := e.toolDocOf(f); !slices.Equal(toolNames(doc), []string{"summarize"}) || doc.Tools.Source != normalize.ToolsDeclared {
		t.Errorf("%s: lost tool document not written again at its catalog's next fetch from the tools it declares: %+v", f, doc)
	}
}

// TestToolsDeclaredKept: the tools a server card declares stand while its
// endpoint lists none; a list read from the endpoint replaces them whole
// (a declared tool it does not list leaves the index, as does a listed
// tool that vanishes); and when the endpoint stops listing (gated, not
// MCP: SetTools nil) the declared tools are back at once, in the record
// and the tools index, across an unchanged refetch and a restart. The
// declared tools live on the tool document (once: not when it shows them),
// never on the stored record. A record an older ingest wrote without its
// declared tools has them back at its catalog's next fetch, unchanged as
// it is.
func TestToolsDeclaredKept(t *testing.T) {
	e := newEnv(t, Config{})
	const origin = "https://declared.test/.well-known/ai-catalog.json"
	a := "urn:air:declared.test:mcp:a"
	cat := withTools(catalog(t, origin, manifest(entry(a, "A", "an archive", "2026-01-01"))), a, "archive_search", "archive_fetch")
	e.sync(cat)
	declared := []string{"archive_search", "archive_fetch"}
	shows := func(step string, names []string, source string) {
		t.Helper()
		d := e.toolDocOf(a)
		if got := toolNames(d); !slices.Equal(got, names) || d.Tools.Source != source {
			t.Fatalf("%s: tool document lists %v (%+v), want %v from %s", step, got, d, names, source)
		}
		if rec := e.doc(a); rec == nil || rec.ToolsKey != normalize.ToolsKey(d.Tools) || rec.DeclaredTools != nil {
			t.Fatalf("%s: the stored record %+v does not hold the tool document's ToolsKey, or holds declared tools", step, rec)
		}
		if got := toolNames(&toolDoc{Tools: normalize.StoredDeclared(d.Tools, d.Declared)}); !slices.Equal(got, declared) {
			t.Fatalf("%s: the tool document keeps the declared tools %v, want %v", step, got, declared)
		}
		if source == normalize.ToolsDeclared && d.Declared != nil {
			t.Fatalf("%s: the tool document shows its declared tools and holds them a second time: %+v", step, d.Declared)
		}
	}
	set := func(ts *normalize.ToolSet) {
		t.Helper()
		if held, err := e.ix.SetTools(t.Context(), a, origin, ts); err != nil || !held {
			t.Fatalf("SetTools: %v, %v", held, err)
		}
		e.flush()
	}
	shows("written from the catalog", declared, normalize.ToolsDeclared)

	set(listedTools("archive_fetch", "archive_export"))
	shows("listed", []string{"archive_fetch", "archive_export"}, normalize.ToolsListed)
	if w := toolWords(e.toolDocOf(a)); strings.Contains(w, "search") {
		t.Errorf("listed: the tool document's words %q keep archive_search, which the endpoint does not list", w)
	}
	set(listedTools("archive_fetch"))
	shows("a listed tool vanished", []string{"archive_fetch"}, normalize.ToolsListed)

	set(nil)
	shows("the endpoint went gated", declared, normalize.ToolsDeclared)
	if w := toolWords(e.toolDocOf(a)); !strings.Contains(w, "search") {
		t.Errorf("gated: the tool document's words %q lack archive_search", w)
	}
	e.sync(cat)
	shows("an unchanged refetch", declared, normalize.ToolsDeclared)

	if err := e.ix.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.open(Config{})
	set(listedTools("archive_export"))
	shows("listed after a restart", []string{"archive_export"}, normalize.ToolsListed)
	set(nil)
	shows("gated after a restart", declared, normalize.ToolsDeclared)

	t.Run("a tool document written before tool documents kept the declared tools", func(t *testing.T) {
		set(listedTools("archive_export"))
		task, err := e.client.Index(normalize.ToolsIndex(e.index)).UpdateDocuments([]map[string]any{{"id": normalize.DocID(a), normalize.FieldDeclaredTools: nil}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := meilitest.Wait(e.client, task.TaskUID); err != nil {
			t.Fatal(err)
		}
		set(nil)
		if d := e.toolDocOf(a); d != nil {
			t.Fatalf("no declared tools known, yet a tool document: %+v", d)
		}
		e.sync(cat)
		shows("its catalog's next fetch, unchanged", declared, normalize.ToolsDeclared)
	})

	t.Run("a record stored with its declared tools on it", func(t *testing.T) {
		set(listedTools("archive_export"))
		kept := e.toolDocOf(a).Declared
		// As the ingest of 92926ae left it: the declared tools on the record,
		// a tool document of version 3 without them (nor word sets).
		for _, w := range []struct {
			index string
			patch map[string]any
		}{
			{e.index, map[string]any{"id": normalize.DocID(a), normalize.FieldDeclaredTools: kept}},
			{normalize.ToolsIndex(e.index), map[string]any{"id": normalize.DocID(a), normalize.FieldDeclaredTools: nil, normalize.FieldToolWordSets: nil, normalize.FieldToolDocVersion: 3}},
		} {
			task, err := e.client.Index(w.index).UpdateDocuments([]map[string]any{w.patch}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := meilitest.Wait(e.client, task.TaskUID); err != nil {
				t.Fatal(err)
			}
		}
		if rec := e.doc(a); rec.DeclaredTools == nil {
			t.Fatal("the older record's declared tools not stored for the test")
		}
		if err := e.ix.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		e.open(Config{})
		if d := e.toolDocOf(a); d.Version != normalize.ToolDocVersion || d.WordSets == "" {
			t.Errorf("the tool document of version 3 not written again at start: version %d, word sets %q", d.Version, d.WordSets)
		}
		shows("moved at start", []string{"archive_export"}, normalize.ToolsListed)
		set(nil)
		shows("gated after the move", declared, normalize.ToolsDeclared)
	})
}

// flush waits until everything queued is written.
func (e *env) flush() {
	e.t.Helper()
	if err := e.ix.Flush(e.t.Context()); err != nil {
		e.t.Fatalf("Flush: %v", err)
	}
}

// TestToolsIndexWriteFailureRepaired: a tools index write Meilisearch
// refuses loses nothing: the records are written all the same (without
// their lists, which live in the tools index alone), and the tool
// documents are written from the lists the refused write held at the next
// commit once the tools index takes them.
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
	if d := e.doc(a); d == nil || d.ToolsKey == "" {
		t.Fatalf("the record was not written when its tool document was refused: %+v", d)
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

// TestToolsIndexDisplaysNoLists: the tools index displays the members a
// search retrieves alone (normalize.ToolDisplayedFields): a search of it
// reads no tool list, the documents route reads the list whole; a tools
// index an older ingest set up displaying every member is brought in step
// at start.
func TestToolsIndexDisplaysNoLists(t *testing.T) {
	e := newEnv(t, Config{})
	const origin = "https://shown.test/.well-known/ai-catalog.json"
	a := "urn:air:shown.test:agent:a"
	e.sync(withTools(catalog(t, origin, manifest(entry(a, "A", "first", "2026-01-01"))), a, "ocr"))
	tools := e.client.Index(normalize.ToolsIndex(e.index))
	check := func(when string) {
		t.Helper()
		s, err := tools.GetSettingsWithContext(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got, want := slices.Sorted(slices.Values(s.DisplayedAttributes)), slices.Sorted(slices.Values(normalize.ToolDisplayedFields()))
		if !slices.Equal(got, want) {
			t.Errorf("%s: the tools index displays %v, want %v", when, got, want)
		}
		res, err := tools.SearchWithContext(t.Context(), "ocr", &meilisearch.SearchRequest{AttributesToRetrieve: []string{normalize.FieldIdentifier, normalize.FieldTools}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 1 || string(res.Hits[0][normalize.FieldIdentifier]) != `"`+a+`"` || res.Hits[0][normalize.FieldTools] != nil {
			t.Errorf("%s: a search of the tools index retrieved %s, want %s without its tool list", when, res.Hits, a)
		}
		if names := toolNames(e.toolDocOf(a)); !slices.Equal(names, []string{"ocr"}) {
			t.Errorf("%s: the documents route reads the tool list %v, want [ocr]", when, names)
		}
	}
	check("after the first start")

	task, err := tools.UpdateDisplayedAttributesWithContext(t.Context(), &[]string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(e.client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.ix.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.open(Config{})
	check("after a start on a tools index displaying every member")
}
