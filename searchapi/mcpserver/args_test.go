package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAddToolAnswersAsTheSDK: a tool added with addTool and typedCall
// answers every call as the same tool added with mcp.AddTool: the arguments
// its handler gets, and for arguments the schema refuses, the same tool
// error.
func TestAddToolAnswersAsTheSDK(t *testing.T) {
	// echo answers with the arguments it got, as JSON with sorted keys
	// (the raw filter object keeps the caller's order in one, the SDK's
	// re-encoding's in the other).
	echo := func(_ context.Context, in searchInput) *mcp.CallToolResult {
		b, _ := json.Marshal(in)
		var v any
		_ = json.Unmarshal(b, &v)
		b, _ = json.Marshal(v)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	}
	ours := mcp.NewServer(&mcp.Implementation{Name: "agentfinder"}, nil)
	addTool(ours, searchTool(), typedCall(searchTool(), echo))
	sdk := mcp.NewServer(&mcp.Implementation{Name: "agentfinder"}, nil)
	mcp.AddTool(sdk, searchTool(), func(ctx context.Context, _ *mcp.CallToolRequest, in searchInput) (*mcp.CallToolResult, any, error) {
		return echo(ctx, in), nil, nil
	})
	oursCS, sdkCS := inMemorySession(t, ours), inMemorySession(t, sdk)

	for _, args := range []string{
		`{"text": "book a flight", "federation": "none", "pageSize": 10, "minScore": 0, "type": ["a", "b"], "filter": {"tags": ["x"], "liveOnly": true}}`,
		`{"text": "x", "pageToken": "tok"}`,
		`{"federation": "none"}`,
		`{"text": ""}`,
		`{"text": 7}`,
		`{"text": "x", "pageSize": 1.5}`,
		`{"text": "x", "federation": "sideways"}`,
		`{"text": "x", "colour": "red"}`,
		`{"text": "x", "filter": {"colour": ["red"]}}`,
		`{"text": "x", "filter": {"trust": ["perfect"]}}`,
		`{"text": "x", "type": "not a list"}`,
		`{}`,
		`null`,
	} {
		t.Run(args, func(t *testing.T) {
			want := callRaw(t, sdkCS, args)
			got := callRaw(t, oursCS, args)
			if got != want {
				t.Errorf("addTool answered\n%s\nmcp.AddTool\n%s", got, want)
			}
		})
	}
	// Arguments that are no object: the decoders word their error apart.
	const notObject = `validating \"arguments\": unmarshaling arguments: json: cannot unmarshal`
	for _, cs := range []*mcp.ClientSession{sdkCS, oursCS} {
		if got := callRaw(t, cs, `[1, 2]`); !strings.Contains(got, notObject) || !strings.Contains(got, `"isError":true`) {
			t.Errorf("arguments [1, 2]: %s, want a tool error saying %s", got, notObject)
		}
	}
}

// TestInputSchemasDeclareNoDefaults: addTool applies no schema defaults,
// so no input schema may declare one.
func TestInputSchemasDeclareNoDefaults(t *testing.T) {
	for _, tool := range []*mcp.Tool{searchTool(), getAgentTool(), exploreTool(), findToolTool()} {
		var v any
		if err := json.Unmarshal(tool.InputSchema.(json.RawMessage), &v); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		if path := findKey(v, "default", tool.Name); path != "" {
			t.Errorf("%s declares a default (%s), which addTool would not apply", tool.Name, path)
		}
	}
}

// findKey returns the path of the first object member named key in v, or "".
func findKey(v any, key, path string) string {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if k == key {
				return path + "." + k
			}
			if p := findKey(e, key, path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		for i, e := range v {
			if p := findKey(e, key, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// inMemorySession connects a client to srv in memory.
func inMemorySession(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callRaw calls search with args as they are and returns the result (or
// the call's error) as text.
func callRaw(t *testing.T, cs *mcp.ClientSession, args string) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search", Arguments: json.RawMessage(args)})
	if err != nil {
		return "call error: " + err.Error()
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
