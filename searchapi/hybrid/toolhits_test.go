package hybrid

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

// toolDoc is a tools index document: a server's identifier, one of its
// filterable fields, its tool words and its tool list.
type toolDoc struct {
	ID         string             `json:"id"`
	Identifier string             `json:"identifier"`
	Type       string             `json:"type"`
	ToolWords  string             `json:"toolWords"`
	Tools      *normalize.ToolSet `json:"tools"`
}

// newToolIndex builds the records of newIndex and a tools index beside
// them where the weather agent's tools geocode street addresses (words its
// own text does not hold).
func newToolIndex(t *testing.T) (*meilitest.Server, string, string) {
	t.Helper()
	srv, index := newIndex(t)
	_, tools := meilitest.Index(t, "hybridtools")
	ti := srv.Client.Index(tools)
	task, err := ti.UpdateSettings(&meilisearch.Settings{
		SearchableAttributes: []string{normalize.FieldToolWords},
		FilterableAttributes: []string{"identifier", "type"},
		RankingRules:         []string{"words"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(srv.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	geocode := &normalize.ToolSet{Items: []normalize.Tool{
		{Name: "geocode", Description: "street address latitude longitude"},
		{Name: "forecast"},
	}}
	docs := []toolDoc{{"b", "urn:ai:b.test:agent:weather", "agent", normalize.ToolWords(geocode), geocode}}
	if task, err = ti.AddDocuments(docs, nil); err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(srv.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	return srv, index, tools
}

// toolsClient passes multi-searches to c, recording the indexes each
// names; a multi-search naming the tools index fails with fail when set,
// or waits for its context's end when block is set (at most 10 seconds).
type toolsClient struct {
	c      Client
	tools  string
	fail   error
	block  bool
	failed error // the records' multi-searches fail with it when set

	mu       sync.Mutex
	calls    [][]string
	canceled bool
}

func (c *toolsClient) MultiSearchWithContext(ctx context.Context, q *meilisearch.MultiSearchRequest) (*meilisearch.MultiSearchResponse, error) {
	var uids []string
	for _, s := range q.Queries {
		if !slices.Contains(uids, s.IndexUID) {
			uids = append(uids, s.IndexUID)
		}
	}
	c.mu.Lock()
	c.calls = append(c.calls, uids)
	c.mu.Unlock()
	if !slices.Contains(uids, c.tools) {
		if c.failed != nil {
			return nil, c.failed
		}
		return c.c.MultiSearchWithContext(ctx, q)
	}
	if c.block {
		select {
		case <-ctx.Done():
			c.mu.Lock()
			c.canceled = true
			c.mu.Unlock()
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return nil, errors.New("toolsClient: never canceled")
		}
	}
	if c.fail != nil {
		return nil, c.fail
	}
	return c.c.MultiSearchWithContext(ctx, q)
}

// TestToolsSentApart: the tools sub-queries go in a multi-search of their
// own (the records' names the records index alone), and a server its
// tools alone tie to the request's words is found, its tool words and
// tools read, each tool's words beside it.
func TestToolsSentApart(t *testing.T) {
	srv, index, tools := newToolIndex(t)
	ctx := context.Background()
	c := &toolsClient{c: srv.Client, tools: tools}
	r := Request{Index: index, ToolIndex: tools, Text: "geocode a street address"}
	got, err := Search(ctx, c, r)
	if err != nil {
		t.Fatal(err)
	}
	if got.ToolErr != nil {
		t.Fatalf("ToolErr = %v", got.ToolErr)
	}
	const weather = "urn:ai:b.test:agent:weather"
	if !slices.Contains(ids(got), weather) || got.Tools[weather] == nil {
		t.Fatalf("hits %v, tools %v: want the weather agent, found by its tools", ids(got), got.Tools)
	}
	st := got.Tools[weather]
	wantWords := []string{"geocode street address latitude longitude", "forecast"}
	if list, words := st.List(); st.Words != "geocode street address latitude longitude forecast" || len(list) != 2 || list[0].Name != "geocode" || !reflect.DeepEqual(words, wantWords) {
		t.Errorf("the weather agent's tools %+v (words %q): want its words, its two tools and their words %q", list, words, wantWords)
	}
	// The records' multi-search, the tools queries', then the tools' lists.
	var named []string
	for _, u := range c.calls {
		named = append(named, strings.Join(u, "+"))
	}
	slices.Sort(named)
	want := []string{index, tools, tools}
	slices.Sort(want)
	if !slices.Equal(named, want) {
		t.Errorf("multi-searches named %v, want %v (the tools apart)", named, want)
	}
	without, err := Search(ctx, srv.Client, Request{Index: index, Text: r.Text})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(ids(without), weather) {
		t.Errorf("without tools the weather agent is found (%v): the test shows nothing", ids(without))
	}
}

// TestToolsFailureKeepsRecords: a tools search that fails leaves a search
// (plain or scaled) the records' answers, exactly those of a search
// without tools, and says why.
func TestToolsFailureKeepsRecords(t *testing.T) {
	srv, index, tools := newToolIndex(t)
	ctx := context.Background()
	boom := errors.New("tools down")
	c := &toolsClient{c: srv.Client, tools: tools, fail: boom}
	for _, vec := range [][]float32{{0.6, 0, 0.8}, nil} {
		plain := Request{Index: index, Text: "geocode daily hotel rates", Vector: vec}
		got, err := Search(ctx, c, Request{Index: index, ToolIndex: tools, Text: plain.Text, Vector: vec})
		if err != nil {
			t.Fatal(err)
		}
		want, err := Search(ctx, srv.Client, plain)
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(got.ToolErr, boom) {
			t.Errorf("vector %v: ToolErr = %v, want %v", vec != nil, got.ToolErr, boom)
		}
		got.ToolErr = nil
		if !reflect.DeepEqual(got, want) || len(got.Hits) == 0 {
			t.Errorf("vector %v: with the tools failing %+v, want the records' alone %+v", vec != nil, got, want)
		}
		filtered := plain
		filtered.Filter = "type = mcp"
		base, scaled := plain, filtered
		base.ToolIndex, scaled.ToolIndex = tools, tools
		gb, gs, err := Scaled(ctx, c, base, scaled)
		if err != nil {
			t.Fatal(err)
		}
		wb, ws, err := Scaled(ctx, srv.Client, plain, filtered)
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(gb.ToolErr, boom) || !errors.Is(gs.ToolErr, boom) {
			t.Errorf("vector %v: scaled ToolErr = %v / %v", vec != nil, gb.ToolErr, gs.ToolErr)
		}
		gb.ToolErr, gs.ToolErr = nil, nil
		if !reflect.DeepEqual(gb, wb) || !reflect.DeepEqual(gs, ws) || len(gs.Hits) == 0 {
			t.Errorf("vector %v: scaled with the tools failing %+v / %+v, want %+v / %+v", vec != nil, gb, gs, wb, ws)
		}
	}
}

// TestToolsCanceledWithSearch: when the records' search fails, the tools
// search still running is canceled and has ended when Search returns.
func TestToolsCanceledWithSearch(t *testing.T) {
	srv, index, tools := newToolIndex(t)
	boom := errors.New("records down")
	c := &toolsClient{c: srv.Client, tools: tools, block: true, failed: boom}
	start := time.Now()
	_, err := Search(context.Background(), c, Request{Index: index, ToolIndex: tools, Text: "geocode a street address"})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	c.mu.Lock()
	canceled, calls := c.canceled, len(c.calls)
	c.mu.Unlock()
	if !canceled || calls != 2 {
		t.Errorf("after Search: tools search canceled and ended %v, %d multi-searches (want 2)", canceled, calls)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Search took %v: it waited for the tools search instead of canceling it", d)
	}
}

// TestListQueries: the tool lists are read for the servers the request's
// rule (Request.NamesTools) admits, each once, under the filter of the
// query that found them; with no rule, for every server found.
func TestListQueries(t *testing.T) {
	hit := func(id string) meilisearch.Hit {
		return meilisearch.Hit{"identifier": json.RawMessage(`"` + id + `"`)}
	}
	a, b, c := &ServerTools{Words: "pdf ocr"}, &ServerTools{Words: "weather"}, &ServerTools{Words: "ocr"}
	servers := [][]*ServerTools{{a, b}, {a}, {c}}
	queries := []*meilisearch.SearchRequest{
		{IndexUID: "t", Filter: "type = agent"}, {IndexUID: "t", Filter: "type = agent"}, {IndexUID: "t", Filter: "type = mcp"},
	}
	results := []meilisearch.SearchResponse{
		{Hits: meilisearch.Hits{hit("a"), hit("b")}},
		{Hits: meilisearch.Hits{hit("a")}},
		{Hits: meilisearch.Hits{hit("c")}},
	}
	ocr := func(st *ServerTools) bool { return st.Holds("ocr") }
	got, err := listQueries(queries, results, servers, "identifier", ocr)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`(identifier IN ["a"]) AND (type = agent)`, `(identifier IN ["c"]) AND (type = mcp)`}
	if len(got) != 2 {
		t.Fatalf("%d list queries, want 2 (one a filter)", len(got))
	}
	for i, q := range got {
		if q.Filter != want[i] || q.Limit != 1 || q.IndexUID != "t" || !slices.Contains(q.AttributesToRetrieve, normalize.FieldTools) {
			t.Errorf("list query %d: %+v, want filter %q, limit 1, the tools retrieved", i, q, want[i])
		}
	}
	all, err := listQueries(queries, results, servers, "identifier", nil)
	if err != nil || len(all) != 2 || all[0].Limit != 2 {
		t.Errorf("no rule: %+v (%v), want a and b under the first filter", all, err)
	}
	if _, err := listQueries([]*meilisearch.SearchRequest{{IndexUID: "t", Filter: []string{"x"}}}, results[:1], servers[:1], "identifier", nil); err == nil {
		t.Error("a filter that is no string: no error")
	}
}

// TestServerToolsList: a tool list read is decoded on first use, each
// tool's words beside it; one that cannot be read leaves the server its
// words and no tools; one given decoded is kept as given.
func TestServerToolsList(t *testing.T) {
	st := &ServerTools{Words: "pdf to markdown convert a", list: json.RawMessage(`{"items": [{"name": "pdf_to_markdown", "description": "Convert a PDF."}]}`)}
	list, words := st.List()
	if len(list) != 1 || list[0].Name != "pdf_to_markdown" || !slices.Equal(words, []string{"pdf to markdown convert a pdf"}) || st.Words != "pdf to markdown convert a" {
		t.Errorf("decoded: %+v, words %q: want its tool and the tool's words, its words kept", list, words)
	}
	if again, _ := st.List(); len(again) != 1 || &again[0] != &list[0] {
		t.Errorf("a second List: %+v, want the list decoded once", again)
	}
	bad := &ServerTools{Words: "ocr", list: json.RawMessage(`{"items": 3}`)}
	if list, words := bad.List(); bad.Words != "ocr" || list != nil || len(words) != 0 {
		t.Errorf("a list that cannot be read: %+v, %q, want its words and no tools", list, words)
	}
	given := NewServerTools("ocr scan", []normalize.Tool{{Name: "ocr", Description: "Scan."}})
	if list, words := given.List(); len(list) != 1 || !slices.Equal(words, []string{"ocr scan"}) {
		t.Errorf("NewServerTools: %+v, %q, want its tool and the tool's words", list, words)
	}
}

// TestHoldsTerm: HoldsTerm, reading the words in place, and
// ServerTools.Holds, asked twice, answer as sameStem against each word
// split apart does, for words and terms where a term starts, ends or sits
// inside other words, equal, a stem of another or longer by one to four
// letters.
func TestHoldsTerm(t *testing.T) {
	words := []string{
		"", "pdf", "pdf markdown", "markdowns convert", "xpdf apdfb", "converting",
		"convertible converts", "geo geocode", "mark markdown", "marks", "a b c", "pdfs",
		"imarkdown", "markdownify", "convert", "transconvert convertx",
	}
	terms := []string{"pdf", "markdown", "markdowns", "convert", "converted", "geo", "mark", "marks", "a", "c", "pdfs", "markdownify", "conv"}
	for _, w := range words {
		st := &ServerTools{Words: w}
		for _, term := range terms {
			want := slices.ContainsFunc(strings.Fields(w), func(x string) bool { return sameStem(x, term) })
			if got := HoldsTerm(w, term); got != want {
				t.Errorf("HoldsTerm(%q, %q) = %v, want %v", w, term, got, want)
			}
			if got, again := st.Holds(term), st.Holds(term); got != want || again != want {
				t.Errorf("ServerTools{%q}.Holds(%q) = %v, then %v, want %v", w, term, got, again, want)
			}
		}
	}
	for _, c := range []struct {
		words, term string
		want        bool
	}{
		{"pdf markdown", "markdowns", true}, {"convert", "converting", true}, {"converting", "convert", true},
		{"convert", "convertible", false}, {"xpdf", "pdf", false}, {"pdfx", "pdf", false}, {"geocode", "geo", false},
		{"a b", "", false},
	} {
		if got := HoldsTerm(c.words, c.term); got != c.want {
			t.Errorf("HoldsTerm(%q, %q) = %v, want %v", c.words, c.term, got, c.want)
		}
	}
}

// TestToolQueriesWholeWords: the tools queries match the request's terms
// as whole words: a server whose tools hold two terms run together as one
// word ("weatherforecast", which Meilisearch's n-grams would read as
// "weather forecast") is not found, one holding a term as a word is.
func TestToolQueriesWholeWords(t *testing.T) {
	srv, index, tools := newToolIndex(t)
	joined := &normalize.ToolSet{Items: []normalize.Tool{{Name: "weatherforecast"}}}
	docs := []toolDoc{{"c", "urn:ai:c.test:agent:joined", "agent", normalize.ToolWords(joined), joined}}
	task, err := srv.Client.Index(tools).AddDocuments(docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(srv.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	got, err := Search(context.Background(), srv.Client, Request{Index: index, ToolIndex: tools, Text: "weather forecast", Terms: []string{"weather", "forecast"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.ToolErr != nil {
		t.Fatalf("ToolErr = %v", got.ToolErr)
	}
	if got.Tools["urn:ai:b.test:agent:weather"] == nil {
		t.Errorf("tools found %v: want the weather agent, whose tool is named forecast", slices.Collect(maps.Keys(got.Tools)))
	}
	if got.Tools["urn:ai:c.test:agent:joined"] != nil {
		t.Errorf("the server whose one tool word is weatherforecast was found: the terms were read as their concatenation")
	}
}
