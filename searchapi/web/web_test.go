package web

import (
	"encoding/json"
	"maps"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTypeLabel(t *testing.T) {
	for _, tc := range []struct{ in, label, class string }{
		{"application/a2a-agent-card+json", "A2A agent", "a2a"},
		{"application/a2a-agent-card+json; version=0.3", "A2A agent", "a2a"},
		{"application/mcp-server-card+json", "MCP server", "mcp"},
		{"application/ai-skill+md", "skill", "skill"},
		{"application/ai-catalog+json", "bundle", "bundle"},
		{"application/ai-registry", "registry", "registry"},
		{"application/x-unknown+json", "application/x-unknown+json", "other"},
		{"", "unknown type", "other"},
	} {
		if l, c := TypeLabel(tc.in); l != tc.label || c != tc.class {
			t.Errorf("TypeLabel(%q) = %q, %q; want %q, %q", tc.in, l, c, tc.label, tc.class)
		}
	}
}

func TestSafeURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/a?b=c":   "https://example.com/a?b=c",
		"http://example.com":          "http://example.com",
		" HTTPS://Example.com/x ":     "https://Example.com/x",
		"javascript:alert(1)":         "",
		"JavaScript:alert(1)":         "",
		"data:text/html,<script>":     "",
		"/relative/path":              "",
		"//example.com/protocol-rel":  "",
		"https://user:pw@example.com": "",
		"ftp://example.com/file":      "",
		"":                            "",
	} {
		if got := SafeURL(in); got != want {
			t.Errorf("SafeURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAgo(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Hour, "just now"},
		{20 * time.Second, "just now"},
		{time.Minute, "1 minute ago"},
		{30 * time.Minute, "30 minutes ago"},
		{3 * time.Hour, "3 hours ago"},
		{47 * time.Hour, "47 hours ago"},
		{72 * time.Hour, "3 days ago"},
		{90 * 24 * time.Hour, "3 months ago"},
		{800 * 24 * time.Hour, "2 years ago"},
	} {
		if got := Ago(now.Add(-tc.d), now); got != tc.want {
			t.Errorf("Ago(-%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
	if got := Ago(time.Time{}, now); got != "at an unknown time" {
		t.Errorf("Ago(zero) = %q", got)
	}
}

func TestOneLine(t *testing.T) {
	if got := OneLine("a\n  b\tc", 10); got != "a b c" {
		t.Errorf("OneLine collapses to %q", got)
	}
	long := strings.Repeat("word ", 60)
	got := OneLine(long, 50)
	if !strings.HasSuffix(got, "…") || len([]rune(got)) > 51 || strings.HasSuffix(strings.TrimSuffix(got, "…"), " ") {
		t.Errorf("OneLine(long, 50) = %q", got)
	}
}

func TestHighlight(t *testing.T) {
	match := func(w string) bool { return w == "flight" || w == "tokyo" }
	var b strings.Builder
	for _, s := range Highlight("Book a Flight to Tokyo, now!", match) {
		if s.Hit {
			b.WriteString("[" + s.Text + "]")
		} else {
			b.WriteString(s.Text)
		}
	}
	if got, want := b.String(), "Book a [Flight] to [Tokyo], now!"; got != want {
		t.Errorf("Highlight = %q, want %q", got, want)
	}
}

func TestMCPConfig(t *testing.T) {
	cfg, n, install := mcpConfig("tickets", []Binding{
		{Protocol: "mcp", URL: "https://mcp.example.org/tickets", Transport: "streamable-http"},
		{Protocol: "mcp", URL: "https://mcp.example.org/sse", Transport: "sse"},
		{Protocol: "mcp", Transport: "stdio", Package: "npm/@example/tickets-mcp@1.4.0"},
		{Protocol: "mcp", Transport: "stdio", Package: "pypi/tickets-mcp@2.0"},
		{Protocol: "mcp", Transport: "stdio", Package: "oci/ghcr.io/example/tickets@1"},
		{Protocol: "mcp", Transport: "stdio", Package: "weird/registry-package"},
		{Protocol: "mcp", Transport: "stdio", Package: "tickets-server --stdio"},
		{Protocol: "a2a", URL: "https://a2a.example.org"},
		{Protocol: "mcp", Transport: "stdio", Package: "npm/@example/env-mcp@1", Runtime: "bunx", Args: []string{"--port", "8080"}, Env: []string{"API_KEY"}},
		{Protocol: "mcp", Transport: "stdio", Package: "go/example.com/tickets/cmd/mcp@v2.0.0"},
		{Protocol: "mcp", Transport: "stdio", Package: "cargo/tickets-mcp@2.0.0"},
		{Protocol: "mcp", Transport: "stdio", Package: "nuget/Example.Tickets@2.0.0"},
		{Protocol: "mcp", Transport: "stdio", Package: "oci/docker.io/example/tickets:2.0.0", Env: []string{"TOKEN"}},
		{Protocol: "mcp", Transport: "stdio", Package: "mcpb/https://example.com/tickets.mcpb"},
		{Protocol: "mcp", URL: "https://{host}/mcp", Transport: "streamable-http", Template: true, Headers: []string{"X-API-Key"}},
	}, false)
	var got struct {
		Servers map[string]mcpServer `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(cfg), &got); err != nil {
		t.Fatalf("config %q: %v", cfg, err)
	}
	want := map[string]mcpServer{
		"tickets":    {Type: "http", URL: "https://mcp.example.org/tickets"},
		"tickets-2":  {Type: "sse", URL: "https://mcp.example.org/sse"},
		"tickets-3":  {Command: "npx", Args: []string{"-y", "@example/tickets-mcp@1.4.0"}},
		"tickets-4":  {Command: "uvx", Args: []string{"tickets-mcp==2.0"}},
		"tickets-5":  {Command: "docker", Args: []string{"run", "-i", "--rm", "ghcr.io/example/tickets:1"}},
		"tickets-6":  {Command: "tickets-server", Args: []string{"--stdio"}},
		"tickets-7":  {Command: "bunx", Args: []string{"-y", "@example/env-mcp@1", "--port", "8080"}, Env: map[string]string{"API_KEY": "<API_KEY>"}},
		"tickets-8":  {Command: "go", Args: []string{"run", "example.com/tickets/cmd/mcp@v2.0.0"}},
		"tickets-9":  {Command: "tickets-mcp"},
		"tickets-10": {Command: "dnx", Args: []string{"Example.Tickets@2.0.0", "--yes"}},
		"tickets-11": {Command: "docker", Args: []string{"run", "-i", "--rm", "-e", "TOKEN", "docker.io/example/tickets:2.0.0"}, Env: map[string]string{"TOKEN": "<TOKEN>"}},
		"tickets-12": {Type: "http", URL: "https://{host}/mcp", Headers: map[string]string{"X-API-Key": "<X-API-Key>"}},
	}
	if n != len(want) || len(got.Servers) != len(want) {
		t.Fatalf("%d servers (%d decoded), want %d: %s", n, len(got.Servers), len(want), cfg)
	}
	for k, w := range want {
		g := got.Servers[k]
		if g.Type != w.Type || g.URL != w.URL || g.Command != w.Command || strings.Join(g.Args, " ") != strings.Join(w.Args, " ") ||
			!maps.Equal(g.Env, w.Env) || !maps.Equal(g.Headers, w.Headers) {
			t.Errorf("server %s = %+v, want %+v", k, g, w)
		}
	}
	if !slices.Equal(install, []string{"cargo install tickets-mcp@2.0.0", "download the bundle https://example.com/tickets.mcpb and open it in your MCP client"}) {
		t.Errorf("install %q", install)
	}
	if cfg, n, _ := mcpConfig("x", []Binding{{Protocol: "a2a", URL: "https://a2a.example.org"}}, true); n != 0 || cfg != "" {
		t.Errorf("no MCP binding: %d %q", n, cfg)
	}
}

// TestMCPConfigLocal: for a client that starts local commands only, a
// remote goes through the mcp-remote bridge; packages are as they were.
func TestMCPConfigLocal(t *testing.T) {
	cfg, n, _ := mcpConfig("tickets", []Binding{
		{Protocol: "mcp", URL: "https://mcp.example.org/tickets", Transport: "streamable-http", Headers: []string{"Authorization"}},
		{Protocol: "mcp", URL: "https://mcp.example.org/sse", Transport: "sse"},
		{Protocol: "mcp", Transport: "stdio", Package: "npm/@example/tickets-mcp@1.4.0"},
	}, true)
	var got struct {
		Servers map[string]mcpServer `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(cfg), &got); err != nil || n != 3 {
		t.Fatalf("config %q (%d): %v", cfg, n, err)
	}
	want := map[string]string{
		"tickets":   "npx -y mcp-remote https://mcp.example.org/tickets --header Authorization: <Authorization>",
		"tickets-2": "npx -y mcp-remote https://mcp.example.org/sse --transport sse-only",
		"tickets-3": "npx -y @example/tickets-mcp@1.4.0",
	}
	for k, w := range want {
		g := got.Servers[k]
		if line := strings.Join(append([]string{g.Command}, g.Args...), " "); line != w || g.Type != "" || g.URL != "" {
			t.Errorf("server %s = %+v, want %s and no type or url", k, g, w)
		}
	}
}

// TestHealthLabel: a record probed but neither up nor down is not called
// unchecked; one never probed is.
func TestHealthLabel(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var x entry
	x.Health.Status = "unknown"
	if v := x.healthView(now); v.Label != "endpoint not checked" || v.Checked != "" {
		t.Errorf("never probed: %+v", v)
	}
	x.Health.CheckedAt, x.Health.Detail = now.Add(-2*time.Minute), "a2a: HTTP 404"
	if v := x.healthView(now); v.Label != "endpoint not confirmed" || v.Checked == "" || v.Detail != "a2a: HTTP 404" {
		t.Errorf("probed, failing: %+v", v)
	}
}

func TestWithout(t *testing.T) {
	if got := without([]string{"a", "b", "c"}, []string{"b"}); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("without = %v", got)
	}
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ name, id, want string }{
		{"Ticket Desk MCP", "", "ticket-desk-mcp"},
		{"  <b>Évil</b> ", "", "b-vil-b"},
		{"", "urn:ai:example.org:mcp:weather", "weather"},
		{"!!!", "", "server"},
	} {
		if got := slug(tc.name, tc.id); got != tc.want {
			t.Errorf("slug(%q, %q) = %q, want %q", tc.name, tc.id, got, tc.want)
		}
	}
}

func TestToggleParam(t *testing.T) {
	v := url.Values{"q": {"weather"}, "type": {"a", "b"}, "page": {"3"}}
	if got := ToggleParam(v, "type", "a"); got != "/?q=weather&type=b" {
		t.Errorf("remove: %s", got)
	}
	if got := ToggleParam(v, "type", "c"); got != "/?q=weather&type=a&type=b&type=c" {
		t.Errorf("add: %s", got)
	}
	if got := SetParam(v, "verified", "1"); got != "/?q=weather&type=a&type=b&verified=1" {
		t.Errorf("set: %s", got)
	}
	if got := PageURL(v, 1); got != "/?q=weather&type=a&type=b" {
		t.Errorf("page 1: %s", got)
	}
	if v.Get("page") != "3" || len(v["type"]) != 2 {
		t.Errorf("the URL values were changed: %v", v)
	}
}

// TestRenderEscapes renders a result holding markup through the real
// templates: it comes out as text.
func TestRenderEscapes(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]json.RawMessage{
		"identifier":  json.RawMessage(`"urn:ai:x.example:agent:a"`),
		"displayName": json.RawMessage(`"<script>alert(1)</script>"`),
		"description": json.RawMessage(`"<img src=x onerror=alert(2)>"`),
		"source":      json.RawMessage(`"javascript:alert(3)"`),
		"score":       json.RawMessage(`250`),
	}
	res := NewResult(e, false, time.Now(), func(string) bool { return false })
	if res.SourceURL != "" || res.Relevance != 100 {
		t.Errorf("source URL %q, relevance %d", res.SourceURL, res.Relevance)
	}
	w := httptest.NewRecorder()
	if err := r.Render(w, 200, "search", SearchView{Page: Page{Query: "q"}, Searched: true, Results: []Result{res}, PageNum: 1, Start: 1}); err != nil {
		t.Fatal(err)
	}
	body := w.Body.String()
	if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") || strings.Contains(body, `href="javascript`) {
		t.Errorf("markup from an entry became HTML:\n%s", body)
	}
	if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the name is not shown as text")
	}
	if w.Header().Get("Content-Security-Policy") != ContentSecurityPolicy {
		t.Errorf("CSP %q", w.Header().Get("Content-Security-Policy"))
	}
}

func TestResultCount(t *testing.T) {
	for _, c := range []struct {
		shown int
		more  bool
		want  string
	}{{0, false, "0 results"}, {1, false, "1 result"}, {7, false, "7 results"}, {10, true, "more than 10 results"}} {
		if got := resultCount(c.shown, c.more); got != c.want {
			t.Errorf("resultCount(%d, %v) = %q, want %q", c.shown, c.more, got, c.want)
		}
	}
}
