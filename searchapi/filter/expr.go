// Package filter writes Meilisearch filter expressions, and nothing else in
// the repository does: every filter a search, a listing or a lookup sends is
// built from the typed conditions here. A value a client sent is always a
// quoted Meilisearch string (String, Quote), numbers and booleans are
// formatted from Go values (Int, Bool), and field names are the
// normalize.Field* constants, never client text. Meilisearch compares
// filter strings case-insensitively.
//
// It imports normalize only: the engine (searchapi/search) and the filter
// language (searchapi/filterlang) build on it.
package filter

import (
	"strconv"
	"strings"
	"time"
)

// Expr is a Meilisearch filter expression; "" is no condition (every
// builder drops it).
type Expr string

// Filter returns e as a meilisearch.SearchRequest's Filter: nil when e is
// empty (no filter).
func (e Expr) Filter() any {
	if e == "" {
		return nil
	}
	return string(e)
}

// Value is one operand of a comparison: a quoted string, a number or a
// boolean.
type Value struct{ text string }

// String is the string value v, quoted (Quote).
func String(v string) Value { return Value{Quote(v)} }

// Int is the integer value n.
func Int(n int64) Value { return Value{strconv.FormatInt(n, 10)} }

// Bool is the boolean value b.
func Bool(b bool) Value { return Value{strconv.FormatBool(b)} }

// Op is a comparison operator.
type Op string

// The comparisons Meilisearch filters support on one value.
const (
	OpEq Op = "="
	OpNe Op = "!="
	OpLt Op = "<"
	OpLe Op = "<="
	OpGt Op = ">"
	OpGe Op = ">="
)

// Quote returns v as a Meilisearch filter string literal: double-quoted,
// backslashes and quotes escaped, so a value never becomes filter syntax.
func Quote(v string) string {
	var b strings.Builder
	b.Grow(len(v) + 2)
	b.WriteByte('"')
	for _, r := range v {
		switch r {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Compare is `field op v`.
func Compare(field string, op Op, v Value) Expr {
	return Expr(field + " " + string(op) + " " + v.text)
}

// Eq is `field = "v"`.
func Eq(field, v string) Expr { return Compare(field, OpEq, String(v)) }

// Is is `field = true` or `field = false`.
func Is(field string, b bool) Expr { return Compare(field, OpEq, Bool(b)) }

// Since keeps records whose Unix-seconds field is at or after t.
func Since(field string, t time.Time) Expr { return Compare(field, OpGe, Int(t.Unix())) }

// InValues is `field IN [v1, v2]`: the document's field (or one element of
// an array field) equals one of vals.
func InValues(field string, vals []Value) Expr {
	var b strings.Builder
	b.WriteString(field)
	b.WriteString(" IN [")
	for i, v := range vals {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.text)
	}
	b.WriteByte(']')
	return Expr(b.String())
}

// In is `field IN ["a", "b"]`, each value quoted.
func In(field string, vals []string) Expr {
	vs := make([]Value, len(vals))
	for i, v := range vals {
		vs[i] = String(v)
	}
	return InValues(field, vs)
}

// Any is the field equal to one of vals: Eq for one value, In for more.
func Any(field string, vals []string) Expr {
	if len(vals) == 1 {
		return Eq(field, vals[0])
	}
	return In(field, vals)
}

// Missing is `field NOT EXISTS`.
func Missing(field string) Expr { return Expr(field + " NOT EXISTS") }

// Empty is `field IS EMPTY`.
func Empty(field string) Expr { return Expr(field + " IS EMPTY") }

// And joins the non-empty expressions with AND, each in parentheses when
// there are two or more.
func And(parts ...Expr) Expr { return join(" AND ", parts) }

// Or joins the non-empty expressions with OR, each in parentheses when
// there are two or more.
func Or(parts ...Expr) Expr { return join(" OR ", parts) }

func join(op string, parts []Expr) Expr {
	keep := make([]string, 0, len(parts))
	for _, p := range parts {
		if p != "" {
			keep = append(keep, string(p))
		}
	}
	switch len(keep) {
	case 0:
		return ""
	case 1:
		return Expr(keep[0])
	}
	return Expr("(" + strings.Join(keep, ")"+op+"(") + ")")
}

// Not negates a non-empty expression.
func Not(e Expr) Expr {
	if e == "" {
		return ""
	}
	return "NOT (" + e + ")"
}
