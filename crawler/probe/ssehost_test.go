package probe_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/probe"
	"github.com/agentfinder/agentfinder/normalize"
)

// sseHost is one loopback host serving MCP servers over the older HTTP+SSE
// transport at /sse/0, /sse/1, ..., each with tools tools. It counts the
// requests to them in flight (an event stream is in flight as long as it
// is open), and each server's tools/list waits for gate to close.
type sseHost struct {
	hs       *httptest.Server
	inFlight atomic.Int32
	gated    atomic.Int32
	gate     chan struct{}
}

func newSSEHost(t *testing.T, servers, tools int) *sseHost {
	t.Helper()
	h := &sseHost{gate: make(chan struct{})}
	mux := http.NewServeMux()
	for i := range servers {
		srv := mcp.NewServer(&mcp.Implementation{Name: fmt.Sprintf("sse-%d", i), Version: "1"}, nil)
		for j := range tools {
			srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool_%d", j), Description: "does a thing", InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return nil, fmt.Errorf("fixture tools do nothing")
				})
		}
		srv.AddReceivingMiddleware(h.waitForGate)
		mux.Handle(fmt.Sprintf("/sse/%d", i), mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	}
	h.hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/sse/") {
			h.inFlight.Add(1)
			defer h.inFlight.Add(-1)
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(h.hs.Close)
	return h
}

// waitForGate holds tools/list until the gate opens.
func (h *sseHost) waitForGate(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			h.gated.Add(1)
			select {
			case <-h.gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return next(ctx, method, req)
	}
}

// sseRecords are one MCP record per server of h, remote type sse.
func sseRecords(h *sseHost, servers int) []normalize.Record {
	recs := make([]normalize.Record, servers)
	for i := range recs {
		recs[i] = normalize.Record{Identifier: fmt.Sprintf("urn:ai:sse.test:mcp:s%d", i), Type: normalize.TypeMCP,
			Bindings: []normalize.Binding{{Protocol: "mcp", URL: fmt.Sprintf("%s/sse/%d", h.hs.URL, i), Transport: "sse"}}}
	}
	return recs
}

// lockedSink keeps every verdict and tool list, by identifier.
type lockedSink struct {
	mu     sync.Mutex
	health map[string]normalize.Health
	tools  map[string]*normalize.ToolSet
}

func (s *lockedSink) SetHealth(_ context.Context, id, _ string, h normalize.Health) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.health[id] = h
	return true, nil
}

func (s *lockedSink) SetTools(_ context.Context, id, _ string, ts *normalize.ToolSet) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tools[id] = ts
	return true, nil
}

// sseProber is a prober over a crawler limited to perHost requests at a
// time per host (a delay, when set, makes it one).
func sseProber(t *testing.T, perHost int, delay time.Duration) (*probe.Prober, *lockedSink) {
	t.Helper()
	cr, err := crawler.New(crawler.Config{AllowPrivate: true, Timeout: 20 * time.Second, DisableDNS: true,
		PerHostConcurrency: perHost, Delay: delay}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cr.Close() })
	sink := &lockedSink{health: map[string]normalize.Health{}, tools: map[string]*normalize.ToolSet{}}
	p, err := probe.New(probe.Config{Concurrency: 8}, cr, sink)
	if err != nil {
		t.Fatal(err)
	}
	return p, sink
}

// TestSSEConversationsKeepThePerHostLimit: six SSE servers on one host,
// probed by eight workers under a limit of two requests per host. While
// the tool lists are held back, every conversation that could start has
// (its event stream open, its tools/list sent) and the host serves no more
// requests at once than the limit; then every server is found up with its
// tools, the conversations having waited for their turn without blocking
// each other.
func TestSSEConversationsKeepThePerHostLimit(t *testing.T) {
	const servers, tools, perHost = 6, 3, 2
	h := newSSEHost(t, servers, tools)
	p, sink := sseProber(t, perHost, 0)
	p.Observe("https://sse.test/.well-known/ai-catalog.json", sseRecords(h, servers))
	done := make(chan int, 1)
	go func() { done <- p.RunDue(t.Context()) }()

	deadline := time.Now().Add(20 * time.Second)
	for h.gated.Load() == 0 {
		if time.Now().After(deadline) {
			close(h.gate)
			t.Fatalf("no tools/list reached a server within 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Let every request that can start start, and every abandoned one end.
	time.Sleep(500 * time.Millisecond)
	inFlight, gated := h.inFlight.Load(), h.gated.Load()
	close(h.gate)
	if inFlight > perHost {
		t.Errorf("%d requests in flight to one host (%d conversations listing tools at once), want at most the limit, %d", inFlight, gated, perHost)
	}

	select {
	case n := <-done:
		if n != servers {
			t.Errorf("RunDue probed %d records, want %d", n, servers)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the round did not end within 60 s after the tool lists were let through")
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	for _, r := range sseRecords(h, servers) {
		if got := sink.health[r.Identifier]; got.Status != normalize.HealthUp || got.Transport != "sse" {
			t.Errorf("%s: verdict %+v, want up over sse", r.Identifier, got)
		}
		if ts := sink.tools[r.Identifier]; ts == nil || len(ts.Items) != tools {
			t.Errorf("%s: tools %+v, want %d", r.Identifier, ts, tools)
		}
	}
}

// TestSSEToolsNeedTwoRequests: a host limited to one request at a time (a
// delay between requests) cannot carry an SSE conversation, which holds
// its event stream open while it POSTs: the servers are found up by their
// stream, their tools are not read, and the verdict says why.
func TestSSEToolsNeedTwoRequests(t *testing.T) {
	const servers = 2
	h := newSSEHost(t, servers, 3)
	close(h.gate)
	p, sink := sseProber(t, 4, 10*time.Millisecond)
	p.Observe("https://sse.test/.well-known/ai-catalog.json", sseRecords(h, servers))
	if n := p.RunDue(t.Context()); n != servers {
		t.Fatalf("RunDue probed %d records, want %d", n, servers)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	for _, r := range sseRecords(h, servers) {
		got := sink.health[r.Identifier]
		if got.Status != normalize.HealthUp || !strings.Contains(got.Detail, "limit") {
			t.Errorf("%s: verdict %+v, want up, its detail naming the host's limit", r.Identifier, got)
		}
		if ts := sink.tools[r.Identifier]; ts != nil {
			t.Errorf("%s: tools %+v read over a conversation the limit cannot carry", r.Identifier, ts)
		}
	}
	if n := h.gated.Load(); n != 0 {
		t.Errorf("%d tools/list calls reached the servers, want none", n)
	}
}
