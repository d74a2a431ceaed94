package probe_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/ingest/embed"
	"github.com/agentfinder/agentfinder/normalize"
)

// searchHit is the part of a POST /search result the tool tests read.
type searchHit struct {
	Identifier   string `json:"identifier"`
	Score        int    `json:"score"`
	MatchedTools []struct {
		Name string `json:"name"`
	} `json:"matchedTools"`
	Tools    json.RawMessage `json:"tools"`
	Evidence struct {
		MatchedTools []struct {
			Name string `json:"name"`
		} `json:"matchedTools"`
		Liveness string `json:"liveness"`
	} `json:"evidence"`
}

func (l *live) search(body string) []searchHit {
	l.t.Helper()
	resp, err := http.Post(l.api.URL+"/search", "application/json", strings.NewReader(body))
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		l.t.Fatalf("POST /search %s: %d", body, resp.StatusCode)
	}
	var out struct {
		Results []searchHit `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		l.t.Fatal(err)
	}
	return out.Results
}

func hitIDs(hs []searchHit) []string {
	var ids []string
	for _, h := range hs {
		ids = append(ids, h.Identifier)
	}
	return ids
}

// toolModel loads the embedding model make test installs.
func toolModel(t *testing.T) *embed.Model {
	t.Helper()
	dir := os.Getenv("AGENTFINDER_MODEL_DIR")
	if dir == "" {
		dir = "../../.cache/model"
	}
	m, err := embed.Load(dir)
	if err != nil {
		t.Skipf("no embedding model in %s: %v", dir, err)
	}
	return m
}

// TestToolSearch: after a probe read tools.test's tools, a tool-level
// request finds the server whose tool does it, names the tool (results,
// evidence, GET /tools, the MCP find_tool tool), and a server whose
// endpoint is not live is ordered below live ones and says why.
func TestToolSearch(t *testing.T) {
	l := newLiveWith(t, toolModel(t))
	l.crawl(fixtures.HostTools)
	l.round()
	quill := []string{toolsID("sdk"), toolsID("slow")} // the same server twice: either may come first

	t.Run("search names the matching tool", func(t *testing.T) {
		hs := l.search(`{"query": {"text": "convert a PDF to markdown", "federation": "none"}, "includeEvidence": true, "pageSize": 5}`)
		if len(hs) == 0 || !slices.Contains(quill, hs[0].Identifier) {
			t.Fatalf("convert a PDF to markdown: results %v, want a Quill Utilities server first (its tool pdf_to_markdown)", hitIDs(hs))
		}
		h := hs[0]
		if len(h.MatchedTools) == 0 || h.MatchedTools[0].Name != "pdf_to_markdown" {
			t.Errorf("matchedTools %+v, want pdf_to_markdown first", h.MatchedTools)
		}
		if len(h.Evidence.MatchedTools) == 0 || h.Evidence.MatchedTools[0].Name != "pdf_to_markdown" {
			t.Errorf("evidence names tools %+v, want pdf_to_markdown", h.Evidence.MatchedTools)
		}
		if len(h.Tools) != 0 {
			t.Errorf("a search result carries the whole tool list (%d bytes): only matchedTools", len(h.Tools))
		}
	})

	t.Run("GET /tools", func(t *testing.T) {
		resp, err := http.Get(l.api.URL + "/tools?limit=3&q=" + url.QueryEscape("look up latitude and longitude of a street address"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ans struct {
			Results []struct {
				Server struct {
					Identifier string `json:"identifier"`
				} `json:"server"`
				Tool struct {
					Name   string   `json:"name"`
					Params []string `json:"params"`
				} `json:"tool"`
				ClientConfig struct {
					MCPServers map[string]struct {
						URL string `json:"url"`
					} `json:"mcpServers"`
				} `json:"clientConfig"`
			} `json:"results"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /tools: %d, %v", resp.StatusCode, err)
		}
		if len(ans.Results) == 0 || len(ans.Results) > 3 {
			t.Fatalf("GET /tools: %d pairs, want 1 to 3", len(ans.Results))
		}
		r := ans.Results[0]
		if r.Server.Identifier != toolsID("discover") || r.Tool.Name != "geocode_address" || !slices.Equal(r.Tool.Params, []string{"address"}) {
			t.Errorf("first pair %+v, want stateless-atlas's geocode_address", r)
		}
		var urls []string
		for _, s := range r.ClientConfig.MCPServers {
			urls = append(urls, s.URL)
		}
		if len(urls) != 1 || !strings.HasSuffix(urls[0], fixtures.PathToolsDiscover) {
			t.Errorf("client configuration reaches %v, want the server's remote", urls)
		}
		bad, err := http.Get(l.api.URL + "/tools")
		if err != nil {
			t.Fatal(err)
		}
		bad.Body.Close()
		if bad.StatusCode != http.StatusBadRequest {
			t.Errorf("GET /tools without q: %d, want 400", bad.StatusCode)
		}
	})

	t.Run("find_tool over MCP", func(t *testing.T) {
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
		cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: l.api.URL + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "find_tool", Arguments: map[string]any{"text": "convert a PDF to markdown", "limit": 2}})
		if err != nil || res.IsError {
			t.Fatalf("find_tool: %v, %+v", err, res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		if !bytes.Contains(raw, []byte(`"name":"pdf_to_markdown"`)) || !bytes.Contains(raw, []byte(`"mcpServers"`)) {
			t.Errorf("find_tool answered %s, want pdf_to_markdown with a client configuration", raw)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !strings.Contains(text, "pdf_to_markdown") || !strings.Contains(text, "not instructions") {
			t.Errorf("find_tool's text: %q", text)
		}
	})

	t.Run("liveness orders, never scores", func(t *testing.T) {
		body := `{"query": {"text": "server posing as a server", "federation": "none"}, "includeEvidence": true, "pageSize": 10, "minScore": 0}`
		hs := l.search(body)
		seen := 0
		for _, h := range hs {
			switch h.Identifier {
			case toolsID("html"), toolsID("jsonapi"):
				seen++
				if !strings.Contains(h.Evidence.Liveness, normalize.HealthNotMCP) {
					t.Errorf("%s: evidence liveness %q, want it to say not_mcp", h.Identifier, h.Evidence.Liveness)
				}
			}
		}
		if seen != 2 {
			t.Fatalf("results %v, want both endpoints that are not MCP", hitIDs(hs))
		}
		live := l.search(`{"query": {"text": "server posing as a server", "federation": "none", "liveOnly": true}, "pageSize": 10, "minScore": 0}`)
		for _, h := range live {
			if h.Identifier == toolsID("html") || h.Identifier == toolsID("jsonapi") || h.Identifier == toolsID("template") {
				t.Errorf("liveOnly kept %s", h.Identifier)
			}
		}
	})
}
