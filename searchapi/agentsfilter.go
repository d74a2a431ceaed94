package searchapi

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
)

// The GET /agents filter language. Agent Finder §7.2 names an "EBNF filter
// expression" without giving the grammar; this is the one we implement, in
// the spirit of Google AIP-160 (which §7.2's orderBy syntax follows), with
// the usual precedence (NOT over AND over OR):
//
//	expression  = and-expr { "OR" and-expr } ;
//	and-expr    = unary { [ "AND" ] unary } ;          (juxtaposition is AND)
//	unary       = ( "NOT" | "-" ) unary | primary ;
//	primary     = "(" expression ")" | restriction ;
//	restriction = field comparator value
//	            | field "IN" ( "(" | "[" ) value { "," value } ( ")" | "]" ) ;
//	comparator  = "=" | "!=" | ":" | "<" | "<=" | ">" | ">=" ;
//	value       = string | word ;
//	string      = '"' { char | '\"' | '\\' } '"' | "'" { char | "\'" | '\\' } "'" ;
//	word        = a run of characters other than space ( ) [ ] , = ! < > : " ' ;
//
// AND, OR, NOT and IN are keywords in any case; quote a value to use one
// literally. ":" means "has" (equality for single values, membership for
// lists). The expression is parsed into a syntax tree and translated field by
// field into a Meilisearch filter whose values are all re-quoted: nothing of
// the client's text is passed through. Unknown fields are 400
// unsupported_filter; syntax errors and operators a field does not support
// are 400 invalid_request.

const (
	maxFilterLen   = 2000
	maxFilterDepth = 32
	maxFilterTerms = 100
)

// Syntax tree of a filter expression.
type fnode interface{ isNode() }

type andNode struct{ kids []fnode }
type orNode struct{ kids []fnode }
type notNode struct{ kid fnode }
type cmpNode struct {
	field string
	op    cmpOp
	vals  []string
	pos   int
}

// cmpOp is a comparison of the filter language.
type cmpOp string

// Comparisons; the ordering ones are spelled as in Meilisearch's filters.
const (
	opEq    cmpOp = "="
	opColon cmpOp = ":" // same as =
	opNe    cmpOp = "!="
	opLt    cmpOp = "<"
	opLe    cmpOp = "<="
	opGt    cmpOp = ">"
	opGe    cmpOp = ">="
	opIn    cmpOp = "in"
)

func (andNode) isNode() {}
func (orNode) isNode()  {}
func (notNode) isNode() {}
func (cmpNode) isNode() {}

type parser struct {
	toks  []token
	i     int
	depth int
	terms int
}

