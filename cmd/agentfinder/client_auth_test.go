package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/searchapi/authn"
)

// authedServe runs serve with --auth required over the shop catalog and
// returns it once the catalog is indexed, with the one API key it accepts.
func authedServe(t *testing.T) (*e2e, string) {
	t.Helper()
	web := crawlertest.Web(t, fixtures.Options{NoWorld: true})
	web.SetFile(e2eHost, wellKnown, shopCatalog(1))
	e := newE2EOn(t, web, []string{e2eHost})
	const key = "client-key-0123456789"
	keys := filepath.Join(e.dataDir, "keys.json")
	if err := os.WriteFile(keys, fmt.Appendf(nil, `{"keys": [{"name": "cli", "sha256": %q, "groups": []}]}`, authn.HashKey(key)), 0o600); err != nil {
		t.Fatal(err)
	}
	e.args = append(e.args, "--auth", "required", "--api-keys", keys)
	e.start()
	e.waitFor("the shop catalog to be indexed", 60*time.Second, func() (bool, string) {
		return e.doc("urn:ai:e2e-shop.test:agent:quokka-invoicer") != nil, "not yet"
	})
	return e, key
}

// TestClientCommandsSendAPIKey: against a serve with --auth required,
// 'agentfinder search' and 'agentfinder mcp' send the credential given by
// --api-key or AGENTFINDER_API_KEY, and are refused without one.
func TestClientCommandsSendAPIKey(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	e, key := authedServe(t)
	noEnv := func(string) (string, bool) { return "", false }
	withEnv := func(k string) (string, bool) {
		if k == apiKeyEnv {
			return key, true
		}
		return "", false
	}
	for _, c := range []struct {
		name   string
		args   []string
		getenv func(string) (string, bool)
		code   int
		want   string
	}{
		{"no credential", nil, noEnv, 1, "unauthorized"},
		{"--api-key", []string{"--api-key", key}, noEnv, 0, "urn:ai:e2e-shop.test:agent:quokka-invoicer"},
		{"AGENTFINDER_API_KEY", nil, withEnv, 0, "urn:ai:e2e-shop.test:agent:quokka-invoicer"},
		{"a wrong key", []string{"--api-key", "wrong-key-0123456789"}, noEnv, 1, "unauthorized"},
	} {
		t.Run("search "+c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"--server", e.url(""), "--federation", "none"}, c.args...)
			code := searchMain(t.Context(), append(args, "invoices"), c.getenv, &stdout, &stderr)
			if code != c.code || !strings.Contains(stdout.String()+stderr.String(), c.want) {
				t.Errorf("exit %d (want %d), output lacks %q:\n%s%s", code, c.code, c.want, stdout.String(), stderr.String())
			}
		})
	}

	t.Run("mcp over stdio", func(t *testing.T) {
		s := startStdioMCP(t, e.url(""), apiKeyEnv+"="+key)
		s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		s.expect(1, "")
		s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"text":"invoices","federation":"none"}}}`)
		if got := s.expect(2, ""); !strings.Contains(got, "quokka-invoicer") || strings.Contains(got, `"isError":true`) {
			t.Errorf("search through a registry with --auth required: %s", got)
		}
	})
}

// TestMCPStdioBadLines: 'agentfinder mcp' answers a line that is not JSON
// with a JSON-RPC parse error (-32700), a batch or a JSON value that is no
// JSON-RPC message with an invalid request (-32600), and carries on with
// the session.
func TestMCPStdioBadLines(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	s := startStdioMCP(t, "http://127.0.0.1:1") // the tools are not called
	s.send(`this is not JSON`)
	s.expect(0, `"code":-32700`)
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	s.expect(1, "")
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"half": "an object"`)
	s.expect(0, `"code":-32700`)
	s.send(`[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`)
	s.expect(0, `"code":-32600`)
	s.send(`{"id": 7, "hello": "world"}`)
	s.expect(7, `"code":-32600`)
	s.send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	if got := s.expect(4, ""); !strings.Contains(got, `"get_agent"`) {
		t.Errorf("tools/list after the bad lines: %s", got)
	}
}

// stdioMCP is 'agentfinder mcp' running as a process, spoken to line by line.
type stdioMCP struct {
	t     *testing.T
	stdin io.WriteCloser
	lines chan string
}

func startStdioMCP(t *testing.T, server string, env ...string) *stdioMCP {
	t.Helper()
	cmd := exec.Command(os.Args[0], "mcp", "--server", server, "--timeout", "10s")
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &stdioMCP{t: t, stdin: stdin, lines: make(chan string, 16)}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = stdin.Close() // end of input ends the session
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("agentfinder mcp exited: %v", err)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("agentfinder mcp still running 10s after its input ended")
		}
	})
	return s
}

func (s *stdioMCP) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatalf("write %s: %v", line, err)
	}
}

// expect reads the next answer and checks its id (0: null) and that it
// holds want; it returns the answer.
func (s *stdioMCP) expect(id int, want string) string {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			s.t.Fatal("agentfinder mcp closed its output")
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			s.t.Fatalf("answer %q: %v", line, err)
		}
		wantID := "null"
		if id != 0 {
			wantID = fmt.Sprint(id)
		}
		if string(m.ID) != wantID || !strings.Contains(line, want) {
			s.t.Fatalf("answer %s: want id %s holding %q", line, wantID, want)
		}
		return line
	case <-time.After(20 * time.Second):
		s.t.Fatalf("no answer within 20s (want id %d)", id)
	}
	return ""
}

// TestPingSendsAPIKeyToItsServerOnly: ping sends the credential to the
// registry and never to another host a redirect points at.
func TestPingSendsAPIKeyToItsServerOnly(t *testing.T) {
	got := make(chan string, 2)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- "other:" + r.Header.Get("Authorization")
		w.WriteHeader(http.StatusAccepted)
	}))
	defer other.Close()
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- "registry:" + r.Header.Get("Authorization")
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/indexnow", http.StatusTemporaryRedirect)
	}))
	defer registry.Close()
	var stdout, stderr bytes.Buffer
	code := pingMain(t.Context(), []string{"--server", registry.URL, "--key", "abcdef0123456789", "--api-key", "sekrit-key", "https://pub.test/"},
		func(string) (string, bool) { return "", false }, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("ping: %d %s", code, stderr.String())
	}
	if a, b := <-got, <-got; a != "registry:Bearer sekrit-key" || b != "other:" {
		t.Errorf("credentials sent: %q then %q; want it on the registry only", a, b)
	}
}
