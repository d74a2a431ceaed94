package mcpserver

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// instructions tell a model what the server is for.
const instructions = `Agent Finder indexes AI agents, MCP servers and other agent artifacts published in ai-catalog.json catalogs. ` +
	`Call search when the user's task needs a capability you do not have: describe the task in plain words and pick an agent from the results. ` +
	`Call get_agent for the full record of one result (its endpoints and metadata), and explore to see what the index holds.`

// The input schemas are written by hand, as plain JSON Schema that strict
// clients accept: every property has exactly one type (no ["array","null"]
// unions for optional fields, which the SDK's inference would produce for
// slices), arrays say what they hold, and optional means "not required".
// Numeric ranges are in the descriptions, not the schema: the API checks
// them and says what it wants ("pageSize must be an integer from 1 to
// 100"), where the SDK's schema check would say "maximum: 1000/1 is
// greater than 100.000000".

// filterSchema is the ARD filter object: hard constraints on the results.
const filterSchema = `{
  "type": "object",
  "description": "Hard filters; every named filter must hold. Values within one filter are alternatives (any of them), except requiredTags (all of them) and excludedTags (none of them).",
  "properties": {
    "tags": {"type": "array", "items": {"type": "string"}, "description": "The entry carries one of these tags."},
    "requiredTags": {"type": "array", "items": {"type": "string"}, "description": "The entry carries every one of these tags."},
    "excludedTags": {"type": "array", "items": {"type": "string"}, "description": "The entry carries none of these tags."},
    "preferredTags": {"type": "array", "items": {"type": "string"}, "description": "Soft: entries with these tags rank higher; nothing is left out."},
    "skills": {"type": "array", "items": {"type": "string"}, "description": "Hierarchical skill tags such as nlp/translation (a parent such as nlp matches its children)."},
    "capabilities": {"type": "array", "items": {"type": "string"}},
    "protocols": {"type": "array", "items": {"type": "string"}, "description": "Protocols the agent speaks: a2a, mcp, adp, haidip, https, ..."},
    "languages": {"type": "array", "items": {"type": "string"}, "description": "Natural languages the agent supports (ISO 639-1 codes such as en, fr)."},
    "status": {"type": "array", "items": {"type": "string"}, "description": "Operational status: active, deprecated, testing, ..."},
    "auth": {"type": "array", "items": {"type": "string"}, "description": "Authentication methods the agent accepts: none, api-key, bearer, oauth2, oidc, mtls."},
    "identifier": {"type": "array", "items": {"type": "string"}},
    "verifiedOnly": {"type": "boolean", "description": "Only entries whose publisher's domain served the catalog."},
    "trust": {"type": "array", "items": {"type": "string", "enum": ["signed", "domain", "registry", "none"]}, "description": "Trust levels: signed (a valid signature by the publisher), domain (served from the publisher's own domain), registry (an MCP registry checked that the publisher owns the server name's namespace), none (neither, or a failed check)."},
    "health": {"type": "array", "items": {"type": "string", "enum": ["up", "down", "auth_required", "not_mcp", "template", "unknown"]}, "description": "Endpoint health at the last probe: up, down, auth_required (answers but needs credentials), not_mcp (answers HTTP but not MCP), template (URL holds a {placeholder}), unknown (not probed)."},
    "signedOnly": {"type": "boolean", "description": "Only entries signed by their publisher (trust signed)."},
    "liveOnly": {"type": "boolean", "description": "Only entries whose endpoint answered the last probe (health up)."}
  },
  "additionalProperties": false
}`

