package filterlang

import (
	"fmt"
	"strconv"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
)

// filterAliases are other names the filter language accepts for fields of
// normalize.FilterFields.
var filterAliases = map[string]string{
	"id":            "identifier",
	"mediaType":     "type",
	"verified":      "publisherVerified",
	"tag":           "tags",
	"skill":         "skills",
	"capability":    "capabilities",
	"protocol":      "protocols",
	"catalog":       "sourceCatalog",
	"trust":         "trust.level",
	"health.status": "health",
}

// filterField returns the field a filter names, by its name or an alias.
func filterField(name string) (normalize.FilterField, bool) {
	if n, ok := filterAliases[name]; ok {
		name = n
	}
	f, ok := normalize.FilterFields[name]
	return f, ok
}

// translate turns a syntax tree into a Meilisearch filter expression.
func translate(n fnode) (filter.Expr, error) {
	switch n := n.(type) {
	case nil:
		return "", nil
	case andNode:
		return translateAll(n.kids, filter.And)
	case orNode:
		return translateAll(n.kids, filter.Or)
	case notNode:
		s, err := translate(n.kid)
		if err != nil {
			return "", err
		}
		return filter.Not(s), nil
	case cmpNode:
		return translateCmp(n)
	}
	return "", fmt.Errorf("filter: unknown node %T", n)
}

func translateAll(kids []fnode, join func(...filter.Expr) filter.Expr) (filter.Expr, error) {
	parts := make([]filter.Expr, len(kids))
	for i, k := range kids {
		s, err := translate(k)
		if err != nil {
			return "", err
		}
		parts[i] = s
	}
	return join(parts...), nil
}

// translateCmp translates one comparison: its values normalized and
// checked as its field says, then written by the field's kind.
func translateCmp(c cmpNode) (filter.Expr, error) {
	spec, ok := filterField(c.field)
	if !ok {
		return "", unsupported("filter field %q is not supported", c.field)
	}
	vals := make([]string, 0, len(c.vals))
	for _, v := range c.vals {
		vals = append(vals, filter.Norm(spec)(v))
	}
	if err := filter.CheckValues("filter: "+c.field, spec, vals); err != nil {
		return "", invalid("%s", err)
	}
	var expr filter.Expr
	switch spec.Kind {
	case normalize.KindTime:
		var ts []filter.Value
		for _, v := range vals {
			t, err := parseFilterTime(v)
			if err != nil {
				return "", invalid("filter: %s needs a timestamp (RFC 3339, a date or Unix seconds), got %q", c.field, v)
			}
			ts = append(ts, filter.Int(t))
		}
		expr = scalarCmp(spec.Field, c.op, ts, true)
	case normalize.KindBool:
		var bs []filter.Value
		for _, v := range vals {
			if v != "true" && v != "false" {
				return "", invalid("filter: %s is true or false, got %q", c.field, v)
			}
			bs = append(bs, filter.Bool(v == "true"))
		}
		expr = scalarCmp(spec.Field, c.op, bs, false)
	default:
		expr = valueCmp(spec, c.op, vals)
	}
	if expr == "" {
		return "", invalid("filter: operator %s is not supported for field %s", c.op, c.field)
	}
	return expr, nil
}

// scalarCmp writes op over field's vals, numbers or booleans (ordered: the
// comparisons < <= > >= too); "" when the field does not take op.
func scalarCmp(field string, op cmpOp, vals []filter.Value, ordered bool) filter.Expr {
	switch op {
	case opEq, opColon:
		return filter.Compare(field, filter.OpEq, vals[0])
	case opNe:
		return filter.Compare(field, filter.OpNe, vals[0])
	case opLt, opLe, opGt, opGe:
		if ordered {
			return filter.Compare(field, filter.Op(op), vals[0])
		}
	case opIn:
		return filter.InValues(field, vals)
	}
	return ""
}

// valueCmp writes op over a string field's vals: a type matches each of its
// spellings, a trust level or health status also the records that lack the
// field and count as it (filter.Match); "" when the field does not take op.
func valueCmp(spec normalize.FilterField, op cmpOp, vals []string) filter.Expr {
	switch op {
	case opEq, opColon:
		return filter.Match(spec.Field, vals[0])
	case opNe:
		return filter.Not(filter.Match(spec.Field, vals[0]))
	case opIn:
		if spec.Kind == normalize.KindType {
			var all []string
			for _, v := range vals {
				all = append(all, filter.TypeSpellings(v)...)
			}
			return filter.Any(spec.Field, all)
		}
		if filter.HasAbsentRule(spec.Field) {
			parts := make([]filter.Expr, len(vals))
			for i, v := range vals {
				parts[i] = filter.Match(spec.Field, v)
			}
			return filter.Or(parts...)
		}
		return filter.Any(spec.Field, vals)
	}
	return ""
}

// parseFilterTime reads RFC 3339, a date, or Unix seconds.
func parseFilterTime(v string) (int64, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, nil
	}
	if t, ok := normalize.ParseTime(v); ok {
		return t.Unix(), nil
	}
	return 0, fmt.Errorf("not a timestamp: %q", v)
}
