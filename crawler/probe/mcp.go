package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
)

// MCP protocol versions the prober speaks. server/discover (stateless,
// SEP-2575) is tried first; servers that do not know it get initialize,
// newest version first.
const (
	mcpStateless = "2026-07-28"
	mcpSSE       = "2024-11-05" // the HTTP+SSE transport's version
)

// mcpInitVersions are the initialize versions tried in order: a server
// answering with an error to one gets the next.
var mcpInitVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// maxHandshakeBytes bounds the answer to server/discover and initialize.
const maxHandshakeBytes = 256 << 10

// clientInfo is how the prober introduces itself.
var clientInfo = map[string]string{"name": "AgentFinderBot", "version": "1"}

// mcpConn is one conversation with an MCP streamable-HTTP endpoint: the
// version agreed, and the session an initialize opened.
type mcpConn struct {
	v         visitor
	url       string
	version   string
	stateless bool
	session   string
	nextID    int
	latency   time.Duration
}

// answer is one request's outcome before it is read as JSON-RPC.
type answer struct {
	res   *crawler.VisitResponse
	reply *rpcReply
	err   error // a *notRPC when the body held no JSON-RPC response
}

// call POSTs one JSON-RPC request and reads its answer (at most limit
// bytes). A transport error is returned; everything else is in answer.
func (c *mcpConn) call(ctx context.Context, method string, params any, limit int64) (answer, error) {
	c.nextID++
	id := c.nextID
	res, err := c.v.Exchange(ctx, http.MethodPost, c.url, c.header(method), rpcRequest(id, method, params), limit)
	if err != nil {
		return answer{}, err
	}
	c.latency = max(c.latency, res.Elapsed)
	a := answer{res: res}
	a.reply, a.err = readReply(res.Header, res.Body, id)
	return a, nil
}

// header is what every request of the conversation carries.
func (c *mcpConn) header(method string) http.Header {
	h := http.Header{}
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Content-Type", "application/json")
	if c.version != "" {
		h.Set("Mcp-Protocol-Version", c.version)
	}
	if c.stateless {
		h.Set("Mcp-Method", method)
	}
	if c.session != "" {
		h.Set("Mcp-Session-Id", c.session)
	}
	return h
}

// meta is the per-request _meta of the stateless protocol.
func (c *mcpConn) meta() map[string]any {
	return map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    c.version,
		"io.modelcontextprotocol/clientInfo":         clientInfo,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}}
}

// close ends the session an initialize opened, as the transport asks of
// clients that are done; its answer does not matter.
func (c *mcpConn) close(ctx context.Context) {
	if c.session == "" {
		return
	}
	h := http.Header{}
	h.Set("Mcp-Session-Id", c.session)
	if c.version != "" {
		h.Set("Mcp-Protocol-Version", c.version)
	}
	_, _ = c.v.Visit(ctx, http.MethodDelete, c.url, h, nil)
	c.session = ""
}

// serverInfo is what an MCP server says it is.
type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// discoverResult is the part of a server/discover result the prober reads.
type discoverResult struct {
	SupportedVersions []string `json:"supportedVersions"`
	Meta              struct {
		ServerInfo serverInfo `json:"io.modelcontextprotocol/serverInfo"`
	} `json:"_meta"`
}

// initializeResult is the part of an initialize result the prober reads.
type initializeResult struct {
	ProtocolVersion string     `json:"protocolVersion"`
	ServerInfo      serverInfo `json:"serverInfo"`
}

// checkMCP holds a conversation with an MCP streamable-HTTP endpoint:
// server/discover, else initialize at each version in turn; on an open
// endpoint, tools/list when tools is set. It never calls a tool.
func checkMCP(ctx context.Context, v visitor, t Target, tools *toolLimits) result {
	c := &mcpConn{v: v, url: t.URL}
	r, settled := c.discover(ctx, t)
	if !settled {
		r = c.initialize(ctx, t)
	}
	if r.outcome != OutcomeUp {
		return r
	}
	defer c.close(ctx)
	if tools != nil {
		if ts, err := c.listTools(ctx, tools); err == nil {
			r.tools, r.toolsRead = ts, true
		} else {
			r.detail = joinDetail(r.detail, "tools/list: "+err.Error())
		}
	}
	r.latency = c.latency
	return r
}

// discover tries the stateless server/discover. settled is true when the
// endpoint answered it (up), or its answer decided the outcome (gated,
// failed, not MCP); false when initialize should be tried.
func (c *mcpConn) discover(ctx context.Context, t Target) (result, bool) {
	c.version, c.stateless = mcpStateless, true
	a, err := c.call(ctx, "server/discover", c.meta(), maxHandshakeBytes)
	if err != nil {
		return failure(t, err), true
	}
	if r, done := settled(ctx, c, t, a); done {
		return r, true
	}
	var d discoverResult
	if a.err == nil && a.reply.Error == nil && json.Unmarshal(a.reply.Result, &d) == nil {
		if v := newest(d.SupportedVersions); v >= mcpStateless {
			c.version = v
			return c.up(t, d.Meta.ServerInfo), true
		}
	}
	c.version, c.stateless = "", false
	return result{}, false
}

