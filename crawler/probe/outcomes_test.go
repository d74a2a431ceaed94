package probe_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler/probe"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

// toolsID names a case of fixtures.HostTools.
func toolsID(c string) string { return "urn:ai:tools.test:mcp:" + c }

// record reads a record's tools back through GET /agents/{identifier}.
func (l *live) record(id string) normalize.Record {
	l.t.Helper()
	var rec struct {
		Tools *normalize.ToolSet `json:"tools"`
	}
	l.agent(id, &rec)
	return normalize.Record{Tools: rec.Tools}
}

func toolNames(ts *normalize.ToolSet) []string {
	if ts == nil {
		return nil
	}
	var out []string
	for _, t := range ts.Items {
		out = append(out, t.Name)
	}
	return out
}

// TestOutcomesAndTools crawls tools.test (real MCP servers built with the
// official SDK, and endpoints that are not MCP) into a real Meilisearch,
// probes it, and reads each outcome and tool list back from the API.
func TestOutcomesAndTools(t *testing.T) {
	l := newLive(t)
	l.crawl(fixtures.HostTools)
	if n := l.round(); n != 12 {
		t.Errorf("first round probed %d records, want 12", n)
	}

	t.Run("outcomes", func(t *testing.T) {
		cases := []struct {
			c, status, detail, version, server string
		}{
			{"sdk", normalize.HealthUp, "", "2025-11-25", "quill-utilities"},
			{"sdk-20250618", normalize.HealthUp, "", "2025-06-18", "heron-notes"},
			{"discover", normalize.HealthUp, "", "2026-07-28", "stateless-atlas"},
			{"gated", normalize.HealthAuthRequired, "HTTP 401", "", ""},
			{"html", normalize.HealthNotMCP, "HTML page", "", ""},
			{"jsonapi", normalize.HealthNotMCP, "JSON document", "", ""},
			{"template", normalize.HealthTemplate, "template", "", ""},
			{"slow", normalize.HealthUp, "slow", "2025-11-25", "quill-utilities"},
			{"sse", normalize.HealthUp, "", "2024-11-05", ""},
		}
		for _, c := range cases {
			h := l.want(toolsID(c.c), c.status, c.detail)
			if h.ProtocolVersion != c.version || h.ServerName != c.server {
				t.Errorf("%s: protocol version %q, server %q; want %q, %q", c.c, h.ProtocolVersion, h.ServerName, c.version, c.server)
			}
		}
		h := l.health(toolsID("gated"))
		if a := h.Auth; a == nil || a.Scheme != "Bearer" || !slices.Equal(a.Scopes, []string{fixtures.GatedScope}) ||
			!slices.Equal(a.AuthorizationServers, []string{fixtures.GatedAuthServer}) || !strings.HasSuffix(a.ResourceMetadata, fixtures.PathToolsMetadata) {
			t.Errorf("gated: auth %+v, want Bearer, scope %s, the metadata's authorization server", a, fixtures.GatedScope)
		}
		for _, r := range l.web.RequestsFor(fixtures.HostTools) {
			if r.Authorization != "" {
				t.Errorf("%s %s carried credentials %q: none were configured", r.Method, r.Path, r.Authorization)
			}
			if strings.Contains(r.Host, "{") {
				t.Errorf("the template URL was requested: %s", r.Path)
			}
		}
	})

	t.Run("tools of open endpoints", func(t *testing.T) {
		rec := l.record(toolsID("sdk"))
		if got := toolNames(rec.Tools); !slices.Equal(got, []string{"delete_upload", "docx_to_text", "pdf_to_markdown"}) {
			t.Fatalf("sdk tools %v", got)
		}
		if rec.Tools.Source != normalize.ToolsListed || rec.Tools.ReadAt.IsZero() {
			t.Errorf("sdk tools: source %q, read at %v; want tools/list and a time", rec.Tools.Source, rec.Tools.ReadAt)
		}
		for _, tool := range rec.Tools.Items {
			if tool.Name != "pdf_to_markdown" {
				continue
			}
			if tool.Title != "PDF to Markdown" || !slices.Equal(tool.Params, []string{"pages", "url"}) ||
				tool.Annotations == nil || tool.Annotations.ReadOnlyHint == nil || !*tool.Annotations.ReadOnlyHint {
				t.Errorf("pdf_to_markdown read as %+v", tool)
			}
		}
		if got := toolNames(l.record(toolsID("discover")).Tools); !slices.Equal(got, []string{"geocode_address"}) {
			t.Errorf("stateless server's tools %v, want geocode_address", got)
		}
		sse := l.record(toolsID("sse")).Tools
		if got := toolNames(sse); !slices.Equal(got, []string{"delete_upload", "docx_to_text", "pdf_to_markdown"}) || sse.Source != normalize.ToolsListed {
			t.Errorf("the SSE server's tools %v (source %q), want the SDK server's, listed over SSE", got, sse.Source)
		}
		for _, c := range []string{"gated", "html", "jsonapi", "template"} {
			if ts := l.record(toolsID(c)).Tools; ts != nil {
				t.Errorf("%s has tools %v: only open MCP endpoints are listed", c, toolNames(ts))
			}
		}
	})

	t.Run("bounded list", func(t *testing.T) {
		ts := l.record(toolsID("many")).Tools
		if ts == nil || len(ts.Items) != 500 || ts.Truncated != normalize.TruncatedTools {
			t.Fatalf("many: %d tools, truncated %q; want 500, %q", len(toolNames(ts)), ts.Truncated, normalize.TruncatedTools)
		}
	})

	t.Run("instructions in a description are marked", func(t *testing.T) {
		ts := l.record(toolsID("sdk-20250618")).Tools
		if ts == nil || len(ts.Problems) != 1 || ts.Problems[0].Code != normalize.CodeInstructionLike || !strings.Contains(ts.Problems[0].Message, fixtures.InjectedTool.Name) {
			t.Errorf("heron-notes problems %+v, want one instruction_like naming %s", ts, fixtures.InjectedTool.Name)
		}
	})

	t.Run("a tool that disappears disappears from the index", func(t *testing.T) {
		first := toolNames(l.record(toolsID("changing")).Tools)
		if want := slices.Sorted(slices.Values(fixtures.ChangingTools[0])); !slices.Equal(first, want) {
			t.Fatalf("changing tools %v, want %v", first, want)
		}
		l.clock.Advance(8 * 24 * time.Hour) // past the probe and the tool refresh
		l.round()
		got := toolNames(l.record(toolsID("changing")).Tools)
		if want := slices.Sorted(slices.Values(fixtures.ChangingTools[1])); !slices.Equal(got, want) {
			t.Errorf("after the tools changed: %v, want %v", got, want)
		}
		if got := l.listed(`health = not_mcp`); !slices.Equal(got, []string{toolsID("html"), toolsID("jsonapi")}) {
			t.Errorf("health = not_mcp lists %v", got)
		}
	})
}

