package door

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

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

func TestMCPConfig(t *testing.T) {
	cfg, n, install := MCPConfig("tickets", []Binding{
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
	if cfg, n, _ := MCPConfig("x", []Binding{{Protocol: "a2a", URL: "https://a2a.example.org"}}, true); n != 0 || cfg != "" {
		t.Errorf("no MCP binding: %d %q", n, cfg)
	}
}

// TestMCPConfigLocal: for a client that starts local commands only, a
// remote goes through the mcp-remote bridge; packages are as they were.
func TestMCPConfigLocal(t *testing.T) {
	cfg, n, _ := MCPConfig("tickets", []Binding{
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

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ name, id, want string }{
		{"Ticket Desk MCP", "", "ticket-desk-mcp"},
		{"  <b>Évil</b> ", "", "b-vil-b"},
		{"", "urn:ai:example.org:mcp:weather", "weather"},
		{"!!!", "", "server"},
	} {
		if got := Slug(tc.name, tc.id); got != tc.want {
			t.Errorf("Slug(%q, %q) = %q, want %q", tc.name, tc.id, got, tc.want)
		}
	}
}
