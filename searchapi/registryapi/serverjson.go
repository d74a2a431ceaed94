package registryapi

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
)

// SchemaURL is the server.json schema a built server.json names.
const SchemaURL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

// The server.json limits of the schema.
const (
	maxDescription = 100
	maxTitle       = 100
	maxName        = 200
)

// namePattern is the schema's server name: one slash between a reverse-DNS
// namespace and a name.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)

// ownServerJSON returns r's own server.json and reports whether r came with a server.json of its own
// (an MCP registry's record, or a catalog entry whose inline data is one):
// a document naming r's identifier, with a description and a version.
func (r record) ownServerJSON() (json.RawMessage, bool) {
	var s struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Version     string `json:"version"`
	}
	if len(r.Data) == 0 || json.Unmarshal(r.Data, &s) != nil {
		return nil, false
	}
	if s.Name != r.Identifier || s.Description == "" || s.Version == "" || !namePattern.MatchString(s.Name) {
		return nil, false
	}
	return mend(r.Data), true
}

// mend returns a server.json as received, unless it holds what the
// current schema refuses and a reader can do without: a description or
// title over 100 characters (clipped), a package version left empty
// (dropped) or a remote without a known type (the one its URL suggests,
// as MCP clients guess it), as servers registered before the schema's
// checks have. Then it returns a copy with only those members changed.
func mend(raw json.RawMessage) json.RawMessage {
	var doc map[string]any
	if json.Unmarshal(raw, &doc) != nil {
		return raw
	}
	changed := false
	for _, k := range []string{"description", "title"} {
		if s, ok := doc[k].(string); ok && len([]rune(s)) > maxDescription {
			doc[k] = clip(s, maxDescription)
			changed = true
		}
	}
	if pkgs, ok := doc["packages"].([]any); ok {
		for _, p := range pkgs {
			if pkg, ok := p.(map[string]any); ok {
				if v, ok := pkg["version"].(string); ok && v == "" {
					delete(pkg, "version")
					changed = true
				}
			}
		}
	}
	if rems, ok := doc["remotes"].([]any); ok {
		for _, x := range rems {
			if rem, ok := x.(map[string]any); ok {
				if t, _ := rem["type"].(string); t != "streamable-http" && t != "sse" {
					u, _ := rem["url"].(string)
					rem["type"] = remoteType(u)
					changed = true
				}
			}
		}
	}
	if !changed {
		return raw
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return raw
	}
	return out
}

// Name is the server name r is listed under: its identifier when that is
// already a server name (a registry's record), else one built from its
// publisher's reverse-DNS namespace and the rest of its identifier
// ("urn:ai:acme.test:travel:flights" -> "test.acme/travel-flights").
func (r record) Name() string {
	if namePattern.MatchString(r.Identifier) && len(r.Identifier) <= maxName {
		return r.Identifier
	}
	ns := reverseDNS(r.Publisher)
	rest := r.Identifier
	if i := strings.Index(strings.ToLower(rest), strings.ToLower(r.Publisher)); r.Publisher != "" && i >= 0 {
		rest = rest[i+len(r.Publisher):]
	}
	name := ns + "/" + nameSafe(rest)
	if len(name) > maxName {
		name = name[:maxName]
	}
	return name
}

// reverseDNS turns a publisher domain into a namespace ("acme.test" ->
// "test.acme"); a publisher with a path ("github.com/owner") becomes
// "com.github.owner"; none is "unknown".
func reverseDNS(publisher string) string {
	host, path, _ := strings.Cut(strings.ToLower(publisher), "/")
	labels := strings.Split(host, ".")
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	ns := strings.Join(labels, ".")
	if path != "" {
		ns += "." + path
	}
	ns = strings.Map(func(c rune) rune {
		if c == '.' || c == '-' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			return c
		}
		return '-'
	}, ns)
	if strings.Trim(ns, ".-") == "" {
		return "unknown"
	}
	return ns
}

