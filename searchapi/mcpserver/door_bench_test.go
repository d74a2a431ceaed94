package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// answerBackend answers every search with one engine answer, its body
// encoded on each call as the engine door does; values says whether it
// hands the search text the answer's values (as the engine door does) or
// leaves the text to read the body (as a remote registry's answer is read).
type answerBackend struct {
	ans    *search.Answer
	values bool
}

func (a answerBackend) Search(context.Context, []byte) (json.RawMessage, *federation.ShownAnswer, error) {
	if !a.values {
		return a.ans.Encode(), nil, nil
	}
	shown, err := a.ans.Shown()
	return a.ans.Encode(), shown, err
}

func (a answerBackend) Agent(context.Context, string) (json.RawMessage, error) { return nil, nil }
func (a answerBackend) Explore(context.Context, []byte) (json.RawMessage, error) {
	return nil, nil
}
func (a answerBackend) Tools(context.Context, string, int) (json.RawMessage, error) {
	return nil, nil
}

// benchAnswer is a first page of ten local results shaped like the
// engine's (the members of an indexed entry, score and source).
func benchAnswer() *search.Answer {
	ans := &search.Answer{PageToken: "eyJvIjoxMH0"}
	for i := range 10 {
		s := func(v string) json.RawMessage { b, _ := json.Marshal(v); return b }
		ans.Hits = append(ans.Hits, federation.Hit{Local: true, Entry: map[string]json.RawMessage{
			"identifier":  s(fmt.Sprintf("urn:ai:h%d.example:mcp:server-%d", i, i)),
			"displayName": s(fmt.Sprintf("Server %d", i)),
			"type":        s("application/mcp-server+json"),
			"url":         s(fmt.Sprintf("https://h%d.example/.well-known/ai-catalog.json", i)),
			"description": s("Reads and writes spreadsheets, converts PDF documents to markdown and books flights for the user, with a long second sentence as catalogs have."),
			"score":       json.RawMessage(fmt.Sprint(90 - i)),
			"source":      s("https://registry.example"),
			"publisher":   json.RawMessage(`{"identifier":"h.example","displayName":"H"}`),
			"tags":        json.RawMessage(`["files","pdf","travel","spreadsheets"]`),
			"protocols":   json.RawMessage(`["mcp"]`),
			"bindings":    json.RawMessage(`[{"protocol":"mcp","url":"https://h.example/mcp","transport":"streamable-http"}]`),
			"trust":       json.RawMessage(`{"level":"domain"}`),
			"health":      json.RawMessage(`{"status":"up","latencyMs":42,"checkedAt":"2026-11-26T10:00:00Z"}`),
		}})
	}
	return ans
}

// BenchmarkSearchToolCall serves one search tool call (the request the
// SDK's client sends, captured once) with a backend answering at once, so
// what is timed is the MCP door: the door as served (the fast path,
// fastCalls) and the SDK's handler alone (Handler: its stateless session
// and checks), each with the tool's input, its text and the JSON-RPC
// answer. The search text is made from the body (as for a remote
// registry's answer) and from the answer's values (as the engine door
// does).
func BenchmarkSearchToolCall(b *testing.B) {
	ans := benchAnswer()
	for _, door := range []string{"fast", "sdk"} {
		for _, values := range []bool{false, true} {
			name := door + "/text from body"
			if values {
				name = door + "/text from values"
			}
			b.Run(name, func(b *testing.B) {
				srv := newServer(answerBackend{ans: ans, values: values}, Options{})
				h := serveHTTP(srv, HTTPOptions{})
				if door == "sdk" {
					h = Handler(srv.sdk, HTTPOptions{})
				}
				hdr, body := captureCall(b, h, "search", map[string]any{"text": "convert pdf to markdown", "federation": "none", "pageSize": 10})
				b.ReportAllocs()
				for b.Loop() {
					r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
					r.Header = hdr.Clone()
					w := httptest.NewRecorder()
					h.ServeHTTP(w, r)
					if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`Server 9`)) {
						b.Fatalf("status %d: %.300s", w.Code, w.Body.String())
					}
				}
			})
		}
	}
}

// captureCall makes one tool call with the SDK's client over loopback
// HTTP and returns the headers and body it sent.
func captureCall(b testing.TB, h http.Handler, tool string, args map[string]any) (http.Header, []byte) {
	b.Helper()
	var hdr http.Header
	var body []byte
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bb, _ := io.ReadAll(r.Body)
		if bytes.Contains(bb, []byte(`"tools/call"`)) {
			hdr, body = r.Header.Clone(), bb
		}
		r.Body = io.NopCloser(bytes.NewReader(bb))
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(b.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hs.Client(), DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || res.IsError || body == nil {
		b.Fatalf("call %s: %v %+v", tool, err, res)
	}
	return hdr, body
}