// TestDeclaredToolsOutliveGating: the tools a server.json declares are
// replaced by those the endpoint lists while it is open, and are back, in
// the record, the tools index, GET /tools and a search's matchedTools, as
// soon as a probe finds the endpoint gated; an unchanged refetch of the
// catalog keeps them. An open server whose tools change loses those that
// vanish from its endpoint, even one its server.json still declares.
func TestDeclaredToolsOutliveGating(t *testing.T) {
	l := newLive(t)
	l.crawl(fixtures.HostTools)
	l.round()
	locking, changing := toolsID("locking"), toolsID("changing")
	listed := []string{fixtures.LockingTools[1].Name, fixtures.LockingTools[0].Name} // as the SDK lists them: by name
	if ts := l.record(locking).Tools; !slices.Equal(toolNames(ts), listed) || ts.Source != normalize.ToolsListed {
		t.Fatalf("locking while open: tools %v (%+v), want %v, listed", toolNames(ts), ts, listed)
	}
	if got, want := toolNames(l.record(changing).Tools), slices.Sorted(slices.Values(fixtures.ChangingTools[0])); !slices.Equal(got, want) {
		t.Fatalf("changing: tools %v, want %v as listed (ledger_audit only declared)", got, want)
	}

	l.clock.Advance(8 * 24 * time.Hour) // past the probe and the tool refresh
	l.round()
	l.want(locking, normalize.HealthAuthRequired, "HTTP 401")
	declared := func(step string) {
		t.Helper()
		ts := l.record(locking).Tools
		if !slices.Equal(toolNames(ts), fixtures.LockingDeclared) || ts.Source != normalize.ToolsDeclared {
			t.Fatalf("%s: locking's tools %v (%+v), want %v as its server.json declares them", step, toolNames(ts), ts, fixtures.LockingDeclared)
		}
		pairs := l.toolPairs("search the stored documents of a vault by text")
		if !slices.Contains(pairs, locking+" vault_search") {
			t.Errorf("%s: GET /tools answered %v, want locking's vault_search", step, pairs)
		}
		hs := l.search(`{"query": {"text": "search the stored documents of a vault by text", "federation": "none"}, "pageSize": 5}`)
		i := slices.IndexFunc(hs, func(h searchHit) bool { return h.Identifier == locking })
		if i < 0 || len(hs[i].MatchedTools) == 0 || hs[i].MatchedTools[0].Name != "vault_search" {
			t.Errorf("%s: search results %v, want locking with vault_search among its matchedTools", step, hitIDs(hs))
		}
	}
	declared("gated")
	var raw map[string]json.RawMessage
	l.agent(locking, &raw)
	if _, ok := raw[normalize.FieldDeclaredTools]; ok {
		t.Errorf("GET /agents shows %s, which the records index keeps for ingest alone", normalize.FieldDeclaredTools)
	}
	if got, want := toolNames(l.record(changing).Tools), slices.Sorted(slices.Values(fixtures.ChangingTools[1])); !slices.Equal(got, want) {
		t.Errorf("changing after its tools changed: %v, want %v (ledger_export vanished from the endpoint, declared or not)", got, want)
	}

	l.crawl(fixtures.HostTools) // unchanged
	declared("an unchanged refetch")
}

// toolPairs returns GET /tools's (server, tool) pairs for q, each as
// "identifier name".
func (l *live) toolPairs(q string) []string {
	l.t.Helper()
	resp, err := http.Get(l.api.URL + "/tools?limit=10&q=" + url.QueryEscape(q))
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans struct {
		Results []struct {
			Server struct {
				Identifier string `json:"identifier"`
			} `json:"server"`
			Tool struct {
				Name string `json:"name"`
			} `json:"tool"`
		} `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || resp.StatusCode != http.StatusOK {
		l.t.Fatalf("GET /tools: %d, %v", resp.StatusCode, err)
	}
	var out []string
	for _, r := range ans.Results {
		out = append(out, r.Server.Identifier+" "+r.Tool.Name)
	}
	return out
}

var _ = probe.IsTemplate
