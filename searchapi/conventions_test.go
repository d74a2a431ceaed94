package searchapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/ingest/meili"
)

// conventionServer is a Server whose Meilisearch is never asked: the
// routes tested here answer without it.
func conventionServer(t *testing.T, origins []string) *Server {
	t.Helper()
	s, err := New(Config{Index: "unused", Meili: meili.New("http://127.0.0.1:1", ""), CORSOrigins: origins}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func serveOnce(h http.Handler, method, path string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestCORS(t *testing.T) {
	preflight := map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST"}
	star := conventionServer(t, DefaultCORSOrigins).Handler()
	rec := serveOnce(star, http.MethodOptions, "/search", preflight)
	if rec.Code != http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(rec.Header().Get("Access-Control-Allow-Methods"), "POST") || !strings.Contains(rec.Header().Get("Access-Control-Allow-Headers"), "Content-Type") {
		t.Errorf("preflight: %d %v", rec.Code, rec.Header())
	}
	rec = serveOnce(star, http.MethodGet, "/healthz", map[string]string{"Origin": "https://app.example"})
	if rec.Header().Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(rec.Header().Get("Access-Control-Expose-Headers"), "X-Correlation-ID") {
		t.Errorf("simple request: %v", rec.Header())
	}
	if rec := serveOnce(star, http.MethodOptions, "/nowhere", preflight); rec.Code == http.StatusNoContent {
		t.Error("preflight answered for an unknown path")
	}

	one := conventionServer(t, []string{"https://app.example"}).Handler()
	rec = serveOnce(one, http.MethodOptions, "/agents", map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "GET"})
	if rec.Code != http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example" || rec.Header().Get("Vary") != "Origin" {
		t.Errorf("listed origin: %d %v", rec.Code, rec.Header())
	}
	rec = serveOnce(one, http.MethodOptions, "/agents", map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"})
	if rec.Code == http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("other origin: %d %v", rec.Code, rec.Header())
	}
	off := conventionServer(t, nil).Handler()
	if rec := serveOnce(off, http.MethodGet, "/healthz", map[string]string{"Origin": "https://app.example"}); rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Error("CORS headers with no origins configured")
	}
}

func TestAccessLog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	mux := http.NewServeMux()
	mux.Handle("/", conventionServer(t, nil).Handler())
	h := AccessLog(mux, log)
	serveOnce(h, http.MethodGet, "/agents/urn:ai:a.test:x?x=1", nil)
	serveOnce(h, http.MethodGet, "/healthz", map[string]string{"X-Correlation-ID": "abc-123"})
	out := buf.String()
	for _, want := range []string{
		`msg=request method=GET route="GET /agents/{identifier...}" status=`,
		`msg=request method=GET route="GET /healthz" status=200 duration=`,
		"correlationId=abc-123",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("access log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "msg=request"); n != 2 {
		t.Errorf("%d lines for 2 requests:\n%s", n, out)
	}
}

// TestOpenAPICoversEveryRoute: every route the Server registers is in the
// OpenAPI document (a new route without its entry fails here), every
// operation has a summary, and the document names its server and the
// admin endpoints' bearer scheme.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	s := conventionServer(t, nil)
	if len(s.Routes()) < 8 {
		t.Fatalf("routes %v", s.Routes())
	}
	if missing := UndocumentedRoutes(s.Routes()); len(missing) > 0 {
		t.Errorf("routes missing from openapi.json: %v", missing)
	}
	if got := UndocumentedRoutes([]string{"GET /not-a-route", "POST /agents", "GET /agents/{identifier...}", "/"}); strings.Join(got, ",") != "GET /not-a-route,POST /agents" {
		t.Errorf("UndocumentedRoutes = %v, want the two undocumented ones", got)
	}
	var doc struct {
		Servers    []map[string]any                     `json:"servers"`
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			SecuritySchemes map[string]map[string]any `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Servers) == 0 || doc.Components.SecuritySchemes["adminToken"]["scheme"] != "bearer" {
		t.Errorf("servers %v, security schemes %v", doc.Servers, doc.Components.SecuritySchemes)
	}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if s, _ := op["summary"].(string); s == "" {
				t.Errorf("%s %s has no summary", strings.ToUpper(method), path)
			}
			if strings.HasPrefix(path, "/admin/") && op["security"] == nil {
				t.Errorf("%s %s has no security requirement", strings.ToUpper(method), path)
			}
		}
	}
}

// TestJSONAnswersNoSniff: every JSON answer, success or error, carries
// X-Content-Type-Options: nosniff (a browser must not read an answer that
// echoes request text as HTML).
func TestJSONAnswersNoSniff(t *testing.T) {
	h := conventionServer(t, nil).Handler()
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/healthz"},
		{http.MethodGet, "/openapi.json"},
		{http.MethodGet, "/.well-known/ai-catalog.json"},
		{http.MethodGet, "/nowhere"},
		{http.MethodPost, "/search"},
		{http.MethodDelete, "/agents"},
	} {
		rec := serveOnce(h, c.method, c.path, nil)
		if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			t.Errorf("%s %s: Content-Type %q, want JSON", c.method, c.path, rec.Header().Get("Content-Type"))
		}
		if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s (%d): X-Content-Type-Options %q, want nosniff", c.method, c.path, rec.Code, got)
		}
	}
}

// TestMCPRefusesBatches: POST /mcp takes one JSON-RPC message per request.
// A batch (which would run every call in it past the per-client rate limit
// and the search slots) is answered 400 with a JSON-RPC invalid request
// error, and text that is not JSON with a parse error; one message still
// gets its answer.
func TestMCPRefusesBatches(t *testing.T) {
	h := conventionServer(t, nil).Handler()
	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`
	post := func(body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	batch := make([]string, 50)
	for i := range batch {
		batch[i] = fmt.Sprintf(call, i+1)
	}
	for _, c := range []struct {
		name, body string
		code       int
	}{
		{"batch", "[" + strings.Join(batch, ",") + "]", -32600},
		{"not JSON", "tools/list please", -32700},
	} {
		rec := post(c.body)
		var ans struct {
			ID    any `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &ans); rec.Code != http.StatusBadRequest || err != nil || ans.Error.Code != c.code || ans.ID != nil {
			t.Errorf("%s: %d %s, want 400 with JSON-RPC error %d", c.name, rec.Code, rec.Body.String(), c.code)
		}
	}
	if rec := post(fmt.Sprintf(call, 1)); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"search"`) {
		t.Errorf("one message: %d %s", rec.Code, rec.Body.String())
	}
}
