package searchapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
	"github.com/agentfinder/agentfinder/searchapi/searchtest"
)

// callTool calls a tool and decodes its structured content into out.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if out != nil && !res.IsError {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s structured content %s: %v", name, b, err)
		}
	}
	return res
}

func toolText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestMCPTools drives POST /mcp with the SDK's client over real HTTP: the
// tool list, each tool, and invalid calls.
func TestMCPTools(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newFixture(t, func(c *Config) { c.Metrics = reg })
	cs := searchtest.MCPSession(t, f.http.URL+"/mcp", f.http.Client())

	lt, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("tool %s is not marked readOnlyHint", tool.Name)
		}
		if len(tool.Description) < 80 {
			t.Errorf("tool %s: description too short for a model: %q", tool.Name, tool.Description)
		}
		for _, p := range schemaProblems(tool.InputSchema) {
			t.Errorf("tool %s input schema: %s", tool.Name, p)
		}
	}
	slices.Sort(names)
	if want := []string{"explore", "find_tool", "get_agent", "search"}; !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}

	// search: structured content is POST /search's answer for the same request.
	args := map[string]any{"text": "weather forecast", "federation": "none", "pageSize": 3, "filter": map[string]any{"tags": []string{"weather"}}}
	var got map[string]any
	res := callTool(t, cs, "search", args, &got)
	if res.IsError {
		t.Fatalf("search failed: %s", toolText(res))
	}
	var want map[string]any
	if st := f.do(http.MethodPost, "/search", map[string]any{"query": map[string]any{"text": "weather forecast", "federation": "none", "filter": map[string]any{"tags": []string{"weather"}}}, "pageSize": 3}, nil, &want); st.StatusCode != http.StatusOK {
		t.Fatalf("POST /search: %d", st.StatusCode)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("search structured content differs from POST /search:\nmcp  %v\nhttp %v", got, want)
	}
	results, _ := got["results"].([]any)
	if len(results) == 0 {
		t.Fatal("search found nothing")
	}
	top, _ := results[0].(map[string]any)
	topID, _ := top["identifier"].(string)
	text := toolText(res)
	t.Logf("search text:\n%s", text)
	for _, part := range []string{topID, "score", "source: https://finder.test.example", "type: application/mcp-server+json"} {
		if !strings.Contains(text, part) {
			t.Errorf("search text lacks %q:\n%s", part, text)
		}
	}
	if _, ok := got["pageToken"]; ok && !strings.Contains(text, "pageToken") {
		t.Errorf("search text does not say how to get the next page:\n%s", text)
	}

	// Nothing matching well enough (here: the request's own cut-off above
	// every score) is said plainly, with the reason.
	res = callTool(t, cs, "search", map[string]any{"text": "weather forecast", "federation": "none", "minScore": 100}, nil)
	t.Logf("no-match text: %s", toolText(res))
	if res.IsError || !strings.HasPrefix(toolText(res), "Nothing") || !strings.Contains(toolText(res), "minScore 100") {
		t.Errorf("no match: %s", toolText(res))
	}

	// get_agent: the record GET /agents/{identifier} returns.
	var rec map[string]any
	res = callTool(t, cs, "get_agent", map[string]any{"identifier": topID}, &rec)
	if res.IsError || rec["identifier"] != topID || rec["provenance"] == nil {
		t.Fatalf("get_agent %s: %s", topID, toolText(res))
	}
	if !strings.Contains(toolText(res), topID) {
		t.Errorf("get_agent text: %s", toolText(res))
	}
	// Another spelling of the same identifier (the other NID, the publisher
	// domain in upper case) finds the same record, as published.
	ident, _, ok := normalize.ParseIdentifier(topID)
	if !ok {
		t.Fatalf("top result %q is not a URN", topID)
	}
	nid := map[string]string{"ai": "air", "air": "ai"}[ident.NID]
	other := "urn:" + nid + ":" + strings.ToUpper(ident.Publisher) + ":" + strings.Join(ident.Segments, ":")
	rec = nil
	res = callTool(t, cs, "get_agent", map[string]any{"identifier": other}, &rec)
	if res.IsError || rec["identifier"] != topID {
		t.Errorf("get_agent %s (a spelling of %s): %s", other, topID, toolText(res))
	}
	res = callTool(t, cs, "get_agent", map[string]any{"identifier": "urn:ai:nowhere.example:agent:none"}, nil)
	if !res.IsError || !strings.HasPrefix(toolText(res), "not_found:") || !strings.Contains(toolText(res), "urn:ai:nowhere.example:agent:none") {
		t.Errorf("unknown agent: error %v, %s (want it named)", res.IsError, toolText(res))
	}

	// explore: facet counts as POST /explore gives them.
	var ex search.ExploreAnswer
	res = callTool(t, cs, "explore", map[string]any{"facets": []string{"type", "tags"}}, &ex)
	if res.IsError || ex.Total == 0 || ex.Facets["tags"]["weather"] == 0 {
		t.Fatalf("explore: %+v %s", ex, toolText(res))
	}
	if !strings.Contains(toolText(res), "weather (") {
		t.Errorf("explore text: %s", toolText(res))
	}

	// Invalid calls: a tool error naming the problem, never a crash.
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"missing text", "search", map[string]any{"federation": "none"}, "text"},
		{"pageSize out of range", "search", map[string]any{"text": "x", "pageSize": 0}, "pageSize"},
		{"pageSize too large", "search", map[string]any{"text": "x", "pageSize": 1000}, "invalid_request: pageSize must be an integer from 1 to 100"},
		{"bad federation", "search", map[string]any{"text": "x", "federation": "sideways"}, "federation"},
		{"forged page token", "search", map[string]any{"text": "weather", "federation": "none", "pageToken": "AAAA"}, "invalid_request"},
		{"unknown facet", "explore", map[string]any{"facets": []string{"colour"}}, "facets"},
		{"no identifier", "get_agent", map[string]any{}, "identifier"},
	} {
		res := callTool(t, cs, tc.tool, tc.args, nil)
		if !res.IsError || !strings.Contains(toolText(res), tc.want) {
			t.Errorf("%s: isError %v, text %q (want it to mention %q)", tc.name, res.IsError, toolText(res), tc.want)
		}
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_everything", Arguments: map[string]any{}}); err == nil {
		t.Error("an unknown tool did not fail")
	}

	// Metrics count tool calls by tool and outcome.
	if n := testutil.ToFloat64(f.srv.metrics.toolCalls.WithLabelValues("search", "ok")); n != 2 {
		t.Errorf("search ok calls = %v, want 2", n)
	}
	if n := testutil.ToFloat64(f.srv.metrics.toolCalls.WithLabelValues("get_agent", door.CodeNotFound)); n != 1 {
		t.Errorf("get_agent not_found calls = %v, want 1", n)
	}
	if n := testutil.ToFloat64(f.srv.metrics.requests.WithLabelValues("POST /mcp", "200")); n < 5 {
		t.Errorf("POST /mcp requests = %v", n)
	}
}

