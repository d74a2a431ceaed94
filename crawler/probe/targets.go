package probe

import (
	"net/url"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
)

// Target kinds: what one request of a probe checks.
const (
	KindCard = "a2a-card" // GET the A2A agent card
	KindA2A  = "a2a"      // the A2A interface: a JSON-RPC POST, or a GET for HTTP+JSON
	KindMCP  = "mcp"      // an MCP streamable-HTTP remote: POST initialize
)

// Target is one endpoint a probe checks.
type Target struct {
	Kind      string `json:"kind"`
	URL       string `json:"url"`
	Transport string `json:"transport,omitempty"`
}

// Targets returns what a probe of rec checks, in order: an A2A agent's card
// (when the entry points to one) and then its first interface the prober
// can speak (JSON-RPC, or HTTP+JSON); an MCP server's first streamable-HTTP
// remote. When there is nothing to probe it returns nil and why: the record
// stays unknown and is never probed (stdio-only packages, gRPC-only agents,
// entries with no endpoint, other protocols).
func Targets(rec normalize.Record) ([]Target, string) {
	var out []Target
	if rec.Type == normalize.TypeA2A && httpURL(rec.URL) {
		out = append(out, Target{Kind: KindCard, URL: rec.URL})
	}
	if t, ok := a2aInterface(rec.Bindings); ok {
		out = append(out, t)
	}
	if len(out) == 0 {
		if t, ok := mcpRemote(rec.Bindings); ok {
			out = append(out, t)
		}
	}
	if len(out) > 0 {
		return out, ""
	}
	return nil, whyNot(rec.Bindings)
}

// a2aInterface picks the first A2A binding the prober can speak.
func a2aInterface(bs []normalize.Binding) (Target, bool) {
	for _, b := range bs {
		if !strings.EqualFold(b.Protocol, "a2a") || !httpURL(b.URL) {
			continue
		}
		switch strings.ToUpper(strings.TrimSpace(b.Transport)) {
		case "", "JSONRPC", "JSON-RPC", "HTTP+JSON", "REST":
			return Target{Kind: KindA2A, URL: b.URL, Transport: b.Transport}, true
		}
	}
	return Target{}, false
}

// mcpRemote picks the first MCP binding served over streamable HTTP.
func mcpRemote(bs []normalize.Binding) (Target, bool) {
	for _, b := range bs {
		if !strings.EqualFold(b.Protocol, "mcp") || b.Template || !httpURL(b.URL) {
			continue // a template URL is for the user to fill in, never requested
		}
		switch strings.ToLower(strings.NewReplacer("_", "-", " ", "-").Replace(strings.TrimSpace(b.Transport))) {
		case "streamable-http", "streamablehttp", "http":
			return Target{Kind: KindMCP, URL: b.URL, Transport: b.Transport}, true
		}
	}
	return Target{}, false
}

// whyNot says why a record without targets is not probed.
func whyNot(bs []normalize.Binding) string {
	stdio, other := false, ""
	for _, b := range bs {
		switch {
		case strings.EqualFold(b.Transport, "stdio"):
			stdio = true
		case other == "" && b.URL != "":
			other = strings.ToLower(b.Protocol) + " " + b.Transport
		}
	}
	switch {
	case stdio && other == "":
		return "stdio only: not probed"
	case other != "":
		return "no probe for " + strings.TrimSpace(other)
	}
	return "no endpoint to probe"
}

func httpURL(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}
