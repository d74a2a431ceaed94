package searchapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/haidip"
	"github.com/agentfinder/agentfinder/searchapi/searchtest"
	"github.com/agentfinder/agentfinder/searchapi/xu"
)

// TestFiveDoors asks one query through every door (POST /search, the xu,
// HAIDIP and ADP bindings, and the MCP search tool): each is a translation
// over the one search, so each gets the same top result.
func TestFiveDoors(t *testing.T) {
	f := newBindingsFixture(t, nil)
	cs := searchtest.MCPSession(t, f.http.URL+"/mcp", f.http.Client())
	for _, text := range []string{"translate Chinese text into English", "onboarding workflow for new employees", "hourly weather forecast"} {
		t.Run(text, func(t *testing.T) {
			top := map[string]string{}

			var s searchOut
			f.do(http.MethodPost, "/search", map[string]any{"query": map[string]any{"text": text}}, nil, &s)
			if len(s.Results) > 0 {
				top["POST /search"] = s.Results[0].Identifier
			}

			var x xu.Response
			f.do(http.MethodPost, "/discover", map[string]any{"query": text}, nil, &x)
			if len(x.Candidates) > 0 {
				top["POST /discover"] = x.Candidates[0].ID
			}

			var h haidip.Response
			f.do(http.MethodPost, "/agents/search", map[string]any{"query": text}, nil, &h)
			if len(h.Results) > 0 {
				top["POST /agents/search"] = h.Results[0].ID
			}

			// An inline ADP card comes back as published, with its own id
			// (agent://...): compare ADP's top result by name.
			var a adpOut
			f.do(http.MethodPost, "/adp/discover", map[string]any{"query": text, "min_score": 0}, nil, &a)
			var mcpOut struct {
				Results []struct {
					Identifier  string `json:"identifier"`
					DisplayName string `json:"displayName"`
				} `json:"results"`
			}
			res := callTool(t, cs, "search", map[string]any{"text": text}, &mcpOut)
			if res.IsError || len(mcpOut.Results) == 0 {
				t.Fatalf("MCP search: %s", toolText(res))
			}
			top["MCP search"] = mcpOut.Results[0].Identifier

			want := top["POST /search"]
			if want == "" {
				t.Fatal("POST /search found nothing")
			}
			for door, id := range top {
				if id != want {
					t.Errorf("%s top = %s, POST /search top = %s", door, id, want)
				}
			}
			if len(top) != 4 {
				t.Errorf("a door found nothing: %v", top)
			}
			if len(a.Results) == 0 {
				t.Fatal("ADP found nothing")
			}
			var name string
			_ = json.Unmarshal(a.Results[0].AgentCard["name"], &name)
			wantName := f.byName[want].DisplayName
			var card struct {
				Name string `json:"name"`
			}
			if rec := f.byName[want]; rec.Type == normalize.TypeADP && json.Unmarshal(rec.Data, &card) == nil {
				wantName = card.Name
			}
			if name != wantName {
				t.Errorf("ADP top card %q, POST /search top %s (%q)", name, want, wantName)
			}
		})
	}
}
