package probe

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfinder/agentfinder/normalize"
)

// sseServer serves an SDK server with n tools (descriptions of descLen
// bytes, pageSize a page) over the HTTP+SSE transport on loopback.
func sseServer(t *testing.T, n, descLen, pageSize int) *httptest.Server {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "sse-fixture", Version: "1"}, &mcp.ServerOptions{PageSize: pageSize})
	for i := range n {
		srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool_%04d", i), Description: strings.Repeat("d", descLen),
			InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("fixture tools do nothing")
		})
	}
	hs := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs
}

func testLimits(maxTools int, maxBytes int64, maxPages int) *toolLimits {
	return &toolLimits{maxTools: maxTools, maxBytes: maxBytes, maxPages: maxPages,
		now: func() normalize.ToolSet { return normalize.ToolSet{Source: normalize.ToolsListed} }}
}

func TestListToolsSSEBounds(t *testing.T) {
	client := &http.Client{Timeout: 20 * time.Second}
	cases := []struct {
		name              string
		tools, desc, page int
		lim               *toolLimits
		want              int
		truncated         string
		atMost            int // when want is 0: some, at most this many
	}{
		{"all of a short list", 3, 20, 1000, testLimits(500, 1<<20, 50), 3, "", 0},
		{"2,000 tools: the first 500", 2000, 20, 1000, testLimits(500, 1<<20, 50), 500, normalize.TruncatedTools, 0},
		{"pages followed up to the bound", 100, 20, 10, testLimits(500, 1<<20, 3), 30, normalize.TruncatedPages, 0},
		{"answers past the byte bound are not read", 400, 1000, 50, testLimits(500, 64<<10, 50), 0, normalize.TruncatedBytes, 64},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs := sseServer(t, c.tools, c.desc, c.page)
			ts, err := listToolsSSE(context.Background(), noLimit{}, client, Target{Kind: KindMCPSSE, URL: hs.URL}, c.lim)
			if err != nil {
				t.Fatal(err)
			}
			got := len(ts.Items)
			switch {
			case ts.Truncated != c.truncated:
				t.Errorf("truncated %q, want %q (%d tools)", ts.Truncated, c.truncated, got)
			case c.want > 0 && got != c.want:
				t.Errorf("%d tools, want %d", got, c.want)
			case c.want == 0 && (got == 0 || got > c.atMost):
				t.Errorf("%d tools, want some and at most %d (64 KiB of 1 KB descriptions)", got, c.atMost)
			}
		})
	}
}

// TestListToolsSSEOwnHost: an event stream naming another host for its
// requests gets none sent there, and no tools are read.
func TestListToolsSSEOwnHost(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer other.Close()
	stream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: endpoint\ndata: "+other.URL+"/messages\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer stream.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ts, err := listToolsSSE(ctx, noLimit{}, &http.Client{Timeout: 10 * time.Second}, Target{Kind: KindMCPSSE, URL: stream.URL}, testLimits(500, 1<<20, 50))
	if err == nil || ts != nil {
		t.Errorf("tools %v, error %v: want an error", ts, err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d requests reached the other host", n)
	}
}

// noLimit holds no host's slots: listToolsSSE alone, without a Visitor.
type noLimit struct{}

func (noLimit) Hold(context.Context, string, int) (func(), error) { return func() {}, nil }
