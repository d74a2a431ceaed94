package main

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
)

// startQuietServe starts a serve that crawls nothing (no seeds, --no-crawl)
// with the given extra flags; it stops when the test ends.
func startQuietServe(t *testing.T, extra ...string) *e2e {
	t.Helper()
	web := crawlertest.Web(t, fixtures.Options{NoWorld: true})
	e := newE2EOn(t, web, nil)
	e.args = append(append(e.args, "--no-crawl", "--log-level", "info"), extra...)
	e.start()
	return e
}

// rawRequest writes req on a new connection to addr and returns the status
// line of the answer (or the read error). The write runs on its own so a
// server that answers before reading everything is still heard.
func rawRequest(t *testing.T, addr, req string) (string, error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() { _, _ = c.Write([]byte(req)) }()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	return bufio.NewReader(c).ReadString('\n')
}

// TestServeLimits: serve limits each client's rate (the client named by a
// trusted proxy's X-Forwarded-For), answers 431 to headers over
// --max-header-kib, and beyond --max-conns a connection waits, unanswered,
// until another closes.
func TestServeLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	const maxConns = 4
	e := startQuietServe(t, "--max-header-kib", "8", "--max-conns", "4",
		"--rate-limit", "1", "--rate-burst", "3", "--trusted-proxy", "127.0.0.1")

	// Two clients behind this test as their proxy: the first floods.
	plain := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(path, client string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, e.url(path), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Forwarded-For", client)
		resp, err := plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	limited := 0
	for range 8 {
		if resp := get("/agents", "203.0.113.1"); resp.StatusCode == http.StatusTooManyRequests {
			limited++
			if resp.Header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
		}
		if resp := get("/healthz", "203.0.113.1"); resp.StatusCode != http.StatusOK {
			t.Errorf("/healthz of the flooding client: %d", resp.StatusCode)
		}
	}
	if limited < 4 {
		t.Errorf("%d of 8 requests over a burst of 3 limited", limited)
	}
	if resp := get("/agents", "203.0.113.2"); resp.StatusCode != http.StatusOK {
		t.Errorf("the other client: %d", resp.StatusCode)
	}
	if v, _ := metricSum(t, e.srv, "agentfinder_http_refused_total", map[string]string{"reason": "rate_limited"}); v != float64(limited) {
		t.Errorf("agentfinder_http_refused_total{reason=rate_limited} = %v, want %d", v, limited)
	}

	// net/http allows 4 KiB over the limit: 6 KiB passes, 64 KiB does not
	// (Go's own default would take 1 MiB).
	for _, tc := range []struct {
		size int
		want string
	}{{6 << 10, "200"}, {64 << 10, "431"}} {
		req := "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("a", tc.size) + "\r\nConnection: close\r\n\r\n"
		line, err := rawRequest(t, e.srv.addr, req)
		if err != nil || !strings.Contains(line, " "+tc.want+" ") {
			t.Errorf("%d-byte header: %q (%v), want %s", tc.size, line, err, tc.want)
		}
	}

	// Hold maxConns idle connections, each once answered (so accepted).
	var held []net.Conn
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	for range maxConns {
		c, err := net.Dial("tcp", e.srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		if _, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// One more: the kernel completes the handshake, serve does not accept.
	extra, err := net.Dial("tcp", e.srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	if _, err := extra.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(extra)
	_ = extra.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("a connection over --max-conns was served")
	}
	// Closing one held connection lets it in.
	held[0].Close()
	_ = extra.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("waiting connection not served after another closed: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("waiting connection: %d", resp.StatusCode)
	}
}

// TestServeAdminAuthAndErrors: the Bearer scheme is case-insensitive, and
// admin 401/404/405 answers are the common error JSON (405 with Allow).
func TestServeAdminAuthAndErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	e := startQuietServe(t)
	call := func(method, path, auth string) (*http.Response, map[string]map[string]string) {
		t.Helper()
		req, err := http.NewRequest(method, e.url(path), nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := e.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp, body
	}
	for _, tc := range []struct {
		name, method, path, auth string
		status                   int
		code, allow              string
	}{
		{"lower-case scheme", "GET", "/admin/status", "bearer " + e2eToken, 200, "", ""},
		{"upper-case scheme", "GET", "/admin/status", "BEARER " + e2eToken, 200, "", ""},
		{"wrong token", "GET", "/admin/status", "bearer nope", 401, "unauthorized", ""},
		{"other scheme", "GET", "/admin/status", "Basic " + e2eToken, 401, "unauthorized", ""},
		{"unknown endpoint", "GET", "/admin/nothing", "Bearer " + e2eToken, 404, "not_found", ""},
		{"wrong method", "DELETE", "/admin/crawl", "Bearer " + e2eToken, 405, "invalid_request", "POST"},
		{"wrong method on status", "POST", "/admin/status", "Bearer " + e2eToken, 405, "invalid_request", "GET, HEAD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := call(tc.method, tc.path, tc.auth)
			if resp.StatusCode != tc.status {
				t.Fatalf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
			}
			if got := resp.Header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow = %q, want %q", got, tc.allow)
			}
			if tc.code == "" {
				return
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			if e := body["error"]; e["code"] != tc.code || e["message"] == "" || e["correlationId"] == "" {
				t.Errorf("error body = %v, want code %s with a message and correlationId", body, tc.code)
			}
		})
	}
}