// initialize tries initialize at each version of mcpInitVersions until one
// gets a result.
func (c *mcpConn) initialize(ctx context.Context, t Target) result {
	var last answer
	for _, ver := range mcpInitVersions {
		params := map[string]any{"protocolVersion": ver, "capabilities": map[string]any{}, "clientInfo": clientInfo}
		a, err := c.call(ctx, "initialize", params, maxHandshakeBytes)
		if err != nil {
			return failure(t, err)
		}
		if r, done := settled(ctx, c, t, a); done {
			return r
		}
		last = a
		var ir initializeResult
		if a.err != nil || a.reply.Error != nil || json.Unmarshal(a.reply.Result, &ir) != nil || ir.ProtocolVersion == "" {
			continue
		}
		c.version = ir.ProtocolVersion
		c.session = a.res.Header.Get("Mcp-Session-Id")
		c.notifyInitialized(ctx)
		return c.up(t, ir.ServerInfo)
	}
	return notMCP(t, c, last)
}

// notifyInitialized sends the notification that ends the handshake.
func (c *mcpConn) notifyInitialized(ctx context.Context) {
	_, _ = c.v.Exchange(ctx, http.MethodPost, c.url, c.header("notifications/initialized"), rpcNotification("notifications/initialized"), 4<<10)
}

// up is the result of a conversation that got its handshake answered.
func (c *mcpConn) up(t Target, si serverInfo) result {
	return result{outcome: OutcomeUp, latency: c.latency, protocol: "mcp", transport: "streamable-http",
		version: c.version, server: si}
}

// settled decides the answers that end a conversation at once: a gated
// endpoint, a failing one, an HTML page or another API's JSON at 2xx.
func settled(ctx context.Context, v *mcpConn, t Target, a answer) (result, bool) {
	st := a.res.Status
	switch {
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		return gated(ctx, v.v, t, a.res, v.latency), true
	case st >= 500 || st == http.StatusNotFound || st == http.StatusGone || st == http.StatusTooManyRequests:
		return result{outcome: OutcomeFailed, latency: v.latency, detail: fmt.Sprintf("%s: HTTP %d", t.Kind, st)}, true
	case st/100 == 2 && a.err != nil:
		return notMCP(t, v, a), true
	}
	return result{}, false
}

// gated is the result for an endpoint that answered 401 or 403.
func gated(ctx context.Context, v visitor, t Target, res *crawler.VisitResponse, latency time.Duration) result {
	return result{outcome: OutcomeAuthRequired, latency: latency, detail: fmt.Sprintf("%s: HTTP %d", t.Kind, res.Status),
		protocol: "mcp", auth: authChallenge(ctx, v, t.URL, res.Header)}
}

// notMCP is the result for an endpoint that answered without speaking MCP.
func notMCP(t Target, c *mcpConn, a answer) result {
	what := "no MCP answer"
	var nr *notRPC
	switch {
	case errors.As(a.err, &nr):
		what = nr.what
	case a.reply != nil && a.reply.Error != nil:
		what = "initialize refused: " + a.reply.Error.Error()
	}
	if a.res != nil {
		what = fmt.Sprintf("%s (HTTP %d)", what, a.res.Status)
	}
	return result{outcome: OutcomeNotMCP, latency: c.latency, detail: t.Kind + ": " + what}
}

// checkSSE checks a remote on the older HTTP+SSE transport: its event
// stream must open (text/event-stream); the stream is left unread. On an
// open endpoint, its tools are read when tools is set (listToolsSSE).
func checkSSE(ctx context.Context, v visitor, t Target, tools *toolLimits) result {
	r := sseStream(ctx, v, t)
	if r.outcome != OutcomeUp || tools == nil || tools.sse == nil {
		return r
	}
	if ts, err := listToolsSSE(ctx, v, tools.sse, t, tools); err == nil {
		r.tools, r.toolsRead = ts, true
	} else {
		r.detail = joinDetail(r.detail, "tools/list: "+err.Error())
	}
	return r
}

// sseStream opens an SSE remote's event stream.
func sseStream(ctx context.Context, v visitor, t Target) result {
	h := http.Header{}
	h.Set("Accept", "text/event-stream")
	res, err := v.Visit(ctx, http.MethodGet, t.URL, h, nil)
	if err != nil {
		return failure(t, err)
	}
	ct, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	st := res.Status
	switch {
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		return gated(ctx, v, t, res, res.Elapsed)
	case st >= 500 || st == http.StatusNotFound || st == http.StatusGone:
		return result{outcome: OutcomeFailed, latency: res.Elapsed, detail: fmt.Sprintf("%s: HTTP %d", t.Kind, st)}
	case st/100 == 2 && ct == "text/event-stream":
		return result{outcome: OutcomeUp, latency: res.Elapsed, protocol: "mcp", transport: "sse", version: mcpSSE}
	}
	return result{outcome: OutcomeNotMCP, latency: res.Elapsed, detail: fmt.Sprintf("%s: no event stream (HTTP %d, %s)", t.Kind, st, firstOr(ct, "no content type"))}
}

// newest returns the newest of versions (dates sort as strings).
func newest(versions []string) string {
	if len(versions) == 0 {
		return ""
	}
	return slices.Max(versions)
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
