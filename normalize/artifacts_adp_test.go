package normalize

import (
	"reflect"
	"testing"
)

// TestADPBinding: an ADP endpoint naming A2A or MCP is that protocol's
// binding; any other protocol is an ADP binding with it as transport.
func TestADPBinding(t *testing.T) {
	cases := []struct {
		name string
		ep   map[string]any
		want Binding
	}{
		{"a2a", map[string]any{"protocol": "A2A", "uri": "https://x.test/a2a", "transport": "JSONRPC"}, Binding{Protocol: "a2a", URL: "https://x.test/a2a", Transport: "JSONRPC"}},
		{"mcp", map[string]any{"protocol": "mcp", "url": "https://x.test/mcp", "transport": "streamable-http"}, Binding{Protocol: "mcp", URL: "https://x.test/mcp", Transport: "streamable-http"}},
		{"https", map[string]any{"protocol": "https", "uri": "https://x.test/invoke"}, Binding{Protocol: "adp", URL: "https://x.test/invoke", Transport: "https"}},
		{"aitp", map[string]any{"protocol": "aitp", "uri": "agent://x.test"}, Binding{Protocol: "adp", URL: "agent://x.test", Transport: "aitp"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := adpBinding(c.ep); !reflect.DeepEqual(got, c.want) {
				t.Errorf("adpBinding(%v) = %+v, want %+v", c.ep, got, c.want)
			}
		})
	}
}
