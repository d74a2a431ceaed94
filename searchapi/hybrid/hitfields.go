package hybrid

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The fields of a hit are read on every search (each sub-query's
// identifiers and scores, the pool's texts): these read the common shapes
// (a string without escapes, an array of them, a number) directly and
// leave the rest to encoding/json, with the same results. raw is a value
// a JSON decoder has already checked (a hit's field), so a string without
// a backslash is its bytes between the quotes.

// String reads raw, a JSON string; ok is false for anything else.
func String(raw json.RawMessage) (s string, ok bool) {
	if inner, plain := plainString(raw); plain {
		return string(inner), true
	}
	return s, json.Unmarshal(raw, &s) == nil
}

// Strings reads raw, a JSON string or array of strings; anything else is
// nil.
func Strings(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '"' {
		if s, ok := String(raw); ok {
			return []string{s}
		}
		return nil
	}
	if out, ok := plainStrings(raw); ok {
		return out
	}
	var out []string
	if json.Unmarshal(raw, &out) != nil {
		return nil
	}
	return out
}

// Number reads raw, a JSON number, as encoding/json does.
func Number(raw json.RawMessage) (float64, bool) {
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		var v float64
		err = json.Unmarshal(raw, &v)
		f = v
	}
	return f, err == nil
}

// plainString returns the bytes between the quotes of raw when it is a
// string without escapes (and valid UTF-8, which encoding/json would
// otherwise repair).
func plainString(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') >= 0 || bytes.IndexByte(inner, '"') >= 0 || !utf8.Valid(inner) {
		return nil, false
	}
	return inner, true
}

// plainStrings reads raw when it is an array of plain strings (see
// plainString); ok is false for anything else.
func plainStrings(raw []byte) (out []string, ok bool) {
	if len(raw) < 2 || raw[0] != '[' || bytes.IndexByte(raw, '\\') >= 0 || !utf8.Valid(raw) {
		return nil, false
	}
	out = []string{}
	rest := skipSpace(raw[1:])
	if len(rest) > 0 && rest[0] == ']' {
		return out, len(skipSpace(rest[1:])) == 0
	}
	for {
		if len(rest) == 0 || rest[0] != '"' {
			return nil, false
		}
		end := bytes.IndexByte(rest[1:], '"')
		if end < 0 {
			return nil, false
		}
		out = append(out, string(rest[1:1+end]))
		rest = skipSpace(rest[2+end:])
		switch {
		case len(rest) > 0 && rest[0] == ',':
			rest = skipSpace(rest[1:])
		case len(rest) > 0 && rest[0] == ']':
			return out, len(skipSpace(rest[1:])) == 0
		default:
			return nil, false
		}
	}
}

// skipSpace drops JSON white space from the front of b.
func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}
