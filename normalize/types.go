package normalize

import "strings"

// Canonical media types of the artifacts normalize knows. Filters and the
// index store these spellings; the as-published spelling is kept in
// Record.ArtifactType when it differs.
const (
	TypeAICatalog  = "application/ai-catalog+json"
	TypeAIRegistry = "application/ai-registry+json"
	TypeA2A        = "application/a2a-agent-card+json"
	TypeMCP        = "application/mcp-server+json"
	TypeADP        = "application/adp-agent-card+json"
	TypeHAIDIP     = "application/haidip-agent+json"
	TypeXu         = "application/agent-metadata+json"
	// TypeSkill is an agent skill (github/agentfinder-catalog publishes
	// application/ai-skill, others add +json): one spelling, one facet value.
	TypeSkill = "application/ai-skill"
)

// typeAliases maps spellings seen in the wild, lower-cased, without
// parameters and without a "+json" suffix, to canonical media types.
var typeAliases = map[string]string{
	"application/ai-catalog":            TypeAICatalog,
	"application/ai-registry":           TypeAIRegistry,
	"application/a2a-agent-card":        TypeA2A,
	"application/a2a-card":              TypeA2A,
	"application/a2a":                   TypeA2A,
	"application/a2a-agent":             TypeA2A,
	"application/agent-card":            TypeA2A,
	"application/mcp-server":            TypeMCP,
	"application/mcp-server-card":       TypeMCP,
	"application/mcp":                   TypeMCP,
	"application/adp-agent-card":        TypeADP,
	"application/adp":                   TypeADP,
	"application/anp-agent-description": TypeADP,
	"application/agent-description":     TypeADP,
	"application/haidip-agent":          TypeHAIDIP,
	"application/haidip":                TypeHAIDIP,
	"application/agent-metadata":        TypeXu,
	"application/xu-agent-metadata":     TypeXu,
	"application/ai-skill":              TypeSkill,
	"application/skill":                 TypeSkill,
}

// CanonicalType returns the canonical spelling of a media type: lower-case,
// parameters removed, and known variants unified (application/mcp-server-card+json
// becomes application/mcp-server+json, application/ai-registry becomes
// application/ai-registry+json, ...). Filters match on this form. Types it
// does not know are returned lower-cased without parameters.
func CanonicalType(t string) string {
	t = baseType(t)
	if c, ok := typeAliases[strings.TrimSuffix(t, "+json")]; ok {
		return c
	}
	return t
}

// baseType lower-cases t and removes its parameters.
func baseType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	return t
}

// SameType reports whether two media types name the same artifact type:
// case, parameters, a "+json" suffix and known aliases are ignored.
func SameType(a, b string) bool {
	ca, cb := CanonicalType(a), CanonicalType(b)
	return strings.TrimSuffix(ca, "+json") == strings.TrimSuffix(cb, "+json")
}

// mappable reports whether normalize can map an artifact of canonical type t
// into a record.
func mappable(t string) bool {
	switch t {
	case TypeA2A, TypeMCP, TypeADP, TypeHAIDIP, TypeXu:
		return true
	}
	return false
}

// protocolOf names the protocol of a canonical artifact type, or "".
func protocolOf(t string) string {
	switch t {
	case TypeA2A:
		return "a2a"
	case TypeMCP:
		return "mcp"
	case TypeADP:
		return "adp"
	case TypeHAIDIP:
		return "haidip"
	case TypeAIRegistry:
		return "agent-finder"
	}
	return ""
}

// validMediaType reports whether t looks like type/subtype without spaces.
func validMediaType(t string) bool {
	t = strings.TrimSpace(t)
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	slash := strings.IndexByte(t, '/')
	if slash <= 0 || slash == len(t)-1 || strings.Count(t, "/") != 1 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"[]?={}`, c) >= 0 {
			return false
		}
	}
	return true
}
