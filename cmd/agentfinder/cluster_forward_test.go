package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentfinder/agentfinder/scheduler/natsnode"
)

// A node passes /indexnow and /admin/* to whichever node leads the crawl
// and relays its answer; while no node leads, it answers 503 with
// Retry-After; the admin token is checked before anything is forwarded.
func TestLeaderForwarder(t *testing.T) {
	node, err := natsnode.Start(natsnode.Config{Name: "fwd", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Shutdown)
	connect := func(name string) *nats.Conn {
		nc, err := node.Connect(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	f := &leaderForwarder{nc: connect("front"), timeout: 5 * time.Second, retryAfter: 3 * time.Second,
		adminToken: "admin-token-0123456789", indexNow: true, log: slog.New(slog.DiscardHandler)}
	mux := http.NewServeMux()
	f.mount(mux)
	front := httptest.NewServer(mux)
	t.Cleanup(front.Close)
	do := func(method, path, auth, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, front.URL+path, strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	resp, body := do(http.MethodGet, "/indexnow?url=https://a.test/&key=k", "", "")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "3" || !strings.Contains(body, "no node leads the crawl") {
		t.Fatalf("no leader: %d Retry-After %q %s; want 503, 3 and why", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if resp, _ := do(http.MethodGet, "/admin/status", "wrong-token", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("admin with a wrong token: %d, want 401 before forwarding", resp.StatusCode)
	}

	// A leader: its handler sees the request as sent and its answer comes back.
	leader := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Authorization")+" "+string(b)+" from-client:"+
			itoa(strings.HasPrefix(r.RemoteAddr, "127.0.0.1:")))
	})
	ctx, endTerm := context.WithCancel(t.Context())
	if err := answerForwarded(ctx, connect("leader"), "n7", leader, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	resp, body = do(http.MethodPost, "/admin/crawl?seed=a.test", "admin-token-0123456789", `{"seeds":["b.test"]}`)
	want := `POST /admin/crawl?seed=a.test Bearer admin-token-0123456789 {"seeds":["b.test"]} from-client:1`
	if resp.StatusCode != http.StatusAccepted || body != want || resp.Header.Get("Retry-After") != "7" || resp.Header.Get(fwdNode) != "n7" {
		t.Fatalf("forwarded: %d %q (Retry-After %q, node %q); want 202 %q from n7", resp.StatusCode, body,
			resp.Header.Get("Retry-After"), resp.Header.Get(fwdNode), want)
	}

	// The term ends: the node stops answering.
	endTerm()
	waitUntil(t, "the old leader to stop answering", 10*time.Second, func() bool {
		resp, _ := do(http.MethodGet, "/indexnow?url=https://a.test/&key=k", "", "")
		return resp.StatusCode == http.StatusServiceUnavailable
	})
}

func itoa(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
