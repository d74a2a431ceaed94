package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolCall answers one call of a tool from its raw arguments (absent
// arguments: nil). A failure is a tool error in the result: our tools
// never answer a call with a JSON-RPC error.
type toolCall func(ctx context.Context, args json.RawMessage) *mcp.CallToolResult

// typedCall is the toolCall of tool with a handler taking its arguments as
// In: they are checked against the tool's input schema, resolved once
// here, and decoded, as mcp.AddTool does, without its per-call detour
// (arguments decoded into a map, the schema's defaults applied, the map
// encoded and decoded a second time, each decoding by the SDK's reader with
// a buffer of 32 KiB of its own). Our input schemas declare no defaults
// (TestInputSchemasDeclareNoDefaults), so there are none to apply.
// Arguments the schema refuses are a tool error, worded as the SDK words
// it.
func typedCall[In any](tool *mcp.Tool, h func(context.Context, In) *mcp.CallToolResult) toolCall {
	schema, err := resolveInput(tool)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: tool %q: input schema: %v", tool.Name, err))
	}
	return func(ctx context.Context, args json.RawMessage) *mcp.CallToolResult {
		in, err := decodeArguments[In](args, schema)
		if err != nil {
			return toolFailure(err)
		}
		if res := h(ctx, in); res != nil {
			return res
		}
		return &mcp.CallToolResult{}
	}
}

// addTool adds tool to srv, answered by call.
func addTool(srv *mcp.Server, tool *mcp.Tool, call toolCall) {
	srv.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return call(ctx, req.Params.Arguments), nil
	})
}

// resolveInput resolves a tool's input schema (JSON, as our tools declare
// it) for validation.
func resolveInput(tool *mcp.Tool) (*jsonschema.Resolved, error) {
	raw, ok := tool.InputSchema.(json.RawMessage)
	if !ok {
		return nil, fmt.Errorf("the schema is a %T, not JSON", tool.InputSchema)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
}

// decodeArguments checks a call's arguments against schema and decodes
// them into an In. Absent arguments are an empty object.
func decodeArguments[In any](args json.RawMessage, schema *jsonschema.Resolved) (In, error) {
	var in In
	if len(bytes.TrimSpace(args)) == 0 || bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		args = json.RawMessage("{}")
	}
	m := map[string]any{}
	if err := json.Unmarshal(args, &m); err != nil {
		return in, fmt.Errorf("validating \"arguments\": unmarshaling arguments: %w", err)
	}
	var v any = m
	if err := schema.Validate(&v); err != nil {
		return in, fmt.Errorf("validating \"arguments\": %w", err)
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return in, err
	}
	return in, nil
}

// toolFailure is a tool error result saying err.
func toolFailure(err error) *mcp.CallToolResult {
	var res mcp.CallToolResult
	res.SetError(err)
	return &res
}
