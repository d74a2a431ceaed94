package probe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/probe"
	"github.com/agentfinder/agentfinder/normalize"
)

// TestProbeRealMCPServer probes a real MCP server (the official SDK's
// streamable-HTTP handler), answering initialize with an event stream or
// with JSON: the probe reads the headers only, so an open stream cannot
// hold it; it finds the server up and closes the session it opened.
func TestProbeRealMCPServer(t *testing.T) {
	for _, jsonResponse := range []bool{false, true} {
		name := map[bool]string{false: "event stream", true: "json"}[jsonResponse]
		t.Run(name, func(t *testing.T) {
			srv := mcp.NewServer(&mcp.Implementation{Name: "probe-target", Version: "1.0.0"}, nil)
			mux := http.NewServeMux()
			mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))
			hs := httptest.NewServer(mux)
			defer hs.Close()
			cr, err := crawler.New(crawler.Config{AllowPrivate: true, Timeout: 5 * time.Second, DisableDNS: true}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cr.Close()
			got := make(verdicts, 1)
			p, err := probe.New(probe.Config{}, cr, got)
			if err != nil {
				t.Fatal(err)
			}
			p.Observe("https://mcp.test/.well-known/ai-catalog.json", []normalize.Record{{Identifier: "urn:ai:mcp.test:mcp:real", Type: normalize.TypeMCP,
				Bindings: []normalize.Binding{{Protocol: "mcp", URL: hs.URL + "/mcp", Transport: "streamable-http"}}}})
			if n := p.RunDue(t.Context()); n != 1 {
				t.Fatalf("RunDue probed %d records, want 1", n)
			}
			if h := <-got; h.Status != normalize.HealthUp {
				t.Errorf("verdict %+v, want up", h)
			}
			open := 0
			for range srv.Sessions() {
				open++
			}
			if open != 0 {
				t.Errorf("%d MCP sessions left open after the probe, want 0 (initialize, then DELETE)", open)
			}
		})
	}
}

// endless is a reader of n bytes of a tools/list answer that never closes
// its array: {"jsonrpc":"2.0","id":3,"result":{"tools":[{...},{...},...
type endless struct{ n, read int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= e.n {
		return 0, io.EOF
	}
	const head = `{"jsonrpc":"2.0","id":3,"result":{"tools":[`
	const tool = `{"name":"t","description":"a tool among very many"},`
	i := 0
	for ; i < len(p) && e.read < e.n; i++ {
		if e.read < int64(len(head)) {
			p[i] = head[e.read]
		} else {
			p[i] = tool[(e.read-int64(len(head)))%int64(len(tool))]
		}
		e.read++
	}
	return i, nil
}

// TestToolListBounded: a server whose tools/list answer is 1 GB (about
// 20 million tools) costs the prober one bounded read: the list is cut at
// the byte bound and marked, the server stays up, and the answer is
// abandoned long before its end.
func TestToolListBounded(t *testing.T) {
	var served atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     int    `json:"id"`
			Method string `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		switch req.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"huge","version":"1"}}}`, req.ID)
		case "tools/list":
			src := &endless{n: 1 << 30}
			n, _ := io.Copy(w, src)
			served.Add(n)
		default:
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer hs.Close()
	cr, err := crawler.New(crawler.Config{AllowPrivate: true, Timeout: 10 * time.Second, DisableDNS: true}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	var got []*normalize.ToolSet
	sink := toolSink{verdicts: make(verdicts, 1), tools: &got}
	p, err := probe.New(probe.Config{}, cr, sink)
	if err != nil {
		t.Fatal(err)
	}
	p.Observe("https://huge.test/.well-known/ai-catalog.json", []normalize.Record{{Identifier: "urn:ai:huge.test:mcp:huge", Type: normalize.TypeMCP,
		Bindings: []normalize.Binding{{Protocol: "mcp", URL: hs.URL + "/mcp", Transport: "streamable-http"}}}})
	p.RunDue(t.Context())
	if h := <-sink.verdicts; h.Status != normalize.HealthUp || h.ServerName != "huge" {
		t.Errorf("verdict %+v, want up (server huge)", h)
	}
	if len(got) != 1 || got[0].Truncated != normalize.TruncatedBytes || len(got[0].Items) != 0 {
		t.Fatalf("tools %+v, want one list cut at the byte bound", got)
	}
	hs.CloseClientConnections()
	if n := served.Load(); n >= 1<<30 {
		t.Errorf("the whole 1 GB answer was read (%d bytes)", n)
	}
}

// toolSink is verdicts that also keeps the tool lists handed on.
type toolSink struct {
	verdicts
	tools *[]*normalize.ToolSet
}

func (s toolSink) SetTools(_ context.Context, _, _ string, ts *normalize.ToolSet) (bool, error) {
	*s.tools = append(*s.tools, ts)
	return true, nil
}
