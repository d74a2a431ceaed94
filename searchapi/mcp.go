package searchapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/agentfinder/agentfinder/searchapi/mcpserver"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// mcpBackend answers the MCP tools (POST /mcp) with the server's own code:
// a tool call is parsed, searched and encoded exactly as the API request it
// stands for, so the search tool's structured content is POST /search's
// answer byte for byte.
type mcpBackend struct{ s *Server }

var _ mcpserver.Backend = mcpBackend{}

// Search implements mcpserver.Backend: POST /search.
func (b mcpBackend) Search(ctx context.Context, request []byte) (json.RawMessage, error) {
	var body search.Request
	if err := search.DecodeJSON(request, &body); err != nil {
		return nil, b.s.mcpError(ctx, "search", err)
	}
	q, err := search.ParseRequest(&body, request, true)
	if err != nil {
		return nil, b.s.mcpError(ctx, "search", err)
	}
	ans, err := b.s.runSearch(ctx, q, nil)
	if err != nil {
		return nil, b.s.mcpError(ctx, "search", err)
	}
	return ans.Encode(), nil
}

// Agent implements mcpserver.Backend: GET /agents/{identifier}.
func (b mcpBackend) Agent(ctx context.Context, identifier string) (json.RawMessage, error) {
	if identifier == "" {
		return nil, b.s.mcpError(ctx, "get_agent", invalid("identifier is required"))
	}
	doc, err := b.s.Agent(ctx, identifier)
	if err != nil {
		return nil, b.s.mcpError(ctx, "get_agent", err)
	}
	return mustJSON(doc), nil
}

// Explore implements mcpserver.Backend: POST /explore.
func (b mcpBackend) Explore(ctx context.Context, request []byte) (json.RawMessage, error) {
	var body exploreBody
	if err := search.DecodeJSON(request, &body); err != nil {
		return nil, b.s.mcpError(ctx, "explore", err)
	}
	out, err := b.s.explore(ctx, &body, request)
	if err != nil {
		return nil, b.s.mcpError(ctx, "explore", err)
	}
	return mustJSON(out), nil
}

// mcpError maps err as writeError does for HTTP (classify decides the code;
// server faults are logged with the correlation id, their detail never
// shown) and returns it as the tool's error.
func (s *Server) mcpError(ctx context.Context, tool string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	cid := correlationID(ctx)
	if cid == "" {
		cid = newCorrelationID()
	}
	ae := classify(err)
	if ae.Status >= 500 {
		s.log.Error("mcp tool call failed", "correlationId", cid, "tool", tool, "status", ae.Status, "err", err)
	}
	return &mcpserver.Error{Code: ae.Code, Message: ae.Message, CorrelationID: cid}
}

// observeToolCall records one MCP tool call in the metrics and the debug log.
func (s *Server) observeToolCall(ctx context.Context, tool, code string, d time.Duration) {
	s.metrics.observeToolCall(tool, code, d)
	if s.log.Enabled(ctx, slog.LevelDebug) {
		s.log.Debug("mcp tool call", "correlationId", correlationID(ctx), "tool", tool, "code", code, "duration", d)
	}
}

// mcpHandler is POST /mcp: the MCP server over stateless streamable HTTP.
func (s *Server) mcpHandler() http.Handler {
	srv := mcpserver.New(mcpBackend{s}, mcpserver.Options{Name: "agentfinder", Version: s.cfg.Version, Observe: s.observeToolCall})
	return mcpserver.Handler(srv, mcpserver.HTTPOptions{
		MaxBodyBytes: maxBodyBytes,
		// Behind a reverse proxy on this machine, requests reach a loopback
		// address with the public name as Host: the SDK's DNS-rebinding
		// guard must then let them through. A registry served under a
		// loopback URL keeps the guard.
		AllowAnyHost: !loopbackURL(s.publicURL),
	})
}

// loopbackURL reports whether u's host is localhost or a loopback address.
func loopbackURL(u string) bool {
	pu, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := pu.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
