package search

import (
	"slices"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
)

// Group is one hard constraint of a search: a field and values, with
// how the values combine.
type Group struct {
	Key   string   // the request's name for it (tags, requiredTags, type, ...)
	Field string   // index field
	Also  []string // more index fields a value may be found in (any of them)
	Op    groupOp  // any, all, none
	Vals  []string // normalized values
}

type groupOp int

const (
	opAny  groupOp = iota // one of the values (OR)
	opAll                 // every value (AND)
	opNone                // none of the values
)

// Expr translates the group into a filter expression.
func (g Group) Expr() filter.Expr {
	if len(g.Vals) == 0 {
		return ""
	}
	switch g.Op {
	case opAll:
		parts := make([]filter.Expr, len(g.Vals))
		for i, v := range g.Vals {
			parts[i] = g.valueExpr(v)
		}
		return filter.And(parts...)
	case opNone:
		parts := make([]filter.Expr, len(g.Vals))
		for i, v := range g.Vals {
			parts[i] = g.valueExpr(v)
		}
		return filter.Not(filter.Or(parts...))
	}
	if g.Field == normalize.FieldType || len(g.Also) > 0 || filter.HasAbsentRule(g.Field) {
		parts := make([]filter.Expr, len(g.Vals))
		for i, v := range g.Vals {
			parts[i] = g.valueExpr(v)
		}
		return filter.Or(parts...)
	}
	return filter.Any(g.Field, g.Vals)
}

// valueExpr matches one value, expanding media type spellings and looking
// in every field of the group.
func (g Group) valueExpr(v string) filter.Expr {
	if len(g.Also) > 0 {
		parts := []filter.Expr{filter.Eq(g.Field, v)}
		for _, f := range g.Also {
			parts = append(parts, filter.Eq(f, v))
		}
		return filter.Or(parts...)
	}
	return filter.Match(g.Field, v)
}

// searchFilter is a filter a client may name in query.filter (ARD) or as a
// query extension field: a field of normalize.FilterFields and how its
// values combine.
type searchFilter struct {
	name string
	op   groupOp
	norm func(string) string // nil: valueNorm of the field
	also []string            // more index fields a value may be found in
}

// searchFilters are the filters POST /search and POST /explore understand.
var searchFilters = map[string]searchFilter{
	"type":         {"type", opAny, nil, nil},
	"publisher":    {"publisher", opAny, nil, nil},
	"compliance":   {"compliance", opAny, nil, nil},
	"tags":         {"tags", opAny, nil, nil},
	"requiredTags": {"tags", opAll, nil, nil},
	"excludedTags": {"tags", opNone, nil, nil},
	"skills":       {"skills", opAny, nil, nil},
	"capabilities": {"capabilities", opAny, nil, nil},
	"protocols":    {"protocols", opAny, nil, nil},
	"identifier":   {"identifier", opAny, nil, nil},
	"status":       {"status", opAny, nil, nil},
	"languages":    {"languages", opAny, nil, nil},
	// auth: the agent accepts one of these authentication methods, in any
	// spelling normalize.AuthMethod reads ("API Key", "apiKey", ...).
	"auth": {"auth", opAny, normalize.AuthMethod, nil},
	// capability (HAIDIP): the agent has every value, as a capability, a
	// tag or a skill (publishers put the same words in any of them).
	"capability": {"capabilities", opAll, nil, []string{normalize.FieldTags, normalize.FieldSkills}},
	// skill (ADP): the agent has one of the skill tags, or a child of it
	// (skills hold every declared skill's parents), or the flat tag.
	"skill": {"skills", opAny, SkillValue, []string{normalize.FieldTags}},
	// trust.level (also "trust") and health (also "health.status"): see
	// trusthealth.go for records that lack them.
	"trust.level":   {"trust.level", opAny, nil, nil},
	"trust":         {"trust.level", opAny, nil, nil},
	"health":        {"health", opAny, nil, nil},
	"health.status": {"health", opAny, nil, nil},
}

// SkillValue reduces an ADP skill tag query to what the skills field holds:
// "nlp/*" (prefix match) and "nlp" (parent match) both become "nlp", which
// every agent with a skill under nlp carries.
func SkillValue(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimSuffix(s, "*")
	return strings.Trim(s, "/")
}

// newGroup builds a group for a known key from raw values, dropping empty
// values. ok is false for an unknown key; err names a value outside the
// field's closed list.
func newGroup(key string, vals []string) (g Group, ok bool, err error) {
	k, ok := searchFilters[key]
	if !ok {
		return Group{}, false, nil
	}
	f := normalize.FilterFields[k.name]
	norm := filter.Norm(f)
	if k.norm != nil {
		norm = k.norm
	}
	g = Group{Key: key, Field: f.Field, Also: k.also, Op: k.op}
	for _, v := range vals {
		if v = norm(v); v != "" && !slices.Contains(g.Vals, v) {
			g.Vals = append(g.Vals, v)
		}
	}
	if err := filter.CheckValues(key, f, g.Vals); err != nil {
		return g, true, invalid("%s", err)
	}
	return g, true, nil
}
