package web

import (
	"encoding/json"
	"strconv"
	"strings"
)

// useIt builds the "use it" box: an MCP client configuration for an MCP
// server, the card and endpoints of an A2A agent.
func useIt(x entry, bindings []Binding) UseIt {
	_, class := TypeLabel(x.Type)
	switch class {
	case "mcp":
		cfg, n := mcpConfig(slug(x.DisplayName, x.Identifier), bindings)
		if n == 0 {
			return UseIt{}
		}
		return UseIt{Kind: "mcp", MCPConfig: cfg, MCPServers: n}
	case "a2a":
		u := UseIt{Kind: "a2a", CardURL: SafeURL(x.URL)}
		for _, b := range bindings {
			if b.URL != "" && (b.Protocol == "a2a" || b.Protocol == "") {
				u.Endpoints = append(u.Endpoints, b.URL)
			}
		}
		if u.CardURL == "" && len(u.Endpoints) == 0 {
			return UseIt{}
		}
		return u
	}
	return UseIt{}
}

// mcpServer is one server in an MCP client's "mcpServers" map.
type mcpServer struct {
	Type    string   `json:"type,omitempty"`
	URL     string   `json:"url,omitempty"`
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

// mcpConfig returns the {"mcpServers": {...}} configuration MCP clients
// (Claude Desktop, Cursor, Claude Code) read, with one server per remote
// endpoint and per package of a registry it knows how to launch, and how
// many servers that is (0: none, and no configuration).
func mcpConfig(name string, bindings []Binding) (string, int) {
	servers := map[string]mcpServer{}
	var order []string
	add := func(s mcpServer) {
		key := name
		if len(order) > 0 {
			key = name + "-" + strconv.Itoa(len(order)+1)
		}
		servers[key] = s
		order = append(order, key)
	}
	for _, b := range bindings {
		if b.Protocol != "mcp" && b.Protocol != "" {
			continue
		}
		switch {
		case b.URL != "":
			t := "http"
			if strings.EqualFold(b.Transport, "sse") {
				t = "sse"
			}
			add(mcpServer{Type: t, URL: b.URL})
		case b.Package != "":
			if s, ok := launch(b.Package); ok {
				add(s)
			}
		}
	}
	if len(order) == 0 {
		return "", 0
	}
	out, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		return "", 0
	}
	return string(out), len(order)
}

// launch turns a package reference ("npm/@scope/name@1.2.0", "pypi/name@1",
// "oci/image@tag", or a stdio command line) into the command that runs it.
func launch(ref string) (mcpServer, bool) {
	registry, pkg, ok := strings.Cut(ref, "/")
	if ok && !strings.ContainsAny(registry, " \t") {
		name, version := pkg, ""
		if i := strings.LastIndexByte(pkg, '@'); i > 0 {
			name, version = pkg[:i], pkg[i+1:]
		}
		switch strings.ToLower(registry) {
		case "npm":
			return mcpServer{Command: "npx", Args: []string{"-y", joinVersion(name, "@", version)}}, true
		case "pypi":
			return mcpServer{Command: "uvx", Args: []string{joinVersion(name, "==", version)}}, true
		case "oci", "docker":
			return mcpServer{Command: "docker", Args: []string{"run", "-i", "--rm", joinVersion(name, ":", version)}}, true
		case "nuget":
			return mcpServer{Command: "dnx", Args: []string{joinVersion(name, "@", version), "--yes"}}, true
		}
	}
	f := strings.Fields(ref)
	if len(f) == 0 || len(f) == 1 && strings.Contains(f[0], "/") {
		return mcpServer{}, false // an unknown registry's package
	}
	return mcpServer{Command: f[0], Args: f[1:]}, true
}

func joinVersion(name, sep, version string) string {
	if version == "" {
		return name
	}
	return name + sep + version
}

// slug makes a configuration key from a display name (or, without one, the
// last part of the identifier): lower-case letters, digits and '-'.
func slug(name, identifier string) string {
	if strings.TrimSpace(name) == "" {
		name = identifier[strings.LastIndexByte(identifier, ':')+1:]
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case b.Len() > 0 && !dash:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	s := strings.TrimSuffix(b.String(), "-")
	if s == "" {
		return "server"
	}
	return s
}
