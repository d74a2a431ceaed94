package mcpserver

import (
	"bytes"
	"encoding/json"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdkjson "github.com/segmentio/encoding/json"
)

// fastCalls answers the door's hot request, a call of one of our tools, in
// front of the SDK's streamable HTTP handler, and passes every other
// request to it untouched (next).
//
// Why it exists: for each POST the SDK (v1.8.0, the newest available) opens
// a stateless session of its own, decodes the request three times, checks
// the Mcp-* headers of protocol 2026-07-28 by encoding and decoding the
// tool's whole input schema again on every call, and encodes the result
// about three times over, compacting the structured content each time: most
// of what an MCP search cost over POST /search (docs/MEASUREMENTS.md, "MCP
// search against POST /search"). None of it can be turned off through the
// SDK's API. fastCalls answers the one request that matters for latency in
// one pass, the structured content being the engine's encoded answer as it
// is.
//
// It answers exactly what the SDK would, and only where it can be sure of
// that: a request it takes passes every check the SDK makes (method,
// DNS-rebinding guard, Content-Type, Accept, body size, protocol version
// header, the JSON-RPC message, the 2026-07-28 _meta fields and Mcp-Method
// and Mcp-Name headers), read as the SDK reads it (the message and its
// params decoded by the SDK's JSON reader, segmentio/encoding/json, into
// the shapes the SDK decodes them into, its own types where they are
// exported), and is a plain tools/call of a tool whose input schema binds
// no argument to a header. Anything else, a request the SDK would
// refuse among them, goes to the SDK, which answers it (its errors, its
// status codes). TestFastCallsAnswerAsTheSDK holds both answers equal over
// valid and invalid requests of every protocol version. One difference
// no client sees: the tool runs under the HTTP request's context, so a
// client that goes away cancels its search, where the SDK's session lets
// the call run to its end and drops the answer.
type fastCalls struct {
	next     http.Handler
	calls    map[string]toolCall
	impl     *mcp.Implementation
	meta     json.RawMessage // the result's _meta of protocol 2026-07-28
	versions map[string]bool // the protocol versions the SDK serves
	guard    bool            // the SDK's DNS-rebinding guard is on
	maxBody  int64
}

// The protocol's names the fast path reads (the SDK's, unexported there).
const (
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
	headerLastEventID     = "Last-Event-ID"
	methodCallTool        = "tools/call"
	statelessVersion      = "2026-07-28" // the first version whose requests carry their own _meta
	metaProtocolVersion   = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo        = "io.modelcontextprotocol/clientInfo"
	metaClientCaps        = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo        = "io.modelcontextprotocol/serverInfo"
)

// serveHTTP is the door's handler over s: the SDK's (Handler) with the
// fast path in front of it.
func serveHTTP(s *server, opts HTTPOptions) http.Handler {
	meta, err := json.Marshal(map[string]any{metaServerInfo: s.impl})
	if err != nil {
		panic("mcpserver: server info: " + err.Error())
	}
	f := &fastCalls{
		next:     Handler(s.sdk, opts),
		calls:    map[string]toolCall{},
		impl:     s.impl,
		meta:     meta,
		versions: map[string]bool{},
		guard:    !opts.AllowAnyHost,
		maxBody:  opts.maxBody(),
	}
	for _, v := range mcp.SupportedProtocolVersions() {
		f.versions[v] = true
	}
	for _, tool := range s.tools {
		if !bindsHeaders(tool) {
			f.calls[tool.Name] = s.calls[tool.Name]
		}
	}
	return f
}

// bindsHeaders reports whether tool's input schema may bind an argument to
// an Mcp-Param-* header (x-mcp-header), which the SDK checks and the fast
// path does not.
func bindsHeaders(tool *mcp.Tool) bool {
	raw, ok := tool.InputSchema.(json.RawMessage)
	return !ok || bytes.Contains(raw, []byte("x-mcp-header"))
}

// ServeHTTP implements http.Handler.
func (f *fastCalls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		f.next.ServeHTTP(w, r)
		return
	}
	if body, ok := peekBody(r, f.maxBody); ok {
		if c, ok := f.take(r, body); ok {
			f.answer(w, r, c)
			return
		}
	}
	f.next.ServeHTTP(w, r)
}

