package main

// How TestREADMECommands runs what is not curl: agentfinder command lines
// (as processes found on the PATH demo.env sets), the MCP configuration
// block (started as a desktop assistant would and driven with the SDK's
// client) and the command synopsis; and how it holds each example to
// answering something.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// agentfinder runs an `agentfinder ...` line as printed: the program the
// shell would find on PATH (demo.env put make run's bin/ first).
func (r *readmeRunner) agentfinder(c readmeCommand) {
	t := r.t
	path, err := exec.LookPath(c.argv[0])
	if err != nil {
		t.Errorf("README line %d: %s: not on the PATH demo.env sets: %v", c.line, c.argv[0], err)
		return
	}
	r.pace()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), path, c.argv[1:]...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Errorf("README line %d: %q: %v:\n%s%s", c.line, c.argv, err, stdout.String(), stderr.String())
	}
	t.Logf("README line %d: %s %s: %v", c.line, c.argv[0], c.argv[1], time.Since(start).Round(time.Millisecond))
}

// mcpConfig starts each server of an mcpServers configuration block the
// way a desktop assistant does (its command, found on PATH, with its args;
// make run's address becomes this demo's) and searches through it with the
// MCP SDK's client.
func (r *readmeRunner) mcpConfig(b readmeBlock) {
	t := r.t
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(b.text), &cfg); err != nil || len(cfg.MCPServers) == 0 {
		t.Errorf("README line %d: MCP configuration: %v (%d servers)", b.line, err, len(cfg.MCPServers))
		return
	}
	for name, sc := range cfg.MCPServers {
		path, err := exec.LookPath(sc.Command)
		if err != nil {
			t.Errorf("README line %d: %s: command %q not on PATH: %v", b.line, name, sc.Command, err)
			continue
		}
		args := make([]string, len(sc.Args))
		for i, a := range sc.Args {
			args[i] = strings.Replace(a, "127.0.0.1:8080", r.e.srv.addr, 1)
		}
		r.pace()
		client := mcp.NewClient(&mcp.Implementation{Name: "readme-desktop", Version: "1"}, nil)
		cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: exec.CommandContext(t.Context(), path, args...)}, nil)
		if err != nil {
			t.Errorf("README line %d: %s: connect: %v", b.line, name, err)
			continue
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"text": "book a flight"}})
		switch {
		case err != nil:
			t.Errorf("README line %d: %s: search: %v", b.line, name, err)
		case res.IsError || !strings.Contains(string(mustJSON(res.StructuredContent)), "urn:ai:acme.test:travel:concierge"):
			t.Errorf("README line %d: %s: search for a flight answers %s", b.line, name, mustJSON(res))
		}
		cs.Close()
		r.mcpConfigs++
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// synopsis checks that each line of the command synopsis names a command
// the program has, and that its help runs.
func (r *readmeRunner) synopsis(b readmeBlock) {
	known := map[string]bool{"help": true, "version": true}
	for _, c := range commands() {
		known[c.name] = true
	}
	for i, l := range strings.Split(strings.TrimSpace(b.text), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "agentfinder" {
			continue
		}
		if !known[f[1]] {
			r.t.Errorf("README line %d: %q: agentfinder has no command %q", b.line+i, l, f[1])
		}
	}
}

// answerCount is how many things a door's answer holds (results,
// candidates, items, facet values, the record asked for), or -1 for
// answers that are not a search.
func answerCount(path string, raw []byte) int {
	var ans map[string]json.RawMessage
	if json.Unmarshal(raw, &ans) != nil {
		return -1
	}
	count := func(key string) int {
		var list []json.RawMessage
		_ = json.Unmarshal(ans[key], &list)
		return len(list)
	}
	switch {
	case path == "/search" || path == "/agents/search" || path == "/adp/discover":
		return count("results")
	case path == "/discover":
		return count("candidates")
	case path == "/agents":
		return count("items")
	case path == "/explore":
		var facets map[string]json.RawMessage
		_ = json.Unmarshal(ans["facets"], &facets)
		n := 0
		for _, f := range facets {
			if !bytes.Equal(f, []byte("[]")) && !bytes.Contains(f, []byte(`"buckets":[]`)) {
				n++
			}
		}
		return n
	case strings.HasPrefix(path, "/agents/"):
		if _, ok := ans["identifier"]; ok {
			return 1
		}
		return 0
	}
	return -1
}

// pageFilters checks the search page's "Signed" and "Endpoint up" filters
// find something on the demo, as a browser asks for them.
func (r *readmeRunner) pageFilters() {
	t := r.t
	for _, q := range []string{"signed=1", "live=1", "signed=1&live=1"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, r.e.url("/?q=read+patient+medical+records&"+q), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "text/html")
		r.pace()
		resp, err := r.e.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Patient Records Agent") {
			t.Errorf("search page with %s: %s, no Patient Records Agent on it", q, resp.Status)
		}
	}
}
