package filter

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
)

// TypeSpellings returns the stored spellings a requested media type
// matches: the canonical form normalize stores, with and without "+json",
// so that "application/mcp-server-card+json", "APPLICATION/MCP-SERVER; v=1"
// and "application/ai-registry" all find what normalize canonicalized.
func TypeSpellings(v string) []string {
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

// PublisherValue reduces a publisher given as a URN, URL or name to what
// the publisherNames field holds (lower-case domain, host identifier or
// name).
func PublisherValue(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	if strings.Contains(v, "://") {
		if u, err := url.Parse(v); err == nil && u.Hostname() != "" {
			return u.Hostname()
		}
	}
	return v
}

func lower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
func trim(s string) string  { return strings.TrimSpace(s) }

// Norm returns how a value given for f is reduced to what the index holds.
func Norm(f normalize.FilterField) func(string) string {
	switch {
	case f.Field == normalize.FieldPublisherNames:
		return PublisherValue
	case f.Field == normalize.FieldCompliance:
		return normalize.ComplianceValue
	case f.Fold:
		return lower
	}
	return trim
}

// CheckValues refuses a value outside the closed list of a field that has
// one (a trust level or health status that does not exist matches nothing,
// which a client would take for an empty index); name is the field as the
// client named it.
func CheckValues(name string, f normalize.FilterField, vals []string) error {
	if f.Values == nil {
		return nil
	}
	for _, v := range vals {
		if !slices.Contains(f.Values, v) {
			return fmt.Errorf("%s must be one of %s, got %q", name, strings.Join(f.Values, ", "), v)
		}
	}
	return nil
}

// Trust and health are shown and filtered, never scored. A record indexed
// before they existed, or relayed by a registry that does not report them,
// lacks them; it counts, in filters and facet counts alike, as
// normalize.Record.TrustLevel and Record.HealthStatus say: trust "domain"
// when its publisher is verified, else "none"; health "unknown". The rule is
// read from normalize, never restated here.

// Absent matches the records that lack field and count as value v (folded)
// by the rule above, "" when none do.
func Absent(field, v string) Expr {
	switch field {
	case normalize.FieldTrustLevel:
		var parts []Expr
		for _, verified := range []bool{true, false} {
			if (normalize.Record{PublisherVerified: verified}).TrustLevel() == v {
				parts = append(parts, Is(normalize.FieldPublisherVerified, verified))
			}
		}
		if len(parts) == 0 {
			return ""
		}
		return And(Missing(field), Or(parts...))
	case normalize.FieldHealthStatus:
		if (normalize.Record{}).HealthStatus() == v {
			return Missing(field)
		}
	}
	return ""
}

// HasAbsentRule reports whether a condition on field must also look at
// records that lack it.
func HasAbsentRule(field string) bool {
	return field == normalize.FieldTrustLevel || field == normalize.FieldHealthStatus
}

// Match matches one (normalized) value of a string field: a media type
// matches each of its spellings, a trust level or health status also the
// records that lack the field and count as it (Absent).
func Match(field, v string) Expr {
	if field == normalize.FieldType {
		return Any(field, TypeSpellings(v))
	}
	if a := Absent(field, v); a != "" {
		return Or(Eq(field, v), a)
	}
	return Eq(field, v)
}

// Live leaves out stale records and records that expired at or before now.
func Live(now time.Time) Expr {
	return And(Is(normalize.FieldStale, false),
		Or(Compare(normalize.FieldExpiresAtTs, OpEq, Int(0)), Compare(normalize.FieldExpiresAtTs, OpGt, Int(now.Unix()))))
}

// Access is the filter of the records a caller in groups may see: a record
// whose visibility names groups is seen only by callers in one of them; a
// record without visibility is public. groups come from the caller's
// verified credential, never from request text.
func Access(groups []string) Expr {
	public := []Expr{Missing(normalize.FieldVisibility), Empty(normalize.FieldVisibility)}
	if len(groups) == 0 {
		return Or(public...)
	}
	return Or(append(public, Any(normalize.FieldVisibility, groups))...)
}