// parseFilter parses a filter expression into a syntax tree.
func parseFilter(s string) (fnode, error) {
	if len(s) > maxFilterLen {
		return nil, invalid("filter is longer than %d bytes", maxFilterLen)
	}
	toks, err := tokenize(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	if p.peek().kind == tEOF {
		return nil, nil
	}
	n, err := p.expr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, invalid("filter: unexpected %q at offset %d", t.text, t.pos)
	}
	return n, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

func (p *parser) keyword(k string) bool {
	t := p.peek()
	return t.kind == tWord && strings.EqualFold(t.text, k)
}

func (p *parser) expr() (fnode, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxFilterDepth {
		return nil, invalid("filter is nested deeper than %d", maxFilterDepth)
	}
	first, err := p.and()
	if err != nil {
		return nil, err
	}
	kids := []fnode{first}
	for p.keyword("OR") {
		p.next()
		n, err := p.and()
		if err != nil {
			return nil, err
		}
		kids = append(kids, n)
	}
	if len(kids) == 1 {
		return first, nil
	}
	return orNode{kids}, nil
}

func (p *parser) and() (fnode, error) {
	first, err := p.unary()
	if err != nil {
		return nil, err
	}
	kids := []fnode{first}
	for {
		if p.keyword("AND") {
			p.next()
		} else if t := p.peek(); t.kind == tEOF || t.kind == tRParen || p.keyword("OR") {
			break
		}
		n, err := p.unary()
		if err != nil {
			return nil, err
		}
		kids = append(kids, n)
	}
	if len(kids) == 1 {
		return first, nil
	}
	return andNode{kids}, nil
}

func (p *parser) unary() (fnode, error) {
	if p.keyword("NOT") || p.peek().kind == tMinus {
		p.next()
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > maxFilterDepth {
			return nil, invalid("filter is nested deeper than %d", maxFilterDepth)
		}
		n, err := p.unary()
		if err != nil {
			return nil, err
		}
		return notNode{n}, nil
	}
	return p.primary()
}

func (p *parser) primary() (fnode, error) {
	t := p.peek()
	switch t.kind {
	case tLParen:
		p.next()
		n, err := p.expr()
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tRParen {
			return nil, invalid("filter: expected ')' at offset %d", c.pos)
		}
		return n, nil
	case tWord:
		if p.keyword("AND") || p.keyword("OR") {
			return nil, invalid("filter: unexpected %s at offset %d", t.text, t.pos)
		}
		return p.restriction()
	case tEOF:
		return nil, invalid("filter: unexpected end of expression")
	}
	return nil, invalid("filter: unexpected %q at offset %d", t.text, t.pos)
}

func (p *parser) restriction() (fnode, error) {
	f := p.next()
	p.terms++
	if p.terms > maxFilterTerms {
		return nil, invalid("filter has more than %d comparisons", maxFilterTerms)
	}
	if p.keyword("IN") {
		p.next()
		open := p.next()
		if open.kind != tLParen && open.kind != tLBrack {
			return nil, invalid("filter: expected '(' or '[' after IN at offset %d", open.pos)
		}
		closeKind := tRParen
		if open.kind == tLBrack {
			closeKind = tRBrack
		}
		var vals []string
		for {
			v := p.next()
			if v.kind != tWord && v.kind != tString {
				return nil, invalid("filter: expected a value at offset %d", v.pos)
			}
			vals = append(vals, v.text)
			if len(vals) > maxFilterTerms {
				return nil, invalid("filter has more than %d values in one IN list", maxFilterTerms)
			}
			sep := p.next()
			if sep.kind == closeKind {
				break
			}
			if sep.kind != tComma {
				return nil, invalid("filter: expected ',' or the end of the IN list at offset %d", sep.pos)
			}
		}
		return cmpNode{field: f.text, op: opIn, vals: vals, pos: f.pos}, nil
	}
	op := p.next()
	if op.kind != tOp {
		return nil, invalid("filter: expected a comparison after %q at offset %d", f.text, op.pos)
	}
	v := p.next()
	if v.kind != tWord && v.kind != tString {
		return nil, invalid("filter: expected a value after %s at offset %d", op.text, v.pos)
	}
	return cmpNode{field: f.text, op: cmpOp(op.text), vals: []string{v.text}, pos: f.pos}, nil
}

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
func translate(n fnode) (string, error) {
	switch n := n.(type) {
	case nil:
		return "", nil
	case andNode:
		return translateAll(n.kids, " AND ")
	case orNode:
		return translateAll(n.kids, " OR ")
	case notNode:
		s, err := translate(n.kid)
		if err != nil {
			return "", err
		}
		return "NOT (" + s + ")", nil
	case cmpNode:
		return translateCmp(n)
	}
	return "", fmt.Errorf("filter: unknown node %T", n)
}

func translateAll(kids []fnode, op string) (string, error) {
	parts := make([]string, len(kids))
	for i, k := range kids {
		s, err := translate(k)
		if err != nil {
			return "", err
		}
		parts[i] = "(" + s + ")"
	}
	return strings.Join(parts, op), nil
}

// translateCmp translates one comparison: its values normalized and
// checked as its field says, then written by the field's kind.
func translateCmp(c cmpNode) (string, error) {
	spec, ok := filterField(c.field)
	if !ok {
		return "", unsupported("filter field %q is not supported", c.field)
	}
	vals := make([]string, 0, len(c.vals))
	for _, v := range c.vals {
		vals = append(vals, valueNorm(spec)(v))
	}
	if err := checkValues("filter: "+c.field, spec, vals); err != nil {
		return "", err
	}
	var expr string
	switch spec.Kind {
	case normalize.KindTime:
		var ts []string
		for _, v := range vals {
			t, err := parseFilterTime(v)
			if err != nil {
				return "", invalid("filter: %s needs a timestamp (RFC 3339, a date or Unix seconds), got %q", c.field, v)
			}
			ts = append(ts, strconv.FormatInt(t, 10))
		}
		expr = scalarCmp(spec.Field, c.op, ts, true)
	case normalize.KindBool:
		for _, v := range vals {
			if v != "true" && v != "false" {
				return "", invalid("filter: %s is true or false, got %q", c.field, v)
			}
		}
		expr = scalarCmp(spec.Field, c.op, vals, false)
	default:
		expr = valueCmp(spec, c.op, vals)
	}
	if expr == "" {
		return "", invalid("filter: operator %s is not supported for field %s", c.op, c.field)
	}
	return expr, nil
}

// scalarCmp writes op over field's vals, numbers or booleans as they are
// (ordered: the comparisons < <= > >= too); "" when the field does not
// take op.
func scalarCmp(field string, op cmpOp, vals []string, ordered bool) string {
	switch op {
	case opEq, opColon:
		return field + " = " + vals[0]
	case opNe:
		return field + " != " + vals[0]
	case opLt, opLe, opGt, opGe:
		if ordered {
			return field + " " + string(op) + " " + vals[0]
		}
	case opIn:
		return field + " IN [" + strings.Join(vals, ", ") + "]"
	}
	return ""
}

// valueCmp writes op over a string field's vals: a type matches each of its
// spellings, a trust level or health status also the records that lack the
// field and count as it; "" when the field does not take op.
func valueCmp(spec normalize.FilterField, op cmpOp, vals []string) string {
	one := func(v string) string {
		if spec.Kind == normalize.KindType {
			return inExpr(spec.Field, typeSpellings(v))
		}
		if a := absentExpr(spec.Field, v); a != "" {
			return orExpr(eqExpr(spec.Field, v), a)
		}
		return eqExpr(spec.Field, v)
	}
	switch op {
	case opEq, opColon:
		return one(vals[0])
	case opNe:
		return "NOT (" + one(vals[0]) + ")"
	case opIn:
		if spec.Kind == normalize.KindType {
			var all []string
			for _, v := range vals {
				all = append(all, typeSpellings(v)...)
			}
			return inExpr(spec.Field, all)
		}
		if hasAbsentRule(spec.Field) {
			parts := make([]string, len(vals))
			for i, v := range vals {
				parts[i] = one(v)
			}
			return orExpr(parts...)
		}
		return inExpr(spec.Field, vals)
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

// sortAliases are the spellings orderBy accepts, lower-case, for the names
// of normalize.SortFields.
var sortAliases = map[string]string{
	"displayname": "displayName", "name": "displayName", "display_name": "displayName",
	"updatedat": "updatedAt", "updated_at": "updatedAt", "updated": "updatedAt",
	"indexedat": "indexedAt", "indexed_at": "indexedAt", "createdat": "indexedAt", "created_at": "indexedAt",
}

// parseOrderBy reads "field [ASC|DESC], ..." into Meilisearch sort rules.
func parseOrderBy(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		f := strings.Fields(part)
		if len(f) == 0 || len(f) > 2 {
			return nil, invalid("orderBy: want \"field [ASC|DESC]\" items separated by commas")
		}
		field, ok := normalize.SortFields[sortAliases[strings.ToLower(f[0])]]
		if !ok {
			return nil, invalid("orderBy: cannot order by %q (use displayName, updatedAt or indexedAt)", f[0])
		}
		dir := "asc"
		if len(f) == 2 {
			switch strings.ToUpper(f[1]) {
			case "ASC":
			case "DESC":
				dir = "desc"
			default:
				return nil, invalid("orderBy: direction must be ASC or DESC, got %q", f[1])
			}
		}
		out = append(out, field+":"+dir)
	}
	if len(out) > 3 {
		return nil, invalid("orderBy: at most 3 fields")
	}
	return out, nil
}
