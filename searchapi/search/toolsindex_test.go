package search

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/query"
)

// toolServer is an MCP server of the tools index tests: its own text says
// nothing of its one tool.
func toolServer(host, tool, desc string, mark func(*normalize.Record)) normalize.Record {
	r := normalize.Record{Identifier: "urn:ai:" + host + ":mcp:box", DisplayName: "Box of " + host, Type: normalize.TypeMCP,
		Description: "An MCP server.", Publisher: host, Protocols: []string{"mcp"},
		Tools: &normalize.ToolSet{Source: normalize.ToolsListed, Listed: 1, ReadAt: time.Now().UTC(),
			Items: []normalize.Tool{{Name: tool, Description: desc}}}}
	if mark != nil {
		mark(&r)
	}
	return r
}

// toolsEngine indexes recs through ingest (which keeps the tools index)
// and returns an Engine over them, keyword only.
func toolsEngine(t *testing.T, recs []normalize.Record) *Engine {
	t.Helper()
	ctx := context.Background()
	ms := meilitest.Connect(t)
	name := meilitest.NewIndexName("toolsidx")
	t.Cleanup(func() {
		for _, uid := range []string{name, name + "_sources", normalize.ToolsIndex(name)} {
			if task, err := ms.Client.DeleteIndex(uid); err == nil {
				_ = meilitest.Wait(ms.Client, task.TaskUID)
			}
		}
	})
	ix, err := ingest.New(ctx, ms.Client, ingest.Config{Index: name})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		// Each from its publisher's own host, which may speak for it.
		res := normalize.CatalogResult{Catalog: "https://" + r.Publisher + "/tools-catalog.json", Status: normalize.StatusOK, FetchedAt: time.Now(), Records: []normalize.Record{r}}
		if err := ix.Put(ctx, res); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Close(ctx); err != nil {
		t.Fatal(err)
	}
	eng, err := New(Config{Index: name, Meili: ms.Client, QueryRewriter: query.Rewrite, PublicURL: "https://finder.test.example", PageTokenKey: []byte("k")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// toolAnswer runs the POST /search body (query members and more) as
// caller groups access, and returns the identifiers found and the tools
// the answer names, each as identifier/tool.
func toolAnswer(t *testing.T, eng *Engine, body string, access []string) (ids, named []string) {
	t.Helper()
	var req Request
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	q, err := ParseRequest(&req, []byte(body), true)
	if err != nil {
		t.Fatal(err)
	}
	q.Access = access
	ans, err := eng.Search(context.Background(), q, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range ans.Hits {
		ids = append(ids, h.Identifier)
		var tools []MatchedTool
		_ = json.Unmarshal(h.Entry[FieldMatchedTools], &tools)
		for _, m := range tools {
			named = append(named, h.Identifier+"/"+m.Name)
		}
	}
	// A tool-level request (GET /tools, MCP find_tool) of the same text.
	var text struct {
		Query struct {
			Text string `json:"text"`
		} `json:"query"`
	}
	_ = json.Unmarshal([]byte(body), &text)
	tq, limit, err := ToolsQuery(text.Query.Text, 0)
	if err != nil {
		t.Fatal(err)
	}
	tq.Access = access
	tq.Groups = q.Groups
	tq.IncludeStale = q.IncludeStale
	tans, err := eng.Search(context.Background(), tq, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ToolPairs(tq, tans, limit, nil).Results {
		if !slices.Contains(named, p.Server.Identifier+"/"+p.Tool.Name) {
			t.Errorf("%s: the tool-level request names %s/%s, POST /search does not", body, p.Server.Identifier, p.Tool.Name)
		}
	}
	return ids, named
}

// TestToolsIndexFilters: the tools index answers a search under the same
// filter as the records: a server only a group may see, an expired one,
// one of another type or publisher than the request asks for is found by
// no tool of its own, and its tools are named to no one who may not see
// it; the same tools are found and named where the filter admits them.
func TestToolsIndexFilters(t *testing.T) {
	const text = "parse zebrafinch invoices"
	open := toolServer("open.test", "pdf_to_markdown", "Convert PDF files to markdown.", nil)
	hidden := toolServer("hidden.test", "zebrafinch_invoices", "Parse zebrafinch invoices into ledger rows.", func(r *normalize.Record) {
		r.Visibility = []string{"hr"}
	})
	expired := toolServer("expired.test", "zebrafinch_invoice_reader", "Parse zebrafinch invoices from scans.", func(r *normalize.Record) {
		r.ExpiresAt = "2020-01-01T00:00:00Z"
	})
	agent := toolServer("agent.test", "zebrafinch_invoice_agent", "Parse zebrafinch invoices by chat.", func(r *normalize.Record) {
		r.Type = normalize.TypeA2A
		r.Protocols = []string{"a2a"}
	})
	eng := toolsEngine(t, []normalize.Record{open, hidden, expired, agent})
	body := func(extra string) string {
		return fmt.Sprintf(`{"query":{"text":%q,"federation":"none"%s},"pageSize":10,"minScore":0}`, text, extra)
	}

	ids, named := toolAnswer(t, eng, body(""), nil)
	if slices.Contains(ids, hidden.Identifier) || slices.ContainsFunc(named, func(n string) bool { return n == hidden.Identifier+"/zebrafinch_invoices" }) {
		t.Errorf("anonymous: the hidden server's tool leaks: results %v, tools %v", ids, named)
	}
	if slices.Contains(ids, expired.Identifier) {
		t.Errorf("anonymous: the expired server is found by its tool: %v", ids)
	}
	if !slices.Contains(named, agent.Identifier+"/zebrafinch_invoice_agent") {
		t.Errorf("anonymous: the public A2A server's tool is not named: %v (the filters below prove nothing)", named)
	}

	ids, named = toolAnswer(t, eng, body(""), []string{"hr"})
	if !slices.Contains(named, hidden.Identifier+"/zebrafinch_invoices") {
		t.Errorf("hr: the hidden server's tool is not named: results %v, tools %v", ids, named)
	}

	ids, _ = toolAnswer(t, eng, body(`,"type":"application/mcp-server+json"`), []string{"hr"})
	if slices.Contains(ids, agent.Identifier) {
		t.Errorf("type mcp: the A2A server is found by its tool: %v", ids)
	}
	if !slices.Contains(ids, hidden.Identifier) {
		t.Errorf("type mcp: the hidden MCP server is not found by its tool for hr: %v", ids)
	}

	ids, _ = toolAnswer(t, eng, body(`,"publisher":"agent.test"`), []string{"hr"})
	if !slices.Equal(ids, []string{agent.Identifier}) {
		t.Errorf("publisher agent.test: results %v, want only %s", ids, agent.Identifier)
	}

	ids, _ = toolAnswer(t, eng, body(""), []string{"hr"})
	if slices.Contains(ids, expired.Identifier) {
		t.Errorf("hr: the expired server is found by its tool: %v", ids)
	}
}

// TestToolsIndexGone: a tools index deleted after the engine found it
// costs a search nothing but its tools: the search that meets it gone,
// unfiltered (one fused search) or filtered (the filtered and the base
// search together), answers again without it instead of failing.
func TestToolsIndexGone(t *testing.T) {
	const text = "parse zebrafinch invoices"
	srv := toolServer("agent.test", "zebrafinch_invoice_agent", "Parse zebrafinch invoices by chat.", nil)
	eng := toolsEngine(t, []normalize.Record{srv})
	filtered, err := New(eng.cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	unfilteredBody := fmt.Sprintf(`{"query":{"text":%q,"federation":"none"},"pageSize":10,"minScore":0}`, text)
	filteredBody := fmt.Sprintf(`{"query":{"text":%q,"federation":"none","publisher":"agent.test"},"pageSize":10,"minScore":0}`, text)
	want := srv.Identifier + "/zebrafinch_invoice_agent"
	for _, c := range []struct {
		name string
		eng  *Engine
		body string
	}{{"unfiltered", eng, unfilteredBody}, {"filtered", filtered, filteredBody}} {
		if _, named := toolAnswer(t, c.eng, c.body, nil); !slices.Contains(named, want) {
			t.Fatalf("%s, before: the tool is not named (%v): the engine did not search the tools index", c.name, named)
		}
	}

	ms := meilitest.Connect(t)
	task, err := ms.Client.DeleteIndex(normalize.ToolsIndex(eng.cfg.Index))
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		eng  *Engine
		body string
	}{{"unfiltered", eng, unfilteredBody}, {"filtered", filtered, filteredBody}} {
		// toolAnswer fails the test when the search fails.
		if _, named := toolAnswer(t, c.eng, c.body, nil); slices.Contains(named, want) {
			t.Errorf("%s, after: the tool is named (%v) with its tools index gone", c.name, named)
		}
		if c.eng.tools.exists.Load() {
			t.Errorf("%s, after: the engine still takes the tools index for present", c.name)
		}
	}
}

// TestToolsIndexLookFailed: a look at the tools index that fails for
// another reason than the index missing (here the caller left) does not
// make the engine take it for missing: the next caller's whole record
// comes with its tools, and its search names them.
func TestToolsIndexLookFailed(t *testing.T) {
	const text = "parse zebrafinch invoices"
	srv := toolServer("agent.test", "zebrafinch_invoice_agent", "Parse zebrafinch invoices by chat.", nil)
	base := toolsEngine(t, []normalize.Record{srv})
	cfg := base.cfg
	at := time.Now()
	cfg.Now = func() time.Time { return at } // within toolsRecheck of the failed look
	eng, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	eng.toolIndex(gone)

	doc, err := eng.Agent(context.Background(), srv.Identifier, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tools normalize.ToolSet
	if err := json.Unmarshal(doc[normalize.FieldTools], &tools); err != nil || len(tools.Items) != 1 || tools.Items[0].Name != "zebrafinch_invoice_agent" {
		t.Errorf("Agent after a failed look: tools %s (%v), want its one tool", doc[normalize.FieldTools], err)
	}
	body := fmt.Sprintf(`{"query":{"text":%q,"federation":"none"},"pageSize":10,"minScore":0}`, text)
	if _, named := toolAnswer(t, eng, body, nil); !slices.Contains(named, srv.Identifier+"/zebrafinch_invoice_agent") {
		t.Errorf("search after a failed look: the tool is not named (%v)", named)
	}
}
