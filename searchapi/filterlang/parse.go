// Package filterlang reads the GET /agents filter language and orderBy
// parameter. Agent Finder §7.2 names an "EBNF filter expression" without
// giving the grammar; this is the one we implement, in the spirit of Google
// AIP-160 (which §7.2's orderBy syntax follows), with the usual precedence
// (NOT over AND over OR):
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
// field into a Meilisearch filter through searchapi/filter, whose values are
// all re-quoted: nothing of the client's text is passed through. Every
// error is an *Error: unknown fields are Unsupported (400
// unsupported_filter), syntax errors and operators a field does not support
// are not (400 invalid_request). It imports normalize and searchapi/filter
// only.
package filterlang

import (
	"strings"

	"github.com/agentfinder/agentfinder/searchapi/filter"
)

// Parse reads a filter expression into the Meilisearch filter it stands
// for ("" for an empty expression).
func Parse(s string) (filter.Expr, error) {
	tree, err := parseFilter(s)
	if err != nil {
		return "", err
	}
	return translate(tree)
}

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
