package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// engineBackend answers the tools (POST /mcp) with the search engine
// itself: a tool call is parsed, searched and encoded exactly as the API
// request it stands for, so the search tool's structured content is POST
// /search's answer byte for byte.
type engineBackend struct {
	engine *search.Engine
	log    *slog.Logger
}

var _ Backend = engineBackend{}

// Search implements Backend: POST /search, with what the answer shows
// read from its values (the search text need not decode the body).
func (b engineBackend) Search(ctx context.Context, request []byte) (json.RawMessage, *federation.ShownAnswer, error) {
	var body search.Request
	if err := search.DecodeJSON(request, &body); err != nil {
		return nil, nil, b.toolError(ctx, "search", err)
	}
	q, err := search.ParseRequest(&body, request, true)
	if err != nil {
		return nil, nil, b.toolError(ctx, "search", err)
	}
	ans, err := b.engine.Search(ctx, door.Prepare(ctx, q), nil)
	if err != nil {
		return nil, nil, b.toolError(ctx, "search", err)
	}
	shown, err := ans.Shown()
	if err != nil {
		shown = nil // the text reads the body, as it reads any registry's
	}
	return ans.Encode(), shown, nil
}

// Agent implements Backend: GET /agents/{identifier}.
func (b engineBackend) Agent(ctx context.Context, identifier string) (json.RawMessage, error) {
	if identifier == "" {
		return nil, b.toolError(ctx, "get_agent", door.Invalid("identifier is required"))
	}
	doc, err := b.engine.Agent(ctx, identifier, door.AccessOf(ctx))
	if err != nil {
		return nil, b.toolError(ctx, "get_agent", err)
	}
	return door.MustJSON(doc), nil
}

// Explore implements Backend: POST /explore.
func (b engineBackend) Explore(ctx context.Context, request []byte) (json.RawMessage, error) {
	var body search.ExploreRequest
	if err := search.DecodeJSON(request, &body); err != nil {
		return nil, b.toolError(ctx, "explore", err)
	}
	out, err := b.engine.Explore(ctx, &body, request, door.AccessOf(ctx))
	if err != nil {
		return nil, b.toolError(ctx, "explore", err)
	}
	return door.MustJSON(out), nil
}

// Tools implements Backend (find_tool): GET /tools.
func (b engineBackend) Tools(ctx context.Context, text string, limit int) (json.RawMessage, error) {
	q, limit, err := search.ToolsQuery(text, limit)
	if err != nil {
		return nil, b.toolError(ctx, "find_tool", err)
	}
	ans, err := b.engine.Search(ctx, door.Prepare(ctx, q), nil)
	if err != nil {
		return nil, b.toolError(ctx, "find_tool", err)
	}
	return door.MustJSON(search.ToolPairs(q, ans, limit, func(e map[string]json.RawMessage) json.RawMessage {
		cfg, _ := door.MCPClientConfig(e)
		return cfg
	})), nil
}

// toolError maps err as the server does for HTTP (door.Classify decides the
// code; server faults are logged with the correlation id, their detail
// never shown) and returns it as the tool's error.
func (b engineBackend) toolError(ctx context.Context, tool string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	cid := door.CorrelationID(ctx)
	if cid == "" {
		cid = door.NewCorrelationID()
	}
	ae := door.Classify(err)
	if ae.Status >= 500 {
		b.log.Error("mcp tool call failed", "correlationId", cid, "tool", tool, "status", ae.Status, "err", err)
	}
	return &Error{Code: ae.Code, Message: ae.Message, CorrelationID: cid}
}

// DoorOptions configure the MCP door.
type DoorOptions struct {
	// Version is the server version the MCP handshake reports.
	Version string
	// PublicURL is the registry's base URL: served under a loopback URL,
	// the SDK's DNS-rebinding guard stays on.
	PublicURL string
	// Observe, when set, is told of every tool call (Options.Observe).
	Observe func(ctx context.Context, tool, code string, d time.Duration)
	// Logger receives server faults of tool calls; nil discards them.
	Logger *slog.Logger
}

// Door is POST /mcp over a search engine: the MCP server over stateless
// streamable HTTP, behind the server's API middleware like every door, a
// call of a tool answered by the fast path (fastCalls), every other
// request by the SDK.
type Door struct{ handler http.Handler }

// NewDoor returns the MCP door over e.
func NewDoor(e *search.Engine, opts DoorOptions) *Door {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := newServer(engineBackend{engine: e, log: log}, Options{Name: "agentfinder", Version: opts.Version, Observe: opts.Observe})
	return &Door{handler: serveHTTP(srv, HTTPOptions{
		MaxBodyBytes: door.MaxBodyBytes,
		// Behind a reverse proxy on this machine, requests reach a loopback
		// address with the public name as Host: the SDK's DNS-rebinding
		// guard must then let them through. A registry served under a
		// loopback URL keeps the guard.
		AllowAnyHost: !loopbackURL(opts.PublicURL),
	})}
}

// Routes are the door's one route; the SDK answers its own errors.
func (d *Door) Routes() []door.Route {
	return []door.Route{{Pattern: "POST /mcp", Handle: func(w http.ResponseWriter, r *http.Request) error {
		d.handler.ServeHTTP(w, r)
		return nil
	}}}
}

// loopbackURL reports whether u's host is localhost or a loopback address
// (the test the SDK's guard makes of a Host header, sdkLoopback).
func loopbackURL(u string) bool {
	pu, err := url.Parse(u)
	return err == nil && sdkLoopback(pu.Host)
}
