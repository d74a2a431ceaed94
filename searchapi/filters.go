package searchapi

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/hybrid"
)

// Filters are built here and only here. Every value a client sends is passed
// through hybrid.Quote, so user text never becomes filter syntax: it is always a
// double-quoted Meilisearch string with backslashes and quotes escaped. Field
// names never come from the client; they are the normalize.Field* constants.
// Meilisearch compares filter strings case-insensitively.

// eqExpr is `field = "v"`.
func eqExpr(field, v string) string { return field + " = " + hybrid.Quote(v) }

// inExpr is `field IN ["a", "b"]`: the document's field (or one element of
// an array field) equals one of vals.
func inExpr(field string, vals []string) string {
	if len(vals) == 1 {
		return eqExpr(field, vals[0])
	}
	return hybrid.In(field, vals)
}

// andExpr joins non-empty expressions with AND, each in parentheses.
func andExpr(parts ...string) string { return joinExpr(" AND ", parts) }

// orExpr joins non-empty expressions with OR, each in parentheses.
func orExpr(parts ...string) string { return joinExpr(" OR ", parts) }

func joinExpr(op string, parts []string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	switch len(keep) {
	case 0:
		return ""
	case 1:
		return keep[0]
	}
	return "(" + strings.Join(keep, ")"+op+"(") + ")"
}

// notExpr negates a non-empty expression.
func notExpr(e string) string {
	if e == "" {
		return ""
	}
	return "NOT (" + e + ")"
}

// liveExpr leaves out stale records and records that expired at or before now.
func liveExpr(now time.Time) string {
	ts := strconv.FormatInt(now.Unix(), 10)
	return normalize.FieldStale + " = false AND (" + normalize.FieldExpiresAtTs + " = 0 OR " + normalize.FieldExpiresAtTs + " > " + ts + ")"
}

// sinceExpr keeps records whose Unix-seconds field is at or after t.
func sinceExpr(field string, t time.Time) string {
	return field + " >= " + strconv.FormatInt(t.Unix(), 10)
}

// typeSpellings returns the stored spellings a requested media type matches:
// the canonical form normalize stores, with and without "+json", so that
// "application/mcp-server-card+json", "APPLICATION/MCP-SERVER; v=1" and
// "application/ai-registry" all find what normalize canonicalized.
func typeSpellings(v string) []string {
	c := normalize.CanonicalType(v)
	base := strings.TrimSuffix(c, "+json")
	out := []string{c}
	for _, s := range []string{base, base + "+json"} {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// publisherValue reduces a publisher given as a URN, URL or name to what
// publisherNames holds (lower-case domain, host identifier or name).
func publisherValue(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	if strings.Contains(v, "://") {
		if u, err := url.Parse(v); err == nil && u.Hostname() != "" {
			return u.Hostname()
		}
	}
	return v
}

// filterGroup is one hard constraint of a search: a field and values, with
// how the values combine.
type filterGroup struct {
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

// expr translates the group into a filter expression.
func (g filterGroup) expr() string {
	if len(g.Vals) == 0 {
		return ""
	}
	switch g.Op {
	case opAll:
		parts := make([]string, len(g.Vals))
		for i, v := range g.Vals {
			parts[i] = g.valueExpr(v)
		}
		return andExpr(parts...)
	case opNone:
		parts := make([]string, len(g.Vals))
		for i, v := range g.Vals {
			parts[i] = g.valueExpr(v)
		}
		return notExpr(orExpr(parts...))
	}
	if g.Field == normalize.FieldType || len(g.Also) > 0 || hasAbsentRule(g.Field) {
		parts := make([]string, len(g.Vals))
		for i, v := range g.Vals {
			parts[i] = g.valueExpr(v)
		}
		return orExpr(parts...)
	}
	return inExpr(g.Field, g.Vals)
}

// valueExpr matches one value, expanding media type spellings and looking
// in every field of the group.
func (g filterGroup) valueExpr(v string) string {
	if g.Field == normalize.FieldType {
		return inExpr(g.Field, typeSpellings(v))
	}
	if a := absentExpr(g.Field, v); a != "" {
		return orExpr(eqExpr(g.Field, v), a)
	}
	if len(g.Also) > 0 {
		parts := []string{eqExpr(g.Field, v)}
		for _, f := range g.Also {
			parts = append(parts, eqExpr(f, v))
		}
		return orExpr(parts...)
	}
	return eqExpr(g.Field, v)
}

func lower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
func trim(s string) string  { return strings.TrimSpace(s) }

// valueNorm returns how a value given for f is reduced to what the index
// holds.
func valueNorm(f normalize.FilterField) func(string) string {
	switch {
	case f.Field == normalize.FieldPublisherNames:
		return publisherValue
	case f.Fold:
		return lower
	}
	return trim
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
	"skill": {"skills", opAny, skillValue, []string{normalize.FieldTags}},
	// trust.level (also "trust") and health (also "health.status"): see
	// trusthealth.go for records that lack them.
	"trust.level":   {"trust.level", opAny, nil, nil},
	"trust":         {"trust.level", opAny, nil, nil},
	"health":        {"health", opAny, nil, nil},
	"health.status": {"health", opAny, nil, nil},
}

// skillValue reduces an ADP skill tag query to what the skills field holds:
// "nlp/*" (prefix match) and "nlp" (parent match) both become "nlp", which
// every agent with a skill under nlp carries.
func skillValue(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimSuffix(s, "*")
	return strings.Trim(s, "/")
}

// newGroup builds a group for a known key from raw values, dropping empty
// values. ok is false for an unknown key; err names a value outside the
// field's closed list.
func newGroup(key string, vals []string) (g filterGroup, ok bool, err error) {
	k, ok := searchFilters[key]
	if !ok {
		return filterGroup{}, false, nil
	}
	f := normalize.FilterFields[k.name]
	norm := valueNorm(f)
	if k.norm != nil {
		norm = k.norm
	}
	g = filterGroup{Key: key, Field: f.Field, Also: k.also, Op: k.op}
	for _, v := range vals {
		if v = norm(v); v != "" && !slices.Contains(g.Vals, v) {
			g.Vals = append(g.Vals, v)
		}
	}
	return g, true, checkValues(key, f, g.Vals)
}