// stringArray is a property holding a list of strings.
func stringArray(desc string) string {
	return `{"type": "array", "items": {"type": "string"}, "description": ` + quote(desc) + `}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// queryProperties are the properties search and explore share.
func queryProperties() string {
	return `
    "type": ` + stringArray("Artifact media types, e.g. application/mcp-server+json (MCP servers) or application/a2a-agent-card+json (A2A agents).") + `,
    "publisher": ` + stringArray("Publisher domains or names, e.g. acme.com.") + `,
    "compliance": ` + stringArray("Compliance attestations the entry must hold, e.g. soc2, hipaa, iso27001.") + `,
    "filter": ` + filterSchema
}

// searchSchema is the search tool's input: POST /search's request.
var searchSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "text": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "What the agent should do, in plain words, e.g. 'book a flight to Tokyo' or 'read Excel spreadsheets'."},` +
	queryProperties() + `,
    "federation": {"type": "string", "enum": ["auto", "referrals", "none"], "description": "auto (default): also ask other registries; referrals: answer locally and name registries to ask; none: this registry only."},
    "pageSize": {"type": "integer", "description": "Results per page, 1 to 100 (default 10)."},
    "pageToken": {"type": "string", "description": "The pageToken of a previous answer, to get its next page (same text and filters)."},
    "minScore": {"type": "number", "description": "Leave out results scoring below this (0-100, about the chance in 100 that a result is what was asked for). Default: the registry's cut-off; 0 returns every result, however weak."}
  },
  "required": ["text"],
  "additionalProperties": false
}`)

// getAgentSchema is get_agent's input.
var getAgentSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "identifier": {"type": "string", "minLength": 1, "description": "The identifier of a search result, e.g. urn:ai:acme.com:agent:travel."}
  },
  "required": ["identifier"],
  "additionalProperties": false
}`)

// exploreSchema is explore's input: POST /explore's request.
var exploreSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "text": {"type": "string", "maxLength": 1000, "description": "Optional: count only entries matching these words."},` +
	queryProperties() + `,
    "facets": {"type": "array", "items": {"type": "string", "enum": ["type", "publisher", "tags", "compliance", "protocols", "capabilities", "skills", "languages", "trust", "health"]}, "description": "What to count (default type, publisher, tags, compliance)."}
  },
  "additionalProperties": false
}`)

// The output schemas describe each tool's structured content: the API
// answer it stands for, or, on a tool error (isError), {"error": {"code",
// "message", "correlationId"}}. Members beyond those named may appear, as
// the API adds them.

// errorProperty is the structured content of a failed call.
const errorProperty = `"error": {"type": "object", "description": "Set when the call failed (isError): the API's error code, message and correlation id.",
      "properties": {"code": {"type": "string"}, "message": {"type": "string"}, "correlationId": {"type": "string"}}}`

// entryProperties are those of a catalog entry as the API returns it.
const entryProperties = `
        "identifier": {"type": "string"}, "displayName": {"type": "string"}, "type": {"type": "string"},
        "url": {"type": "string"}, "description": {"type": "string"},
        "score": {"type": "number", "description": "Relevance 0-100 (search results only)."},
        "trust": {"type": "object", "properties": {"level": {"type": "string"}, "signer": {"type": "string"}}},
        "health": {"type": "object", "properties": {"status": {"type": "string"}, "latencyMs": {"type": "number"}}}`

// searchOutputSchema is POST /search's answer.
var searchOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "results": {"type": "array", "description": "The best matches first.", "items": {"type": "object", "properties": {` + entryProperties + `}}},
    "referrals": {"type": "array", "description": "Other registries worth asking.", "items": {"type": "object"}},
    "upstreams": {"type": "array", "description": "Each upstream registry's outcome (federated searches).", "items": {"type": "object"}},
    "pageToken": {"type": "string", "description": "Pass it back for the next page."},
    "reason": {"type": "string", "description": "Why results is empty, when something left them out."},
    ` + errorProperty + `
  }
}`)

// getAgentOutputSchema is GET /agents/{identifier}'s answer: one record.
var getAgentOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {` + entryProperties + `,
    "bindings": {"type": "array", "description": "How to reach it: protocol, url, transport, package.", "items": {"type": "object"}},
    ` + errorProperty + `
  }
}`)

