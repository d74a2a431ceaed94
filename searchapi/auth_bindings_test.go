package searchapi

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/searchtest"
)

// bearerTransport adds an Authorization header to every request, as an MCP
// client holding a key does.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// hrSeen reports whether identifiers include one of the hr-only records,
// and whether they include any public one.
func hrSeen(identifiers []string) (hr, public bool) {
	for _, id := range identifiers {
		hr = hr || strings.Contains(id, "hr.example")
		public = public || strings.Contains(id, "public.example")
	}
	return hr, public
}

// TestMCPAuth: the MCP endpoint under auth, driven by the SDK's client: an
// anonymous session never sees a hidden record (search nor get_agent), a
// session with the right key does, and required mode refuses to connect
// without a key.
func TestMCPAuth(t *testing.T) {
	f, _, _ := newAuthFixture(t, AuthOptional)
	searchIDs := func(cs *mcp.ClientSession) []string {
		var got struct {
			Results []struct {
				Identifier string `json:"identifier"`
			} `json:"results"`
		}
		if res := callTool(t, cs, "search", map[string]any{"text": "payroll", "federation": "none", "pageSize": 50}, &got); res.IsError {
			t.Fatalf("search: %s", toolText(res))
		}
		var ids []string
		for _, r := range got.Results {
			ids = append(ids, r.Identifier)
		}
		return ids
	}
	hidden := "urn:ai:hr.example:agent:payroll-0"
	anon := searchtest.MCPSession(t, f.http.URL+"/mcp", f.http.Client())
	if hr, pub := hrSeen(searchIDs(anon)); hr || !pub {
		t.Fatalf("anonymous MCP search: hr %v public %v", hr, pub)
	}
	if res := callTool(t, anon, "get_agent", map[string]any{"identifier": hidden}, nil); !res.IsError {
		t.Fatalf("anonymous get_agent of a hidden record succeeded: %s", toolText(res))
	}
	keyed := searchtest.MCPSession(t, f.http.URL+"/mcp", &http.Client{Transport: bearerTransport{"hr-secret", f.http.Client().Transport}})
	if hr, pub := hrSeen(searchIDs(keyed)); !hr || !pub {
		t.Fatalf("hr key MCP search: hr %v public %v", hr, pub)
	}
	if res := callTool(t, keyed, "get_agent", map[string]any{"identifier": hidden}, nil); res.IsError {
		t.Fatalf("hr key get_agent: %s", toolText(res))
	}

	req, _, _ := newAuthFixture(t, AuthRequired)
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	if cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: req.http.URL + "/mcp", HTTPClient: req.http.Client(), DisableStandaloneSSE: true, MaxRetries: -1}, nil); err == nil {
		_ = cs.Close()
		t.Fatal("anonymous MCP session accepted in required mode")
	}
	rs := searchtest.MCPSession(t, req.http.URL+"/mcp", &http.Client{Transport: bearerTransport{"hr-secret", req.http.Client().Transport}})
	if hr, _ := hrSeen(searchIDs(rs)); !hr {
		t.Fatal("required mode, hr key: hr records missing")
	}
}

// TestHAIDIPAuth: the HAIDIP binding under auth: hidden records never reach
// an anonymous caller, reach the right key, and required mode answers 401
// in HAIDIP's error shape with WWW-Authenticate (and xu's and ADP's 401 in
// theirs).
func TestHAIDIPAuth(t *testing.T) {
	f, _, _ := newAuthFixture(t, AuthOptional)
	search := func(f *fixture, tok string) (int, haidipOut) {
		t.Helper()
		var out haidipOut
		resp := f.do(http.MethodPost, "/agents/search", map[string]any{"query": "payroll", "top": 50, "federation": "none"}, bearerHdr(tok), &out)
		return resp.StatusCode, out
	}
	for _, c := range []struct {
		tok        string
		hr, public bool
	}{{"", false, true}, {"fin-secret", false, true}, {"hr-secret", true, true}} {
		status, out := search(f, c.tok)
		hr, pub := hrSeen(haidipIDs(out.Results))
		if status != http.StatusOK || hr != c.hr || pub != c.public {
			t.Errorf("key %q: %d hr %v public %v, want hr %v public %v", c.tok, status, hr, pub, c.hr, c.public)
		}
		if c.tok == "" && out.Count != len(out.Results) {
			t.Errorf("anonymous count %d, results %d", out.Count, len(out.Results))
		}
	}

	req, _, _ := newAuthFixture(t, AuthRequired)
	var raw struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	resp := req.do(http.MethodPost, "/agents/search", map[string]any{"query": "payroll"}, nil, &raw)
	if resp.StatusCode != http.StatusUnauthorized || raw.Error.Code != "Unauthorized" || raw.Error.Message == "" || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("required, anonymous: %d %+v WWW-Authenticate %q", resp.StatusCode, raw.Error, resp.Header.Get("WWW-Authenticate"))
	}
	// The xu and ADP bindings answer 401 in their own shapes too.
	var xu struct {
		Code string `json:"code"`
	}
	if r := req.do(http.MethodPost, "/discover", map[string]any{"query": "payroll"}, nil, &xu); r.StatusCode != http.StatusUnauthorized || xu.Code != door.CodeUnauthorized {
		t.Errorf("xu, required, anonymous: %d code %q", r.StatusCode, xu.Code)
	}
	raw.Error.Code = ""
	if r := req.do(http.MethodPost, "/adp/discover", map[string]any{"query": "payroll"}, nil, &raw); r.StatusCode != http.StatusUnauthorized || raw.Error.Code != "UNAUTHORIZED" {
		t.Errorf("ADP, required, anonymous: %d code %q", r.StatusCode, raw.Error.Code)
	}
	if status, out := search(req, "hr-secret"); status != http.StatusOK || !slices.ContainsFunc(haidipIDs(out.Results), func(id string) bool { return strings.Contains(id, "hr.example") }) {
		t.Fatalf("required, hr key: %d %v", status, haidipIDs(out.Results))
	}
}
