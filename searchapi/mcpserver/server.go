// Package mcpserver is Agent Finder's MCP server (Agent Finder §7.3): the
// tools search, get_agent, explore and find_tool, built with the official
// MCP Go SDK, answering from a Backend. It is the MCP door of the server: NewDoor
// serves them on POST /mcp with the search engine (searchapi/search) as the
// Backend, a tool call answered by a fast path in front of the SDK's
// handler as the SDK would answer it (fastcall.go); `agentfinder mcp`
// serves them over stdio with a registry's HTTP API (Remote) as the
// Backend. The package holds no search logic: a tool call becomes the API
// request it stands for, and the API's answer becomes the tool result. It
// imports the engine and searchapi/door only, never another door.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfinder/agentfinder/federation"
)

// Backend answers the tools. Request and response bodies are those of the
// Agent Finder HTTP API, so a tool call means exactly what the API call
// means. An answer the caller must see as an error is returned as *Error.
// Implementations must be safe for concurrent use.
type Backend interface {
	// Search runs a POST /search request body and returns the response
	// body, and what the answer shows (federation.SearchAnswer's Shown)
	// when the backend holds the answer's values, or nil: the search text
	// then reads the body.
	Search(ctx context.Context, request []byte) (json.RawMessage, *federation.ShownAnswer, error)
	// Agent returns GET /agents/{identifier}'s response body.
	Agent(ctx context.Context, identifier string) (json.RawMessage, error)
	// Explore runs a POST /explore request body and returns the response body.
	Explore(ctx context.Context, request []byte) (json.RawMessage, error)
	// Tools returns GET /tools?q=text&limit=limit's response body (limit
	// 0: the API's default).
	Tools(ctx context.Context, text string, limit int) (json.RawMessage, error)
}

// Error is an error answer of the Agent Finder API: its error model's code
// (invalid_request, not_found, unavailable, ...), a message safe to show and
// the request's correlation id.
type Error struct {
	Code          string `json:"code"`
	Message       string `json:"message"`
	CorrelationID string `json:"correlationId,omitempty"`
}

// Error returns the error's code and message.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Options configure New. The zero value is usable.
type Options struct {
	// Name and Version identify the server to clients. Name defaults to
	// "agentfinder".
	Name, Version string
	// Observe, when set, is called after every tool call with the tool's
	// name, the outcome ("ok" or the API error code) and how long it took.
	Observe func(ctx context.Context, tool, code string, d time.Duration)
}

// New returns an MCP server with the tools answering from b.
func New(b Backend, opts Options) *mcp.Server { return newServer(b, opts).sdk }

// server is an MCP server with its tools' calls by name, which the door's
// fast path (fastCalls) answers without the SDK, and the implementation
// its results name.
type server struct {
	sdk   *mcp.Server
	impl  *mcp.Implementation
	tools []*mcp.Tool
	calls map[string]toolCall
}

// newServer builds the MCP server with the tools answering from b.
func newServer(b Backend, opts Options) *server {
	if opts.Name == "" {
		opts.Name = "agentfinder"
	}
	impl := &mcp.Implementation{Name: opts.Name, Title: "Agent Finder", Version: opts.Version}
	s := &server{
		sdk:   mcp.NewServer(impl, &mcp.ServerOptions{Instructions: instructions}),
		impl:  impl,
		calls: map[string]toolCall{},
	}
	t := &tools{b: b, observe: opts.Observe}
	addTyped(s, searchTool(), t.search)
	addTyped(s, getAgentTool(), t.getAgent)
	addTyped(s, exploreTool(), t.explore)
	addTyped(s, findToolTool(), t.findTool)
	return s
}

// addTyped adds tool to s, answered by h with its arguments checked and
// decoded as an In (typedCall).
func addTyped[In any](s *server, tool *mcp.Tool, h func(context.Context, In) *mcp.CallToolResult) {
	s.add(tool, typedCall(tool, h))
}

// add adds tool, answered by call.
func (s *server) add(tool *mcp.Tool, call toolCall) {
	addTool(s.sdk, tool, call)
	s.tools = append(s.tools, tool)
	s.calls[tool.Name] = call
}

// HTTPOptions configure Handler.
type HTTPOptions struct {
	// MaxBodyBytes bounds a request body; 0 means 64 KiB.
	MaxBodyBytes int64
	// AllowAnyHost turns off the SDK's DNS-rebinding guard, which refuses
	// requests reaching a loopback address with a non-loopback Host header.
	// Set it when a reverse proxy on the same machine forwards a public name.
	AllowAnyHost bool
}

// maxBody is the bound on a request body: MaxBodyBytes, 64 KiB when unset.
func (o HTTPOptions) maxBody() int64 {
	if o.MaxBodyBytes <= 0 {
		return 64 << 10
	}
	return o.MaxBodyBytes
}

// Handler serves srv over streamable HTTP, stateless (no session between
// calls) with JSON responses instead of event streams. A body that is not
// one JSON-RPC message (a batch among them) is answered 400 with a
// JSON-RPC error: one HTTP request is one call.
func Handler(srv *mcp.Server, opts HTTPOptions) http.Handler {
	maxBody := opts.maxBody()
	return refuseMalformed(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		MaxRequestBodyBytes:        maxBody,
		DisableLocalhostProtection: opts.AllowAnyHost,
	}), maxBody)
}

// tools are the tool handlers over one Backend.
type tools struct {
	b       Backend
	observe func(ctx context.Context, tool, code string, d time.Duration)
}

// result turns a backend answer into a tool result: the answer as
// structured content plus text, or an API error as a tool error the model
// can read (MCP reports failed tool executions in the result, not as
// protocol errors).
func (t *tools) result(ctx context.Context, tool string, start time.Time, body json.RawMessage, err error, text func(json.RawMessage) string) *mcp.CallToolResult {
	code := "ok"
	defer func() {
		if t.observe != nil {
			t.observe(ctx, tool, code, time.Since(start))
		}
	}()
	if err != nil {
		var ae *Error
		if !errors.As(err, &ae) {
			ae = &Error{Code: "internal", Message: "internal error"}
		}
		code = ae.Code
		msg := ae.Code + ": " + ae.Message
		if ae.CorrelationID != "" {
			msg += " (correlationId " + ae.CorrelationID + ")"
		}
		return &mcp.CallToolResult{
			IsError:           true,
			Content:           []mcp.Content{&mcp.TextContent{Text: msg}},
			StructuredContent: map[string]*Error{"error": ae},
		}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text(body)}},
		StructuredContent: body,
	}
}

func (t *tools) search(ctx context.Context, in searchInput) *mcp.CallToolResult {
	start := time.Now()
	body, shown, err := t.b.Search(ctx, in.request())
	return t.result(ctx, "search", start, body, err, func(b json.RawMessage) string { return renderSearch(in.Text, b, shown) })
}

func (t *tools) getAgent(ctx context.Context, in getAgentInput) *mcp.CallToolResult {
	start := time.Now()
	body, err := t.b.Agent(ctx, in.Identifier)
	return t.result(ctx, "get_agent", start, body, err, renderAgent)
}

func (t *tools) explore(ctx context.Context, in exploreInput) *mcp.CallToolResult {
	start := time.Now()
	body, err := t.b.Explore(ctx, in.request())
	return t.result(ctx, "explore", start, body, err, renderExplore)
}
