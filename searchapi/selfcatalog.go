package searchapi

import (
	_ "embed"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/door"
)

// typeAIRegistry is the media type of a registry entry.
const typeAIRegistry = "application/ai-registry+json"

//go:embed openapi.json
var openAPIDoc []byte

// DefaultRegistryDomain is the registry's domain when its public URL has
// none (an IP address or localhost): a name under the .localhost TLD
// (RFC 6761), valid in a URN and never a real publisher's.
const DefaultRegistryDomain = "agentfinder.localhost"

// registryDomain returns the domain that names this registry: explicit
// when given (it must be a domain name), else host when it is one, else
// DefaultRegistryDomain. What a domain is, normalize decides.
func registryDomain(explicit, host string) (string, error) {
	if explicit != "" {
		d, ok := normalize.IdentityDomain(explicit)
		if !ok || strings.ContainsAny(explicit, ":/") {
			return "", fmt.Errorf("searchapi: registry domain %q is not a domain name (want e.g. finder.example.com)", explicit)
		}
		return d, nil
	}
	if d, ok := normalize.IdentityDomain(host); ok {
		return d, nil
	}
	return DefaultRegistryDomain, nil
}

// selfCatalog describes this registry as an ai-catalog.json manifest with
// one application/ai-registry+json entry, so crawlers and other registries
// can find it and federate to it.
//
// The entry's url is PublicURL + "/search": §7 and §8 show registry entries
// whose url is the search endpoint itself (".../search"), and a consumer
// that instead treats the url as a base and joins "search" (the rule of
// federation.SearchEndpoint for urls not ending in /search) still lands on
// the same endpoint.
func (s *Server) selfCatalog() map[string]any {
	return map[string]any{
		"specVersion": "1.0",
		"host": map[string]any{
			"displayName":      s.cfg.RegistryName,
			"identifier":       s.domain,
			"documentationUrl": s.publicURL + "/openapi.json",
		},
		"entries": []map[string]any{{
			"identifier":            s.urn,
			"displayName":           s.cfg.RegistryName,
			"type":                  typeAIRegistry,
			"url":                   s.publicURL + "/search",
			"description":           "Agent Finder registry: natural-language search over crawled AI agent catalogs (POST /search, GET /agents), federating to other registries.",
			"tags":                  []string{"registry", "search", "agent-finder", "federation"},
			"capabilities":          []string{"search", "list", "explore", "federation"},
			"representativeQueries": []string{"find an agent that books flights", "which MCP servers can read spreadsheets"},
			"metadata":              s.authInfo(),
		}, s.mcpEntry()},
	}
}

// typeMCPServer is the media type of an MCP server entry.
const typeMCPServer = "application/mcp-server+json"

// mcpEntry describes this registry's MCP server (POST /mcp) as an entry of
// its own: an MCP server.json, inline, with the streamable-HTTP remote, so
// crawlers index it and assistants can connect to it.
func (s *Server) mcpEntry() map[string]any {
	name := s.cfg.RegistryName + " MCP server"
	desc := "Find AI agents, MCP servers and tools for a task from an AI assistant: MCP tools search, get_agent and explore over this Agent Finder registry."
	return map[string]any{
		"identifier":            strings.Replace(s.urn, ":registry:", ":mcp:", 1),
		"displayName":           name,
		"type":                  typeMCPServer,
		"description":           desc,
		"tags":                  []string{"mcp", "search", "agent-finder", "agent-discovery"},
		"capabilities":          []string{"search", "get_agent", "explore"},
		"representativeQueries": []string{"let my assistant find an agent for a task", "MCP server to search for agents"},
		"data": map[string]any{
			"name":        "agent-finder",
			"title":       name,
			"description": desc,
			"version":     firstNonEmpty(s.cfg.Version, "1.0.0"),
			"remotes":     []map[string]string{{"type": "streamable-http", "url": s.publicURL + "/mcp"}},
		},
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Identifier is this registry's URN (urn:ai:<domain>:registry:<name>), as
// its self catalog publishes it.
func (s *Server) Identifier() string { return s.urn }

func (s *Server) handleSelfCatalog(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "max-age=300")
	door.WriteJSON(w, http.StatusOK, s.selfCatalog())
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPIDoc)
}
