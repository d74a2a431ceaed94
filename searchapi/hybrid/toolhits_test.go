package hybrid

import (
	"context"
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
	"github.com/agentfinder/agentfinder/searchapi/filter"
)

// toolDoc is a tools index document: a server's identifier, one of its
// filterable fields, its tool words, its tools' word sets and its tool
// list.
type toolDoc struct {
	ID           string             `json:"id"`
	Identifier   string             `json:"identifier"`
	Type         string             `json:"type"`
	ToolWords    string             `json:"toolWords"`
	ToolWordSets string             `json:"toolWordSets"`
	Tools        *normalize.ToolSet `json:"tools"`
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
		// As ingest's: no search of it retrieves a tool list.
		DisplayedAttributes: normalize.ToolDisplayedFields(),
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
	words, sets := normalize.ToolWordsAndSets(geocode)
	docs := []toolDoc{{"b", "urn:ai:b.test:agent:weather", "agent", words, sets, geocode}}
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

// Index passes document reads to c, recording the index as
// "documents:" and its uid.
func (c *toolsClient) Index(uid string) meilisearch.IndexManager {
	c.mu.Lock()
	c.calls = append(c.calls, []string{"documents:" + uid})
	c.mu.Unlock()
	return c.c.Index(uid)
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
	if counts, ok := st.ToolHolds([]string{"geocode", "address", "forecast"}); st.Words != "geocode street address latitude longitude forecast" || !ok || !slices.Equal(counts, []int{2, 1}) {
		t.Errorf("the weather agent's tools: words %q, word sets answer %v (%v), want its words and, for geocode and forecast, 2 and 1 of the terms", st.Words, counts, ok)
	}
	// The records' multi-search and the tools queries': no tool list read.
	var named []string
	for _, u := range c.calls {
		named = append(named, strings.Join(u, "+"))
	}
	slices.Sort(named)
	want := []string{index, tools}
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

// TestReadToolLists: the tool lists of the servers asked for are read in
// one request, by the documents route (the tools index, as ingest's,
// displays no list to searches), decoded, under the filter given (a
// server it refuses is not read), and none when none is asked for.
func TestReadToolLists(t *testing.T) {
	srv, _, tools := newToolIndex(t)
	ctx := context.Background()
	const weather = "urn:ai:b.test:agent:weather"
	c := &toolsClient{c: srv.Client, tools: tools}
	got, err := ReadToolLists(ctx, c, tools, "identifier", filter.Eq("type", "agent"), []string{weather, "urn:ai:none.test:agent:x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[weather]) != 2 || got[weather][0].Name != "geocode" || got[weather][1].Name != "forecast" {
		t.Errorf("lists %+v, want the weather agent's two tools", got)
	}
	if want := [][]string{{"documents:" + tools}}; !reflect.DeepEqual(c.calls, want) {
		t.Errorf("requests %v, want %v (one read by the documents route)", c.calls, want)
	}
	if got, err := ReadToolLists(ctx, c, tools, "identifier", filter.Eq("type", "mcp"), []string{weather}); err != nil || len(got) != 0 {
		t.Errorf("under a filter refusing it: %+v (%v), want none", got, err)
	}
	c.calls = nil
	if got, err := ReadToolLists(ctx, c, tools, "identifier", "", nil); err != nil || got != nil || len(c.calls) != 0 {
		t.Errorf("no servers: %+v (%v), %d requests, want none", got, err, len(c.calls))
	}
}

// TestToolHolds: what a server's word sets say each tool holds is what
// its tool's own words hold (ListHolds), for terms held by one tool, by
// both, by none, and stems; a server whose answer carried no word sets
// (an index an older ingest wrote) says it cannot tell.
func TestToolHolds(t *testing.T) {
	list := []normalize.Tool{
		{Name: "pdf_to_markdown", Title: "PDF to Markdown", Description: "Convert a PDF document into clean Markdown text."},
		{Name: "markdown_lint", Description: "Check Markdown files for style problems."},
		{Name: "ocr", Description: "Scan images; convert them to text."},
		{Name: "!!!"},
	}
	st := NewServerTools(list)
	for _, terms := range [][]string{{"convert", "pdf", "markdown"}, {"markdowns"}, {"text", "image"}, {"weather"}, {"checks", "files", "problem"}, nil} {
		counts, ok := st.ToolHolds(terms)
		if !ok || len(counts) != len(list) {
			t.Fatalf("%v: %v (%v), want a count for each of %d tools", terms, counts, ok, len(list))
		}
		for i, tool := range list {
			if want := ListHolds(tool, terms); counts[i] != want {
				t.Errorf("%v: tool %s holds %d by its word set, %d by its words", terms, tool.Name, counts[i], want)
			}
		}
	}
	if counts, _ := st.ToolHolds([]string{"convert", "markdown"}); !slices.Equal(counts, []int{2, 1, 1, 0}) {
		t.Errorf("convert markdown: %v, want [2 1 1 0] (the test shows nothing otherwise)", counts)
	}
	if _, ok := (&ServerTools{Words: "pdf"}).ToolHolds([]string{"pdf"}); ok {
		t.Error("no word sets: ToolHolds says it can tell")
	}
	if words, sets := normalize.ToolWordsAndSets(&normalize.ToolSet{Items: list}); st.Words != words || st.sets != sets {
		t.Error("NewServerTools: want the words and word sets the tools index holds of the list")
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
	docs := []toolDoc{{ID: "c", Identifier: "urn:ai:c.test:agent:joined", Type: "agent", ToolWords: normalize.ToolWords(joined), Tools: joined}}
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