// exploreOutputSchema is POST /explore's answer: counts per facet.
var exploreOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "facets": {"type": "object", "description": "For each facet asked for, its values and how many entries hold each."},
    ` + errorProperty + `
  }
}`)

func readOnly(title string) *mcp.ToolAnnotations {
	closed := false
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &closed}
}

func searchTool() *mcp.Tool {
	return &mcp.Tool{
		Name:  "search",
		Title: "Search for agents",
		Description: "Find AI agents, MCP servers and tools that can do a task. Describe the task in plain words in text " +
			"(add filters only when the user requires them). Returns the best matches first, each with its name, identifier, " +
			"type, url, a 0-100 relevance score, a one-line description, its trust (signed, domain or none) and endpoint health " +
			"(up, down, auth_required, not_mcp, template or unknown) and the registry it came from; \"also ask\" names other " +
			"registries worth querying. When nothing matches well it says so: then do not pick a result, rephrase or tell the user. " +
			"Use get_agent with a result's identifier for its endpoints and full metadata.",
		InputSchema:  searchSchema,
		OutputSchema: searchOutputSchema,
		Annotations:  readOnly("Search for agents"),
	}
}

func getAgentTool() *mcp.Tool {
	return &mcp.Tool{
		Name:         "get_agent",
		Title:        "Get an agent's record",
		Description:  "Get the full record of one agent by the identifier a search result gave: description, endpoints (bindings), protocols, skills, publisher, compliance, trust (signed, domain or none) and endpoint health, and where the registry found it.",
		InputSchema:  getAgentSchema,
		OutputSchema: getAgentOutputSchema,
		Annotations:  readOnly("Get an agent's record"),
	}
}

func exploreTool() *mcp.Tool {
	return &mcp.Tool{
		Name:  "explore",
		Title: "Explore the index",
		Description: "Count what the index holds, by type, publisher, tag, compliance, protocol, capability, skill, trust or health, " +
			"optionally only among entries matching text and filters. Use it to learn which tags or publishers exist " +
			"before filtering a search, or to tell the user what kinds of agents are available.",
		InputSchema:  exploreSchema,
		OutputSchema: exploreOutputSchema,
		Annotations:  readOnly("Explore the index"),
	}
}

// searchInput is the search tool's arguments (searchSchema).
type searchInput struct {
	Text       string          `json:"text"`
	Type       []string        `json:"type,omitempty"`
	Publisher  []string        `json:"publisher,omitempty"`
	Compliance []string        `json:"compliance,omitempty"`
	Filter     json.RawMessage `json:"filter,omitempty"`
	Federation string          `json:"federation,omitempty"`
	PageSize   *int            `json:"pageSize,omitempty"`
	PageToken  string          `json:"pageToken,omitempty"`
	MinScore   *float64        `json:"minScore,omitempty"`
}

// apiQuery is the "query" object of POST /search and POST /explore.
type apiQuery struct {
	Text       string          `json:"text,omitempty"`
	Type       []string        `json:"type,omitempty"`
	Publisher  []string        `json:"publisher,omitempty"`
	Compliance []string        `json:"compliance,omitempty"`
	Filter     json.RawMessage `json:"filter,omitempty"`
	Federation string          `json:"federation,omitempty"`
}

// request is the POST /search body the call stands for.
func (in searchInput) request() []byte {
	b, _ := json.Marshal(struct {
		Query     apiQuery `json:"query"`
		PageSize  *int     `json:"pageSize,omitempty"`
		PageToken string   `json:"pageToken,omitempty"`
		MinScore  *float64 `json:"minScore,omitempty"`
	}{
		Query:     apiQuery{Text: in.Text, Type: in.Type, Publisher: in.Publisher, Compliance: in.Compliance, Filter: in.Filter, Federation: in.Federation},
		PageSize:  in.PageSize,
		PageToken: in.PageToken,
		MinScore:  in.MinScore,
	})
	return b
}

// getAgentInput is get_agent's arguments.
type getAgentInput struct {
	Identifier string `json:"identifier"`
}

// exploreInput is explore's arguments (exploreSchema).
type exploreInput struct {
	Text       string          `json:"text,omitempty"`
	Type       []string        `json:"type,omitempty"`
	Publisher  []string        `json:"publisher,omitempty"`
	Compliance []string        `json:"compliance,omitempty"`
	Filter     json.RawMessage `json:"filter,omitempty"`
	Facets     []string        `json:"facets,omitempty"`
}

// request is the POST /explore body the call stands for.
func (in exploreInput) request() []byte {
	b, _ := json.Marshal(struct {
		Query  apiQuery `json:"query"`
		Facets []string `json:"facets,omitempty"`
	}{
		Query:  apiQuery{Text: in.Text, Type: in.Type, Publisher: in.Publisher, Compliance: in.Compliance, Filter: in.Filter},
		Facets: in.Facets,
	})
	return b
}