// nameSafe turns the rest of an identifier into a server name's second
// part: runs of characters the schema does not allow become "-".
func nameSafe(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range s {
		ok := c == '.' || c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		switch {
		case ok:
			b.WriteRune(c)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "server"
	}
	return out
}

// ServerJSON is the server.json r is served with: its own as received, or
// one built from the record: name, description, version, title, and the
// remotes and packages its bindings name.
func (r record) ServerJSON() json.RawMessage {
	if own, ok := r.ownServerJSON(); ok {
		return own
	}
	s := builtServer{Schema: SchemaURL, Name: r.Name(), Description: clip(firstNonEmpty(r.Description, r.DisplayName, r.Identifier), maxDescription),
		Version: firstNonEmpty(r.Version, "0.0.0")}
	if r.DisplayName != "" {
		s.Title = clip(r.DisplayName, maxTitle)
	}
	for _, b := range r.Bindings {
		if rem, ok := remoteOf(b); ok {
			s.Remotes = append(s.Remotes, rem)
		}
		if pkg, ok := packageOf(b); ok {
			s.Packages = append(s.Packages, pkg)
		}
	}
	out, err := json.Marshal(s)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return out
}

// builtServer is a server.json built from a record.
type builtServer struct {
	Schema      string         `json:"$schema"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Version     string         `json:"version"`
	Title       string         `json:"title,omitempty"`
	Remotes     []remote       `json:"remotes,omitempty"`
	Packages    []pkgTransport `json:"packages,omitempty"`
}

// remote is a server.json remote.
type remote struct {
	Type    string   `json:"type"`
	URL     string   `json:"url"`
	Headers []header `json:"headers,omitempty"`
}

// header is a header a remote wants.
type header struct {
	Name string `json:"name"`
}

// pkgTransport is a server.json package.
type pkgTransport struct {
	RegistryType string    `json:"registryType"`
	Identifier   string    `json:"identifier"`
	Version      string    `json:"version,omitempty"`
	RuntimeHint  string    `json:"runtimeHint,omitempty"`
	Transport    transport `json:"transport"`
}

// transport is a package's transport.
type transport struct {
	Type string `json:"type"`
}

// remoteOf is the server.json remote of an MCP binding with an endpoint.
func remoteOf(b normalize.Binding) (remote, bool) {
	if b.Protocol != "mcp" || b.URL == "" || b.Package != "" {
		return remote{}, false
	}
	if !strings.HasPrefix(b.URL, "https://") && !strings.HasPrefix(b.URL, "http://") {
		return remote{}, false
	}
	typ := remoteType(b.URL)
	switch strings.ToLower(b.Transport) {
	case "sse":
		typ = "sse"
	case "streamable-http", "http":
		typ = "streamable-http"
	}
	rem := remote{Type: typ, URL: b.URL}
	for _, h := range b.Headers {
		rem.Headers = append(rem.Headers, header{Name: h})
	}
	return rem, true
}

// remoteType is the transport a remote URL suggests when nothing says:
// the older SSE transport for a path ending in /sse, else streamable HTTP.
func remoteType(u string) string {
	if p, err := url.Parse(u); err == nil && strings.HasSuffix(strings.TrimSuffix(p.Path, "/"), "/sse") {
		return "sse"
	}
	return "streamable-http"
}

// packageOf is the server.json package of a binding naming one
// ("npm:@scope/name@1.2.3" or "npm/@scope/name@1.2.3").
func packageOf(b normalize.Binding) (pkgTransport, bool) {
	if b.Package == "" {
		return pkgTransport{}, false
	}
	typ, rest, ok := strings.Cut(b.Package, ":")
	if !ok || strings.Contains(typ, "/") {
		typ, rest, ok = strings.Cut(b.Package, "/")
	}
	if !ok || !registryTypes[typ] || rest == "" {
		return pkgTransport{}, false
	}
	id, version := rest, ""
	if i := strings.LastIndexByte(rest, '@'); i > 0 {
		id, version = rest[:i], rest[i+1:]
	}
	tt := strings.ToLower(b.Transport)
	if tt != "streamable-http" && tt != "sse" {
		tt = "stdio"
	}
	return pkgTransport{RegistryType: typ, Identifier: id, Version: version, RuntimeHint: b.Runtime, Transport: transport{Type: tt}}, true
}

// registryTypes are the package registries a server.json names.
var registryTypes = map[string]bool{"npm": true, "pypi": true, "nuget": true, "oci": true, "mcpb": true, "cargo": true, "go": true}

// clip cuts s to at most n characters (runes), ending with "…" when cut.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// firstNonEmpty returns the first non-empty value.
func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
