package probe

import (
	"net/url"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
)

// Target kinds: what one request of a probe checks.
const (
	KindCard     = "a2a-card"     // GET the A2A agent card
	KindA2A      = "a2a"          // the A2A interface: a JSON-RPC POST, or a GET for HTTP+JSON
	KindMCP      = "mcp"          // an MCP streamable-HTTP remote: server/discover, then initialize
	KindMCPSSE   = "mcp-sse"      // an MCP remote on the older HTTP+SSE transport: GET its event stream
	KindTemplate = "url-template" // an endpoint URL that still holds a {placeholder}: never requested
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
// remote (streamable HTTP, else SSE). An MCP remote whose URL still holds a
// {placeholder} is a KindTemplate target: checked without a request. When
// there is nothing to probe it returns nil and why: the record stays
// unknown and is never probed (stdio-only packages, gRPC-only agents,
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

// mcpRemote picks the first MCP binding served over streamable HTTP, else
// the first over SSE; a remote whose URL is a template when there is no
// other.
func mcpRemote(bs []normalize.Binding) (Target, bool) {
	var sse, tmpl *Target
	for _, b := range bs {
		if !strings.EqualFold(b.Protocol, "mcp") {
			continue
		}
		kind := ""
		switch strings.ToLower(strings.NewReplacer("_", "-", " ", "-").Replace(strings.TrimSpace(b.Transport))) {
		case "streamable-http", "streamablehttp", "http":
			kind = KindMCP
		case "sse", "http+sse":
			kind = KindMCPSSE
		default:
			continue
		}
		switch {
		case b.Template || IsTemplate(b.URL): // for the user to fill in, never requested
			if tmpl == nil {
				tmpl = &Target{Kind: KindTemplate, URL: b.URL, Transport: b.Transport}
			}
		case !httpURL(b.URL):
		case kind == KindMCP:
			return Target{Kind: KindMCP, URL: b.URL, Transport: b.Transport}, true
		case sse == nil:
			sse = &Target{Kind: KindMCPSSE, URL: b.URL, Transport: b.Transport}
		}
	}
	if sse != nil {
		return *sse, true
	}
	if tmpl != nil {
		return *tmpl, true
	}
	return Target{}, false
}

// IsTemplate reports whether an endpoint URL still holds a {placeholder}
// (server.json remotes may publish "https://{tenant}.example.com/mcp" with
// variables for the client to fill): such a URL names no endpoint.
func IsTemplate(raw string) bool {
	i := strings.IndexByte(raw, '{')
	return i >= 0 && strings.IndexByte(raw[i:], '}') > 0
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
