package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
)

// childEnv makes the test binary run the agentfinder command line instead
// of the tests, so a test can start 'agentfinder mcp' as a real process.
const childEnv = "AGENTFINDER_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	// Run as the command line when asked to, or when started under its
	// name (the README test puts this binary on PATH as agentfinder).
	if os.Getenv(childEnv) == "1" || filepath.Base(os.Args[0]) == "agentfinder" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestMCPStdio starts 'agentfinder mcp --server URL' as a process against a
// running serve and drives it over stdio with the SDK's own client.
func TestMCPStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	web := crawlertest.Web(t, fixtures.Options{NoWorld: true})
	web.SetFile(e2eHost, wellKnown, shopCatalog(1))
	e := newE2EOn(t, web, []string{e2eHost})
	e.start()
	e.waitFor("the shop catalog to be indexed", 60*time.Second, func() (bool, string) {
		ids := e.search("invoices")
		return slices.Contains(ids, "urn:ai:e2e-shop.test:agent:quokka-invoicer"), strings.Join(ids, ",")
	})

	cmd := exec.Command(os.Args[0], "mcp", "--server", e.url(""), "--timeout", "10s")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to agentfinder mcp: %v", err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"explore", "find_tool", "get_agent", "search"}) {
		t.Fatalf("tools %v", names)
	}

	call := func(name string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("call %s: %v", name, err)
		}
		var out map[string]any
		if res.StructuredContent != nil {
			b, _ := json.Marshal(res.StructuredContent)
			_ = json.Unmarshal(b, &out)
		}
		return res, out
	}
	text := func(res *mcp.CallToolResult) string {
		var parts []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				parts = append(parts, tc.Text)
			}
		}
		return strings.Join(parts, "\n")
	}

	// search answers with what the registry's POST /search answers.
	res, got := call("search", map[string]any{"text": "invoices", "federation": "none"})
	var want map[string]any
	if code := e.do(http.MethodPost, "/search", map[string]any{"query": map[string]any{"text": "invoices", "federation": "none"}}, &want); code != http.StatusOK {
		t.Fatalf("POST /search: %d", code)
	}
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(got)
	if res.IsError || string(gotJSON) != string(wantJSON) {
		t.Fatalf("search over stdio:\n%s\nPOST /search:\n%s\ntext: %s", gotJSON, wantJSON, text(res))
	}
	if !strings.Contains(text(res), "urn:ai:e2e-shop.test:agent:quokka-invoicer") {
		t.Errorf("search text: %s", text(res))
	}
	res, rec := call("get_agent", map[string]any{"identifier": "urn:ai:e2e-shop.test:agent:quokka-invoicer"})
	if res.IsError || rec["displayName"] != "Quokka Invoicer" {
		t.Errorf("get_agent: %s", text(res))
	}
	res, ex := call("explore", map[string]any{"facets": []string{"tags"}})
	if res.IsError || ex["total"] == nil {
		t.Errorf("explore: %s", text(res))
	}
	// The registry's error codes come back as tool errors.
	res, _ = call("get_agent", map[string]any{"identifier": "urn:ai:e2e-shop.test:agent:nobody"})
	if !res.IsError || !strings.HasPrefix(text(res), "not_found:") {
		t.Errorf("unknown agent: %v %s", res.IsError, text(res))
	}
	res, _ = call("search", map[string]any{"text": "invoices", "pageToken": "forged"})
	if !res.IsError || !strings.HasPrefix(text(res), "invalid_request:") {
		t.Errorf("forged token: %v %s", res.IsError, text(res))
	}
}

func TestMCPCommandFlags(t *testing.T) {
	var stderr strings.Builder
	if code := mcpMain(t.Context(), []string{"--server", "ftp://x"}, func(string) (string, bool) { return "", false }, nil, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "not an absolute http(s) URL") {
		t.Errorf("bad server: %d %q", code, stderr.String())
	}
	stderr.Reset()
	if code := mcpMain(t.Context(), []string{"extra"}, func(string) (string, bool) { return "", false }, nil, io.Discard, &stderr); code != 2 {
		t.Errorf("extra argument: %d %q", code, stderr.String())
	}
}