// fastCall is a request the fast path answers.
type fastCall struct {
	id        jsonrpc.ID
	call      toolCall
	args      json.RawMessage
	stateless bool // protocol 2026-07-28: the result carries resultType and _meta
}

// take returns the call body asks for when the fast path may answer it.
func (f *fastCalls) take(r *http.Request, body []byte) (fastCall, bool) {
	version, ok := f.transportAccepts(r)
	if !ok {
		return fastCall{}, false
	}
	id, params, ok := readCall(body)
	if !ok {
		return fastCall{}, false
	}
	var p *mcp.CallToolParamsRaw
	if !sdkUnmarshal(params, &p) || p == nil || p.InputResponses != nil || p.RequestState != "" {
		return fastCall{}, false
	}
	call, ok := f.calls[p.Name]
	if !ok {
		return fastCall{}, false
	}
	stateless := version >= statelessVersion
	if stateless && !statelessCallAccepted(r.Header, params, p, version) {
		return fastCall{}, false
	}
	if _, own := p.Meta[metaProtocolVersion]; own && !stateless {
		return fastCall{}, false // a call of an older version naming a version of its own: the SDK judges it
	}
	return fastCall{id: id, call: call, args: p.Arguments, stateless: stateless}, true
}

// wireMessage is a JSON-RPC message as the SDK's jsonrpc.DecodeMessage
// reads it.
type wireMessage struct {
	VersionTag string          `json:"jsonrpc"`
	ID         any             `json:"id,omitempty"`
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// sdkMaxDepth is the deepest nesting the SDK's JSON reader takes; a body
// with fewer brackets in all cannot nest deeper.
const sdkMaxDepth = 1000

// readCall returns the id and params of body when it is one JSON-RPC
// tools/call request with params, read as the SDK reads it
// (jsonrpc.DecodeMessage, without the 32 KiB buffer its reader takes for
// each decoding).
func readCall(body []byte) (jsonrpc.ID, json.RawMessage, bool) {
	body = bytes.TrimSpace(body)
	if bytes.Count(body, []byte("{"))+bytes.Count(body, []byte("[")) > sdkMaxDepth || !json.Valid(body) || len(body) == 0 || body[0] != '{' {
		return jsonrpc.ID{}, nil, false
	}
	var m wireMessage
	var method string
	if !sdkUnmarshal(body, &m) || m.VersionTag != "2.0" || len(m.Method) == 0 || !sdkUnmarshal(m.Method, &method) {
		return jsonrpc.ID{}, nil, false
	}
	id, err := jsonrpc.MakeID(m.ID)
	if err != nil || !id.IsValid() || method != methodCallTool || len(m.Params) == 0 {
		return jsonrpc.ID{}, nil, false
	}
	return id, m.Params, true
}

// transportAccepts applies the SDK's checks of the HTTP request (those of
// StreamableHTTPHandler and its stateless POST) and returns its protocol
// version header: false when the SDK would refuse the request or the
// version is none the SDK serves.
func (f *fastCalls) transportAccepts(r *http.Request) (string, bool) {
	if f.guard {
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil &&
			sdkLoopback(local.String()) && !sdkLoopback(r.Host) {
			return "", false
		}
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return "", false
	}
	if jsonOK, streamOK := sdkAccepts(r.Header.Values("Accept")); !jsonOK || !streamOK {
		return "", false
	}
	if len(r.Header.Values(headerLastEventID)) > 0 {
		return "", false
	}
	version := r.Header.Get(headerProtocolVersion)
	return version, version == "" || f.versions[version]
}

// statelessCallAccepted applies the SDK's checks of a call of protocol
// 2026-07-28 (or later): its _meta names the header's version and holds
// valid client capabilities (and, when present, valid client info), and
// the Mcp-Method and Mcp-Name headers name the method and the tool.
func statelessCallAccepted(h http.Header, params json.RawMessage, p *mcp.CallToolParamsRaw, version string) bool {
	if v, _ := p.Meta[metaProtocolVersion].(string); v != version {
		return false
	}
	if _, present := p.Meta[metaClientInfo]; present && !metaDecodes[mcp.Implementation](p.Meta, metaClientInfo) {
		return false
	}
	if !metaDecodes[clientCapabilities](p.Meta, metaClientCaps) {
		return false
	}
	var named mcp.CallToolParams // the SDK reads the name for the header check so
	if !sdkUnmarshal(params, &named) || named.Name != p.Name {
		return false
	}
	return h.Get(headerMethod) == methodCallTool && h.Get(headerName) == p.Name
}

// clientCapabilities is the shape the SDK decodes a call's
// clientCapabilities into (ClientCapabilities, roots as of 2026-07-28).
type clientCapabilities struct {
	mcp.ClientCapabilities
	Roots *mcp.RootCapabilities `json:"roots,omitempty"`
}

// metaDecodes reports whether the _meta value under key is present, not
// null, and decodes into a T as the SDK decodes it (encoded again, then
// read by its reader).
func metaDecodes[T any](meta mcp.Meta, key string) bool {
	v, ok := meta[key]
	if !ok || v == nil {
		return false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var t *T
	return sdkUnmarshal(b, &t)
}

// sdkUnmarshal decodes data into v as the SDK's JSON reader does
// (segmentio/encoding/json, struct fields matched by their exact name), so
// that the fast path reads a request as the SDK reads it: the same keys,
// the same duplicates, the same escapes.
func sdkUnmarshal(data []byte, v any) bool {
	rest, err := sdkjson.Parse(data, v, sdkjson.DontMatchCaseInsensitiveStructFields)
	return err == nil && len(rest) == 0
}

// sdkAccepts is the SDK's reading of the Accept header: whether it accepts
// JSON and event streams.
func sdkAccepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for _, raw := range strings.Split(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// sdkLoopback is the SDK's DNS-rebinding guard's test of an address or a
// Host header: localhost or a loopback IP, with or without a port.
func sdkLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// answer runs c and writes its JSON-RPC response as the SDK's stateless
// JSON response does.
func (f *fastCalls) answer(w http.ResponseWriter, r *http.Request, c fastCall) {
	res := c.call(r.Context(), c.args)
	body, err := f.response(c, res)
	if err != nil {
		http.Error(w, "encoding the result failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// response is the JSON-RPC response carrying res, its structured content
// written as it is when it is already JSON.
func (f *fastCalls) response(c fastCall, res *mcp.CallToolResult) ([]byte, error) {
	id, err := json.Marshal(c.id.Raw())
	if err != nil {
		return nil, err
	}
	content := res.Content
	if content == nil {
		content = []mcp.Content{}
	}
	text, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	structured, err := structuredJSON(res.StructuredContent)
	if err != nil {
		return nil, err
	}
	meta, err := f.resultMeta(c, res.Meta)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(text)+len(structured)+len(meta)+128)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":{`...)
	if meta != nil {
		b = append(b, `"_meta":`...)
		b = append(b, meta...)
		b = append(b, ',')
	}
	b = append(b, `"content":`...)
	b = append(b, text...)
	if structured != nil {
		b = append(b, `,"structuredContent":`...)
		b = append(b, structured...)
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	if c.stateless {
		b = append(b, `,"resultType":"complete"`...)
	}
	return append(b, "}}"...), nil
}

// resultMeta is the result's _meta as JSON, nil when it has none: the
// tool's own, with the server's implementation added in protocol
// 2026-07-28, as the SDK adds it.
func (f *fastCalls) resultMeta(c fastCall, m mcp.Meta) ([]byte, error) {
	if c.stateless && m == nil {
		return f.meta, nil
	}
	if c.stateless {
		if _, ok := m[metaServerInfo]; !ok {
			m = maps.Clone(m)
			m[metaServerInfo] = f.impl
		}
	}
	if len(m) == 0 {
		return nil, nil
	}
	return json.Marshal(m)
}

// structuredJSON is a result's structured content as JSON: an encoded
// answer as it is, anything else encoded; nil when there is none.
func structuredJSON(v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return v, nil
	}
	return json.Marshal(v)
}
