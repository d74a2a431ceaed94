package door

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
)

// The MCP client configuration of a server record: what the site's entry
// page, GET /tools and the MCP find_tool tool give a person or a client to
// use the server. It lives in the door kit because three doors show it.

// Binding is one way to reach the entry.
type Binding struct {
	Protocol, URL, Transport, Package string
	// Template is set when URL still holds {variables} to fill in.
	Template bool
	// Runtime, Args, Env and Headers are what a package or remote wants:
	// the command that runs it, its arguments, the environment variables
	// and HTTP headers to supply.
	Runtime            string
	Args, Env, Headers []string
}

// ReadBindings reads a record's bindings (as the API returns it) as
// people and MCP clients are shown them: URLs that are not safe links
// (SafeURL) are text, never links, and templates are text to fill in.
func ReadBindings(doc map[string]json.RawMessage) []Binding {
	var bindings []struct {
		Protocol  string   `json:"protocol"`
		URL       string   `json:"url"`
		Transport string   `json:"transport"`
		Package   string   `json:"package"`
		Template  bool     `json:"template"`
		Runtime   string   `json:"runtime"`
		Args      []string `json:"args"`
		Env       []string `json:"env"`
		Headers   []string `json:"headers"`
	}
	_ = json.Unmarshal(doc["bindings"], &bindings)
	var out []Binding
	for _, b := range bindings {
		u := SafeURL(b.URL)
		if b.Template {
			u = b.URL // shown as text to fill in, never as a link
		}
		out = append(out, Binding{Protocol: b.Protocol, URL: u, Transport: b.Transport, Package: b.Package,
			Template: b.Template, Runtime: b.Runtime, Args: b.Args, Env: b.Env, Headers: b.Headers})
		if b.URL != "" && u == "" {
			// Shown as text so nothing is hidden, never as a link.
			out[len(out)-1].Package = strings.TrimSpace(b.Package + " " + b.URL)
		}
	}
	return out
}

// SafeURL returns u when it is an absolute http or https URL with a host,
// else "": catalog text never becomes a javascript:, data: or relative link.
func SafeURL(u string) string {
	u = strings.TrimSpace(u)
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || p.User != nil {
		return ""
	}
	switch strings.ToLower(p.Scheme) {
	case "http", "https":
		return p.String()
	}
	return ""
}

