package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/embed"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/query"
)

// TestToolEval measures tool-level requests (make eval): the relevance
// set's entries become the tools of MCP servers, one server per publisher
// of the set, whose own name and description say nothing of them; each dev
// request (written for one entry) has the server holding that tool as its
// answer. The same servers are indexed twice, with their tool lists (the
// tool index) and without, and Recall@1/@10 of each is printed.
//
//	AGENTFINDER_TOOL_EVAL=1 AGENTFINDER_MODEL_DIR=$PWD/.cache/model \
//	  bash .ci/with-meilisearch.sh go test -count=1 -run TestToolEval -v ./searchapi/search
func TestToolEval(t *testing.T) {
	if os.Getenv("AGENTFINDER_TOOL_EVAL") == "" {
		t.Skip("set AGENTFINDER_TOOL_EVAL=1 (make eval does)")
	}
	dir := envOr("AGENTFINDER_RELEVANCE_DIR", "../../fixtures/relevance")
	m := evalModel(t)
	servers, serverOf := evalToolServers(relevanceCatalogs(t, dir))
	qs := readDumpQueries(t, filepath.Join(dir, "dev_queries.jsonl"), "dev")
	fmt.Printf("tool eval: %d servers holding %d tools, %d requests\n", len(servers), len(serverOf), len(qs))
	for _, withTools := range []bool{true, false} {
		srv := toolEvalServer(t, m, servers, withTools)
		var n, at1, at10 int
		for _, q := range qs {
			want := ""
			for _, g := range q.Gold {
				if s, ok := serverOf[g]; ok {
					want = s
				}
			}
			if want == "" {
				continue
			}
			n++
			zero := 0
			ans, err := srv.Search(context.Background(), &Query{Text: q.Text, PageSize: 10, Mode: federation.ModeNone, MinScore: &zero}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, h := range ans.Hits {
				if h.Identifier == want {
					at10++
					if i == 0 {
						at1++
					}
					break
				}
			}
		}
		label := map[bool]string{true: "with the tool index", false: "without it"}[withTools]
		fmt.Printf("tool eval %-20s Recall@1 %.3f  Recall@10 %.3f  (%d requests)\n", label, float64(at1)/float64(n), float64(at10)/float64(n), n)
		if n == 0 {
			t.Fatal("no request has a tool of the set as its answer")
		}
	}
}

// evalToolServers turns the set's entries into tools of one MCP server per
// catalog host, and says which server holds each entry.
func evalToolServers(cats []normalize.CatalogResult) ([]normalize.CatalogResult, map[string]string) {
	serverOf := map[string]string{}
	var out []normalize.CatalogResult
	for i, c := range cats {
		host := hostOf(c.Catalog)
		id := "urn:ai:" + host + ":mcp:toolbox"
		ts := &normalize.ToolSet{Source: normalize.ToolsListed, ReadAt: time.Now().UTC()}
		for _, r := range c.Records {
			ts.Items = append(ts.Items, normalize.Tool{Name: toolName(r.DisplayName), Title: r.DisplayName, Description: r.Description})
			serverOf[r.Identifier] = id
		}
		ts.Listed = len(ts.Items)
		rec := normalize.Record{Identifier: id, DisplayName: fmt.Sprintf("Toolbox %02d", i+1), Type: normalize.TypeMCP,
			Description: "An MCP server with several tools.", Publisher: host, Protocols: []string{"mcp"},
			Bindings: []normalize.Binding{{Protocol: "mcp", URL: "https://" + host + "/mcp", Transport: "streamable-http"}},
			Tools:    ts}
		out = append(out, normalize.CatalogResult{Catalog: "https://" + host + "/tools-catalog.json", Status: normalize.StatusOK,
			FetchedAt: time.Now(), Records: []normalize.Record{rec}})
	}
	return out, serverOf
}

func hostOf(u string) string {
	u = strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	h, _, _ := strings.Cut(u, "/")
	return h
}

// toolName is a tool name made of a display name ("Avatar Video" ->
// "avatar_video").
func toolName(display string) string {
	return strings.Join(normalize.Words(display), "_")
}

// toolEvalServer indexes servers (with their tools or without) through
// ingest and returns an Engine over them.
func toolEvalServer(t *testing.T, m *embed.Model, servers []normalize.CatalogResult, withTools bool) *Engine {
	t.Helper()
	ctx := context.Background()
	ms := meilitest.Connect(t)
	name := meilitest.NewIndexName("tooleval")
	ix, err := ingest.New(ctx, ms.Client, ingest.Config{Index: name, Embedder: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, uid := range []string{name, name + "_sources", normalize.ToolsIndex(name)} {
			if task, err := ms.Client.DeleteIndex(uid); err == nil {
				_ = meilitest.Wait(ms.Client, task.TaskUID)
			}
		}
	})
	for _, res := range servers {
		res.Records = slices.Clone(res.Records)
		if !withTools {
			res.Records[0].Tools = nil
		}
		if err := ix.Put(ctx, res); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Close(ctx); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Index: name, Meili: ms.Client, Embedder: m, QueryRewriter: query.Rewrite,
		PublicURL: "https://finder.test.example", PageTokenKey: []byte("k")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}
