package probe_test

import (
	"net/http"
	"net/http/httptest"
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
