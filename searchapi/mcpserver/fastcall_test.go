package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfinder/agentfinder/federation"
)

// diffBackend answers every tool at once and alike for alike requests: an
// answer naming what was asked (with characters JSON encoders escape), an
// API error when the request holds "api-error", a fault when it holds
// "fault".
type diffBackend struct{}

func (diffBackend) fail(request string) error {
	switch {
	case strings.Contains(request, "api-error"):
		return &Error{Code: "invalid_request", Message: "text is wrong <here>", CorrelationID: "cid-1"}
	case strings.Contains(request, "fault"):
		return errors.New("the index is down")
	}
	return nil
}

func (d diffBackend) Search(_ context.Context, request []byte) (json.RawMessage, *federation.ShownAnswer, error) {
	if err := d.fail(string(request)); err != nil {
		return nil, nil, err
	}
	body := fmt.Sprintf(`{"results":[{"identifier":"urn:ai:a.example:agent:a","displayName":"A <b> & \u00fc","type":"t","score":90,
		"source":"https://r.example","trust":{"level":"domain"},"health":{"status":"up","latencyMs":3}}],
		"referrals":[],"pageToken":"tok","asked":%q}`, request)
	return json.RawMessage(body), nil, nil
}

func (d diffBackend) Agent(_ context.Context, identifier string) (json.RawMessage, error) {
	if err := d.fail(identifier); err != nil {
		return nil, err
	}
	return json.RawMessage(fmt.Sprintf(`{"identifier":%q,"displayName":"A & B","type":"t","bindings":[{"protocol":"mcp","url":"https://a.example/mcp"}]}`, identifier)), nil
}

func (d diffBackend) Explore(_ context.Context, request []byte) (json.RawMessage, error) {
	if err := d.fail(string(request)); err != nil {
		return nil, err
	}
	return json.RawMessage(fmt.Sprintf(`{"total":3,"facets":{"type":{"t":2,"u":1}},"asked":%q}`, request)), nil
}

func (d diffBackend) Tools(_ context.Context, text string, limit int) (json.RawMessage, error) {
	if err := d.fail(text); err != nil {
		return nil, err
	}
	return json.RawMessage(fmt.Sprintf(`{"query":%q,"limit":%d,"results":[{"server":{"identifier":"urn:ai:a","score":50,"health":{"status":"up"}},"tool":{"name":"convert","description":"<converts>"}}]}`, text, limit)), nil
}

// diffCase is one HTTP request sent to the door with and without the fast
// path, and whether the fast path should answer it.
type diffCase struct {
	name   string
	method string
	host   string
	header http.Header
	body   string
	fast   bool
	either bool // which answers it is the SDK's decoder's business
}

// callHeader is the header of a tool call of version v as the SDK's client
// sends it.
func callHeader(v, tool string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	if v != "" {
		h.Set(headerProtocolVersion, v)
	}
	if v >= statelessVersion {
		h.Set(headerMethod, "tools/call")
		h.Set(headerName, tool)
	}
	return h
}

// callMeta is the _meta of a tool call of version v as the SDK's client
// sends it ("" for versions before 2026-07-28: none).
func callMeta(v string) string {
	if v < statelessVersion {
		return ""
	}
	return fmt.Sprintf(`"_meta":{%q:%q,%q:{"name":"c","version":"1"},%q:{"roots":{"listChanged":true}}},`, metaProtocolVersion, v, metaClientInfo, metaClientCaps)
}