// schemaProblems lists what keeps an input schema from being one strict
// clients accept: it must be an object whose every property has exactly one
// type (a string, never a list such as ["array","null"]), arrays that say
// what they hold, nothing nullable, no anyOf/oneOf.
func schemaProblems(schema any) []string {
	var probs []string
	root, ok := schema.(map[string]any)
	if !ok || root["type"] != "object" {
		return []string{"input schema is not an object schema"}
	}
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		typ, ok := s["type"].(string)
		if !ok {
			probs = append(probs, fmt.Sprintf("%s: type is %#v, want one type name", path, s["type"]))
			return
		}
		for _, k := range []string{"anyOf", "oneOf", "nullable"} {
			if _, ok := s[k]; ok {
				probs = append(probs, path+": uses "+k)
			}
		}
		switch typ {
		case "object":
			props, _ := s["properties"].(map[string]any)
			if len(props) == 0 {
				probs = append(probs, path+": object without properties")
			}
			for name, p := range props {
				ps, ok := p.(map[string]any)
				if !ok {
					probs = append(probs, path+"."+name+": not a schema")
					continue
				}
				walk(path+"."+name, ps)
			}
		case "array":
			items, ok := s["items"].(map[string]any)
			if !ok {
				probs = append(probs, path+": array without items")
				return
			}
			walk(path+"[]", items)
		case "string", "integer", "number", "boolean":
		default:
			probs = append(probs, fmt.Sprintf("%s: unexpected type %q", path, typ))
		}
	}
	walk("$", root)
	return probs
}

func TestSchemaProblemsCatchesUnions(t *testing.T) {
	// The SDK's inference for an optional []string field gives
	// ["null","array"]: the check must refuse it.
	union := map[string]any{"type": "object", "properties": map[string]any{
		"tags": map[string]any{"type": []any{"null", "array"}, "items": map[string]any{"type": "string"}}}}
	if len(schemaProblems(union)) == 0 {
		t.Error(`a ["null","array"] union passed the schema check`)
	}
	if p := schemaProblems(map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "array"}}}); len(p) == 0 {
		t.Error("an array without items passed the schema check")
	}
}

// TestMCPOutputSchemas: every tool declares an output schema, and what it
// returns, a result or an error, holds to it; POST /mcp/ is POST /mcp.
func TestMCPOutputSchemas(t *testing.T) {
	f := newFixture(t, nil)
	cs := searchtest.MCPSession(t, f.http.URL+"/mcp/", f.http.Client())
	lt, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, tool := range lt.Tools {
		if tool.OutputSchema == nil {
			t.Errorf("tool %s declares no outputSchema", tool.Name)
			continue
		}
		c := jsonschema.NewCompiler()
		url := "file:///" + tool.Name + ".json"
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(mustMarshal(t, tool.OutputSchema))))
		if err == nil {
			err = c.AddResource(url, doc)
		}
		if err == nil {
			schemas[tool.Name], err = c.Compile(url)
		}
		if err != nil {
			t.Fatalf("tool %s output schema: %v", tool.Name, err)
		}
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"search", map[string]any{"text": "weather forecast", "federation": "none", "pageSize": 3}},
		{"search", map[string]any{"text": "x", "pageSize": 1000}},
		{"get_agent", map[string]any{"identifier": "urn:ai:nowhere.example:agent:none"}},
		{"explore", map[string]any{"facets": []string{"type"}}},
		{"find_tool", map[string]any{"text": "weather forecast"}},
		{"find_tool", map[string]any{"text": " "}},
	} {
		res := callTool(t, cs, call.tool, call.args, nil)
		sch := schemas[call.tool]
		if sch == nil || res.StructuredContent == nil {
			t.Errorf("%s %v: schema %v, structured content %v", call.tool, call.args, sch != nil, res.StructuredContent)
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(mustMarshal(t, res.StructuredContent))))
		if err == nil {
			err = sch.Validate(doc)
		}
		if err != nil {
			t.Errorf("%s %v: structured content does not hold to the output schema: %v", call.tool, call.args, err)
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