// mcpServer is one server in an MCP client's "mcpServers" map.
type mcpServer struct {
	Type    string            `json:"type,omitempty"`
	URL     string            `json:"url,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// MCPConfig returns the {"mcpServers": {...}} configuration MCP clients
// read, with one server per remote endpoint and per package of a registry
// it knows how to launch, how many servers that is (0: none, and no
// configuration), and what to install first for the packages that need it
// (a crate, a bundle). local is for a client whose configuration starts
// local commands only (Claude Desktop): a remote endpoint is then reached
// through the mcp-remote bridge (npx); otherwise it is a "type": "http"
// (or "sse") server, as clients that connect to remotes themselves (Claude
// Code, Cursor) take it.
func MCPConfig(name string, bindings []Binding, local bool) (cfg string, n int, install []string) {
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
		case b.URL != "" && !strings.EqualFold(b.Transport, "stdio") && local:
			add(bridge(b))
		case b.URL != "" && !strings.EqualFold(b.Transport, "stdio"):
			t := "http"
			if strings.EqualFold(b.Transport, "sse") {
				t = "sse"
			}
			add(mcpServer{Type: t, URL: b.URL, Headers: placeholders(b.Headers)})
		case b.Package != "":
			s, first, ok := launch(b)
			if first != "" {
				install = append(install, first)
			}
			if ok {
				add(s)
			}
		}
	}
	if len(order) == 0 {
		return "", 0, install
	}
	out, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		return "", 0, install
	}
	return string(out), len(order), install
}

// bridge is a remote endpoint as a local command: mcp-remote (run with
// npx) connects to it and speaks stdio to the client; each header is a
// --header "Name: <Name>" the user fills in.
func bridge(b Binding) mcpServer {
	args := []string{"-y", "mcp-remote", b.URL}
	if strings.EqualFold(b.Transport, "sse") {
		args = append(args, "--transport", "sse-only")
	}
	for _, h := range b.Headers {
		args = append(args, "--header", h+": <"+h+">")
	}
	return mcpServer{Command: "npx", Args: args}
}

// placeholders maps each name to "<name>", the value the user supplies.
func placeholders(names []string) map[string]string {
	if len(names) == 0 {
		return nil
	}
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[n] = "<" + n + ">"
	}
	return m
}

// launch turns a package binding ("npm/@scope/name@1.2.0", "pypi/name@1",
// "oci/image:tag", "nuget/Name@1", "go/module@v1", "cargo/crate@1",
// "mcpb/https://.../x.mcpb", or a stdio command line) into the command
// that runs it, with the package's runtime hint, arguments and environment
// variables; first is what to install before (cargo, mcpb), if anything.
func launch(b Binding) (s mcpServer, first string, ok bool) {
	registry, pkg, isRef := strings.Cut(b.Package, "/")
	if !isRef || strings.ContainsAny(registry, " \t") {
		f := strings.Fields(b.Package)
		if len(f) == 0 || len(f) == 1 && strings.Contains(f[0], "/") {
			return mcpServer{}, "", false // an unknown registry's package
		}
		return mcpServer{Command: f[0], Args: f[1:], Env: placeholders(b.Env)}, "", true
	}
	name, version := pkg, ""
	if i := strings.LastIndexByte(pkg, '@'); i > 0 {
		name, version = pkg[:i], pkg[i+1:]
	}
	env := placeholders(b.Env)
	cmd := func(def string, args ...string) (mcpServer, string, bool) {
		c := def
		if b.Runtime != "" {
			c = b.Runtime
		}
		return mcpServer{Command: c, Args: append(args, b.Args...), Env: env}, "", true
	}
	switch strings.ToLower(registry) {
	case "npm":
		return cmd("npx", "-y", joinVersion(name, "@", version))
	case "pypi":
		return cmd("uvx", joinVersion(name, "==", version))
	case "oci", "docker":
		args := []string{"run", "-i", "--rm"}
		for _, e := range b.Env {
			args = append(args, "-e", e)
		}
		image := name
		if version != "" && !strings.Contains(name[strings.LastIndexByte(name, '/')+1:], ":") {
			image = name + ":" + version
		}
		return cmd("docker", append(args, image)...)
	case "nuget":
		return cmd("dnx", joinVersion(name, "@", version), "--yes")
	case "go":
		return cmd("go", "run", joinVersion(name, "@", version))
	case "cargo":
		s, _, _ := cmd(name)
		return s, "cargo install " + joinVersion(name, "@", version), true
	case "mcpb":
		return mcpServer{}, "download the bundle " + pkg + " and open it in your MCP client", false
	}
	return mcpServer{}, "", false
}

func joinVersion(name, sep, version string) string {
	if version == "" {
		return name
	}
	return name + sep + version
}

// Slug makes a configuration key from a display name (or, without one, the
// last part of the identifier): lower-case letters, digits and '-'.
func Slug(name, identifier string) string {
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

// MCPClientConfig returns the {"mcpServers": {...}} configuration an MCP
// client needs to use the server whose record (as the API returns it) is
// doc, in the shape of clients that reach remotes themselves ("type":
// "http"; the site's entry page also shows the local-command shape). false when
// it has no endpoint or package a client can start.
func MCPClientConfig(doc map[string]json.RawMessage) (json.RawMessage, bool) {
	name, identifier := EntryString(doc, "displayName"), EntryString(doc, "identifier")
	cfg, n, _ := MCPConfig(Slug(name, identifier), ReadBindings(doc), false)
	if n == 0 {
		return nil, false
	}
	return json.RawMessage(cfg), true
}
