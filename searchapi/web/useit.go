package web

import (
	"github.com/agentfinder/agentfinder/searchapi/door"
)

// useIt builds the "use it" box: an MCP client configuration for an MCP
// server, the card and endpoints of an A2A agent.
func useIt(x entry, bindings []door.Binding) UseIt {
	_, class := TypeLabel(x.Type)
	switch class {
	case "mcp":
		name := door.Slug(x.DisplayName, x.Identifier)
		cfg, n, install := door.MCPConfig(name, bindings, true)
		if n == 0 && len(install) == 0 {
			return UseIt{}
		}
		u := UseIt{Kind: "mcp", MCPConfig: cfg, MCPServers: n, Install: install}
		if remote, _, _ := door.MCPConfig(name, bindings, false); remote != cfg {
			u.RemoteConfig = remote
		}
		return u
	case "a2a":
		u := UseIt{Kind: "a2a", CardURL: door.SafeURL(x.URL)}
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