// callBody is a tools/call request of tool with args (raw JSON, "" for
// none) and the params' _meta members meta.
func callBody(id, meta, tool, args string) string {
	a := ""
	if args != "" {
		a = `,"arguments":` + args
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{%s"name":%q%s}}`, id, meta, tool, a)
}

// diffCases are the requests TestFastCallsAnswerAsTheSDK sends for protocol
// version v (v "" sends none).
func diffCases(v string) []diffCase {
	known := v == "" || v == "2024-11-05" || v == "2025-03-26" || v == "2025-06-18" || v == "2025-11-25" || v == "2026-07-28"
	meta := callMeta(v)
	call := func(name, tool, args string, fast bool) diffCase {
		return diffCase{name: name, header: callHeader(v, tool), body: callBody("1", meta, tool, args), fast: fast && known}
	}
	cs := []diffCase{
		call("search", "search", `{"text":"book a flight","federation":"none","pageSize":10,"filter":{"tags":["x"]}}`, true),
		call("search, every member", "search", `{"text":"pdf & <b>","type":["a"],"publisher":["p"],"compliance":["c"],"federation":"auto","pageSize":3,"pageToken":"t","minScore":0}`, true),
		call("search, api error", "search", `{"text":"api-error"}`, true),
		call("search, fault", "search", `{"text":"fault"}`, true),
		call("search, arguments the schema refuses", "search", `{"text":7,"colour":"red"}`, true),
		call("search, no text", "search", `{}`, true),
		call("search, arguments null", "search", `null`, true),
		call("search, no arguments", "search", ``, true),
		call("search, arguments no object", "search", `[1,2]`, true),
		call("search, arguments too deep for the SDK", "search", `{"text":"x","filter":`+strings.Repeat("[", 1001)+strings.Repeat("]", 1001)+`}`, false),
		{name: "search, a number no float holds", header: callHeader(v, "search"), body: callBody("1", meta, "search", `{"text":"x","pageSize":1e400}`), either: true},
		call("get_agent", "get_agent", `{"identifier":"urn:ai:a.example:agent:a"}`, true),
		call("get_agent, not found", "get_agent", `{"identifier":"api-error"}`, true),
		call("get_agent, no identifier", "get_agent", `{"identifier":""}`, true),
		call("explore", "explore", `{"text":"x","facets":["type","tags"]}`, true),
		call("explore, fault", "explore", `{"text":"fault"}`, true),
		call("find_tool", "find_tool", `{"text":"convert a pdf","limit":5}`, true),
		call("find_tool, limit out of range", "find_tool", `{"text":"x","limit":500}`, true),
		call("unknown tool", "no_such_tool", `{}`, false),
	}
	id := func(name, id string, fast bool) diffCase {
		return diffCase{name: name, header: callHeader(v, "search"), body: callBody(id, meta, "search", `{"text":"x"}`), fast: fast && known}
	}
	cs = append(cs,
		id("id string", `"call-<1>"`, true),
		id("id fractional", `1.5`, true),
		id("id large", `9007199254740993`, true),
		id("id null", `null`, false),
		id("id object", `{"a":1}`, false),
	)
	raw := func(name, body string) diffCase {
		return diffCase{name: name, header: callHeader(v, "search"), body: body}
	}
	either := func(name, body string) diffCase {
		return diffCase{name: name, header: callHeader(v, "search"), body: body, either: true}
	}
	p := `"params":{` + meta + `"name":"search","arguments":{"text":"x"}}`
	cs = append(cs,
		raw("no id", `{"jsonrpc":"2.0","method":"tools/call",`+p+`}`),
		raw("jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"tools/call",`+p+`}`),
		raw("no params", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`),
		raw("params null", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`),
		raw("params array", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}`),
		raw("name a number", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`"name":5}}`),
		raw("Name in capitals", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`"Name":"search","arguments":{"text":"x"}}}`),
		raw("METHOD in capitals", `{"jsonrpc":"2.0","id":1,"METHOD":"tools/call",`+p+`}`),
		either("name twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`"name":"nope","name":"search","arguments":{"text":"x"}}}`),
		either("name escaped", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`"\u006eame":"search","arguments":{"text":"x"}}}`),
		either("method twice", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call",`+p+`}`),
		diffCase{name: "another member", header: callHeader(v, "search"), body: `{"jsonrpc":"2.0","id":1,"method":"tools/call",` + p + `,"extra":true}`, fast: known},
		raw("inputResponses", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`"name":"search","arguments":{"text":"x"},"inputResponses":{}}}`),
		raw("requestState", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`"name":"search","arguments":{"text":"x"},"requestState":"s"}}`),
		raw("batch", `[`+callBody("1", meta, "search", `{"text":"x"}`)+`]`),
		raw("not JSON", `{"jsonrpc":`),
		raw("trailing text", callBody("1", meta, "search", `{"text":"x"}`)+` {}`),
		raw("empty body", ``),
		raw("tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+strings.TrimSuffix(meta, ",")+`}}`),
		raw("ping", `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
		raw("server/discover", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+strings.TrimSuffix(meta, ",")+`}}`),
		raw("initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`),
		raw("initialized", `{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		raw("a response", `{"jsonrpc":"2.0","id":1,"result":{}}`),
		raw("over the size limit", callBody("1", meta, "search", `{"text":"`+strings.Repeat("x", 70<<10)+`"}`)),
	)
	cs = append(cs, metaCases(v, known)...)
	return append(cs, headerCases(v, known)...)
}

// metaCases are calls of version v whose _meta varies.
func metaCases(v string, known bool) []diffCase {
	stateless := v >= statelessVersion
	m := func(name, meta string, fast bool) diffCase {
		return diffCase{name: name, header: callHeader(v, "search"), body: callBody("1", `"_meta":{`+meta+`},`, "search", `{"text":"x"}`), fast: fast && known}
	}
	pv := fmt.Sprintf("%q:%q", metaProtocolVersion, v)
	caps := fmt.Sprintf(`%q:{}`, metaClientCaps)
	return []diffCase{
		m("meta: version and capabilities", pv+","+caps, stateless),
		m("meta: no capabilities", pv, false),
		m("meta: capabilities null", pv+fmt.Sprintf(`,%q:null`, metaClientCaps), false),
		m("meta: capabilities wrong", pv+fmt.Sprintf(`,%q:{"roots":5}`, metaClientCaps), false),
		m("meta: capabilities with everything", pv+fmt.Sprintf(`,%q:{"roots":{},"sampling":{},"elicitation":{"form":{}},"experimental":{"x":{"n":1e300}}}`, metaClientCaps), stateless),
		m("meta: client info null", pv+","+caps+fmt.Sprintf(`,%q:null`, metaClientInfo), false),
		m("meta: client info wrong", pv+","+caps+fmt.Sprintf(`,%q:{"name":5}`, metaClientInfo), false),
		m("meta: client info", pv+","+caps+fmt.Sprintf(`,%q:{"name":"c","version":"2","title":"C"}`, metaClientInfo), stateless),
		m("meta: a later version", fmt.Sprintf("%q:%q,", metaProtocolVersion, "2099-01-01")+caps, false),
		m("meta: legacy version", fmt.Sprintf("%q:%q,", metaProtocolVersion, "2025-06-18")+caps, false),
		m("meta: version a number", fmt.Sprintf("%q:5,", metaProtocolVersion)+caps, false),
		m("meta: progress token and log level", pv+","+caps+`,"progressToken":"p1","io.modelcontextprotocol/logLevel":"debug"`, stateless),
		m("meta: progress token alone", `"progressToken":7`, !stateless),
		{name: "meta: a number no float holds", header: callHeader(v, "search"), body: callBody("1", `"_meta":{`+pv+","+caps+`,"x":1e400},`, "search", `{"text":"x"}`), either: true},
		{name: "meta null", header: callHeader(v, "search"), body: callBody("1", `"_meta":null,`, "search", `{"text":"x"}`), fast: !stateless && known},
	}
}

// headerCases are calls of version v whose HTTP request varies.
func headerCases(v string, known bool) []diffCase {
	stateless := v >= statelessVersion
	h := func(name string, edit func(http.Header), fast bool) diffCase {
		hd := callHeader(v, "search")
		edit(hd)
		return diffCase{name: name, header: hd, body: callBody("1", callMeta(v), "search", `{"text":"x"}`), fast: fast && known}
	}
	return []diffCase{
		h("no Accept", func(h http.Header) { h.Del("Accept") }, false),
		h("Accept JSON only", func(h http.Header) { h.Set("Accept", "application/json") }, false),
		h("Accept */*", func(h http.Header) { h.Set("Accept", "*/*") }, true),
		h("Accept as two headers", func(h http.Header) { h["Accept"] = []string{"application/*;q=0.9", "TEXT/*"} }, true),
		h("Content-Type text", func(h http.Header) { h.Set("Content-Type", "text/plain") }, false),
		h("Content-Type with charset", func(h http.Header) { h.Set("Content-Type", "application/json; charset=utf-8") }, true),
		h("Content-Type malformed", func(h http.Header) { h.Set("Content-Type", "application/json; =") }, false),
		h("Last-Event-ID", func(h http.Header) { h.Set(headerLastEventID, "s_1") }, false),
		h("session id", func(h http.Header) { h.Set("Mcp-Session-Id", "abc") }, true),
		h("no Mcp-Method", func(h http.Header) { h.Del(headerMethod) }, !stateless),
		h("Mcp-Method wrong", func(h http.Header) { h.Set(headerMethod, "tools/list") }, !stateless),
		h("no Mcp-Name", func(h http.Header) { h.Del(headerName) }, !stateless),
		h("Mcp-Name wrong", func(h http.Header) { h.Set(headerName, "get_agent") }, !stateless),
		h("Mcp-Name twice", func(h http.Header) { h[headerName] = []string{"search", "get_agent"} }, true),
	}
}

// countingNext counts the requests the fast path passes on.
type countingNext struct {
	h http.Handler
	n atomic.Int64
}

func (c *countingNext) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.n.Add(1)
	c.h.ServeHTTP(w, r)
}

// diffDoors serves the door over diffBackend twice on loopback, with the
// fast path and without it (the SDK's handler alone), and returns both
// URLs and the count of requests the fast path passed on.
func diffDoors(t *testing.T, opts HTTPOptions) (fastURL, sdkURL string, passed *countingNext) {
	t.Helper()
	srv := newServer(diffBackend{}, Options{Version: "v-test"})
	f := serveHTTP(srv, opts).(*fastCalls)
	passed = &countingNext{h: f.next}
	f.next = passed
	fast := httptest.NewServer(f)
	sdk := httptest.NewServer(Handler(srv.sdk, opts))
	t.Cleanup(fast.Close)
	t.Cleanup(sdk.Close)
	return fast.URL, sdk.URL, passed
}

// TestFastCallsAnswerAsTheSDK sends each request to the door with and
// without the fast path and compares the answers: status, the headers an
// MCP client reads and the body (as JSON when it is JSON, else byte for
// byte). It also holds which requests the fast path answered: every valid
// call of a tool in a protocol version the SDK serves, and nothing else.
func TestFastCallsAnswerAsTheSDK(t *testing.T) {
	versions := append([]string{""}, mcp.SupportedProtocolVersions()...)
	versions = append(versions, "2023-01-01", "2099-01-01", "bogus")
	for _, guard := range []bool{true, false} {
		fastURL, sdkURL, passed := diffDoors(t, HTTPOptions{MaxBodyBytes: 64 << 10, AllowAnyHost: !guard})
		var cases []diffCase
		for _, v := range versions {
			for _, c := range diffCases(v) {
				c.name = fmt.Sprintf("version %q: %s", v, c.name)
				cases = append(cases, c)
			}
		}
		for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
			cases = append(cases, diffCase{name: m, method: m, header: callHeader("", "search"), body: callBody("1", "", "search", `{"text":"x"}`)})
		}
		cases = append(cases, diffCase{name: "a public Host", host: "finder.example", header: callHeader("", "search"),
			body: callBody("1", "", "search", `{"text":"x"}`), fast: !guard})
		took := 0
		for _, c := range cases {
			before := passed.n.Load()
			fast := send(t, fastURL, c)
			if fastAnswered := passed.n.Load() == before; fastAnswered != c.fast && !c.either {
				t.Errorf("guard %v, %s: answered by the fast path %v, want %v", guard, c.name, fastAnswered, c.fast)
			} else if c.fast {
				took++
			}
			if sdk := send(t, sdkURL, c); !sameAnswer(fast, sdk) {
				t.Errorf("guard %v, %s:\nfast path %d %v\n%.600s\nSDK %d %v\n%.600s", guard, c.name,
					fast.status, fast.header, fast.body, sdk.status, sdk.header, sdk.body)
			}
		}
		t.Logf("guard %v: the fast path answered %d of %d requests", guard, took, len(cases))
		if took < 100 {
			t.Errorf("guard %v: the fast path answered %d of %d requests; the cases expect more", guard, took, len(cases))
		}
	}
}

// answer is what a door answered.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// send sends c to the door at url.
func send(t *testing.T, url string, c diffCase) answer {
	t.Helper()
	method := c.method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = c.header.Clone()
	if c.host != "" {
		req.Host = c.host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: body}
}

// sameAnswer reports whether a and b are the same answer to a client.
func sameAnswer(a, b answer) bool {
	if a.status != b.status {
		return false
	}
	for _, k := range []string{"Content-Type", "Cache-Control", "Allow", "X-Content-Type-Options", "Mcp-Session-Id", "Mcp-Protocol-Version"} {
		if !slicesEqual(a.header.Values(k), b.header.Values(k)) {
			return false
		}
	}
	if a.header.Get("Content-Type") != "application/json" {
		return bytes.Equal(a.body, b.body)
	}
	av, aerr := parseJSON(a.body)
	bv, berr := parseJSON(b.body)
	return aerr == nil && berr == nil && reflect.DeepEqual(av, bv)
}

func slicesEqual(a, b []string) bool { return reflect.DeepEqual(a, b) }

// parseJSON reads b as one JSON value, numbers as written.
func parseJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// TestFastCallsServeTheSDKClient: the SDK's own client, speaking each
// protocol version it supports, gets the same tool results from the door
// with and without the fast path, and its tool calls take the fast path.
func TestFastCallsServeTheSDKClient(t *testing.T) {
	fastURL, sdkURL, passed := diffDoors(t, HTTPOptions{})
	calls := []*mcp.CallToolParams{
		{Name: "search", Arguments: map[string]any{"text": "book a flight", "federation": "none"}},
		{Name: "search", Arguments: map[string]any{"text": "api-error"}},
		{Name: "search", Arguments: map[string]any{"text": 7}},
		{Name: "get_agent", Arguments: map[string]any{"identifier": "urn:ai:x"}},
		{Name: "explore", Arguments: map[string]any{"facets": []string{"type"}}},
		{Name: "find_tool", Arguments: map[string]any{"text": "fault"}},
	}
	for _, v := range mcp.SupportedProtocolVersions() {
		fastCS, sdkCS := versionSession(t, fastURL, v), versionSession(t, sdkURL, v)
		for _, p := range calls {
			before := passed.n.Load()
			got, gerr := fastCS.CallTool(t.Context(), p)
			if passed.n.Load() != before {
				t.Errorf("version %s, %s %v: the fast path passed the SDK client's call on", v, p.Name, p.Arguments)
			}
			want, werr := sdkCS.CallTool(t.Context(), p)
			if gerr != nil || werr != nil {
				t.Fatalf("version %s, %s: fast path error %v, SDK error %v", v, p.Name, gerr, werr)
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if !bytes.Equal(gb, wb) {
				t.Errorf("version %s, %s %v:\nfast path %s\nSDK       %s", v, p.Name, p.Arguments, gb, wb)
			}
		}
	}
}

// versionSession connects the SDK's client to url asking for protocol
// version v.
func versionSession(t *testing.T, url, v string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		t.Fatalf("connect with version %s: %v", v, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}
