package filterlang

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The lexer of the GET /agents filter language (parse.go has the
// grammar): words, quoted strings, comparators and punctuation.

type tokKind int

const (
	tEOF tokKind = iota
	tWord
	tString
	tLParen
	tRParen
	tLBrack
	tRBrack
	tComma
	tOp // = != : < <= > >=
	tMinus
)

type token struct {
	kind tokKind
	text string // word, unquoted string, or operator
	pos  int    // byte offset, for messages
}

// punctuation are the one-character tokens other than operators.
var punctuation = map[rune]tokKind{'(': tLParen, ')': tRParen, '[': tLBrack, ']': tRBrack, ',': tComma}

// tokenize splits a filter expression into tokens.
func tokenize(s string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			return nil, invalid("filter: invalid UTF-8 at offset %d", i)
		}
		if unicode.IsSpace(r) {
			i += w
			continue
		}
		var (
			tok  token
			next int
			err  error
		)
		switch {
		case punctuation[r] != tEOF:
			tok, next = token{punctuation[r], string(r), i}, i+1
		case strings.ContainsRune("=:!<>", r):
			tok, next, err = lexOp(s, i)
		case r == '"' || r == '\'':
			tok, next, err = lexString(s, i)
		case r == '-' && (len(toks) == 0 || toks[len(toks)-1].kind != tOp):
			tok, next = token{tMinus, "-", i}, i+1
		default:
			tok, next = lexWord(s, i, valuePosition(toks))
		}
		if err != nil {
			return nil, err
		}
		toks = append(toks, tok)
		i = next
	}
	return append(toks, token{tEOF, "", len(s)}), nil
}

// lexOp reads the comparator at s[i] (= : != < <= > >=) and returns it
// with the offset after it.
func lexOp(s string, i int) (token, int, error) {
	if s[i] != '=' && s[i] != ':' && i+1 < len(s) && s[i+1] == '=' {
		return token{tOp, s[i : i+2], i}, i + 2, nil
	}
	if s[i] == '!' {
		return token{}, 0, invalid("filter: '!' at offset %d must be followed by '='", i)
	}
	return token{tOp, s[i : i+1], i}, i + 1, nil
}

// lexString reads the quoted string starting at s[start] (backslash
// escapes the next byte) and returns it unquoted with the offset after its
// closing quote.
func lexString(s string, start int) (token, int, error) {
	quote := s[start]
	var b strings.Builder
	for i := start + 1; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			b.WriteByte(s[i])
			continue
		}
		if c == quote {
			return token{tString, b.String(), start}, i + 1, nil
		}
		b.WriteByte(c)
	}
	return token{}, len(s), invalid("filter: unterminated string starting at offset %d", start)
}

// lexWord reads the word starting at s[start] and returns it with the
// offset after it. In a value position a word may contain ':' (timestamps,
// URNs).
func lexWord(s string, start int, value bool) (token, int) {
	stops := `()[],=!<>:"'`
	if value {
		stops = `()[],=!<>"'`
	}
	i := start
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) || strings.ContainsRune(stops, r) {
			break
		}
		i += w
	}
	return token{tWord, s[start:i], start}, i
}

// valuePosition reports whether the next token is a value: after a
// comparator, or inside an IN list.
func valuePosition(toks []token) bool {
	n := len(toks)
	if n == 0 {
		return false
	}
	switch toks[n-1].kind {
	case tOp:
		return true
	case tComma, tLParen, tLBrack:
		for i := n - 1; i >= 0; i-- {
			switch toks[i].kind {
			case tLParen, tLBrack:
				return i > 0 && toks[i-1].kind == tWord && strings.EqualFold(toks[i-1].text, "IN")
			case tRParen, tRBrack, tOp:
				return false
			}
		}
	}
	return false
}
