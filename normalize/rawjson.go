package normalize

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The helpers here split JSON that is already known to be valid (a piece of
// a document json.Valid accepted) without the validation pass and copies
// json.Unmarshal makes on every call. Each one answers exactly what the
// json.Unmarshal call it replaces would; the values they return alias raw
// (capacity-limited, so an append copies).

// isSpace reports JSON insignificant whitespace.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// skipSpace returns the index of the first non-space byte of b at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index just past the string token starting at i.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index just past the valid JSON value starting at i.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

// objectMembers does what json.Unmarshal(raw, &m) does for a
// map[string]json.RawMessage m, raw being valid JSON: ok is false when raw
// is not an object; m is nil for null.
func objectMembers(raw []byte) (m map[string]json.RawMessage, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) {
		return nil, false
	}
	switch raw[i] {
	case 'n':
		return nil, true
	case '{':
	default:
		return nil, false
	}
	m = map[string]json.RawMessage{}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return m, true
	}
	for i < len(raw) {
		end := skipString(raw, i)
		var key string
		if !decodeString(raw[i:end], &key) {
			return nil, false
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		i = skipSpace(raw, i+1)
		end = skipValue(raw, i)
		m[key] = json.RawMessage(raw[i:end:end])
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] == '}' {
			break
		}
		i = skipSpace(raw, i+1) // ,
	}
	return m, true
}

// arrayItems does what json.Unmarshal(raw, &list) does for a
// []json.RawMessage list, raw being valid JSON: ok is false when raw is not
// an array; list is nil for null and empty (not nil) for [].
func arrayItems(raw []byte) (list []json.RawMessage, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) {
		return nil, false
	}
	switch raw[i] {
	case 'n':
		return nil, true
	case '[':
	default:
		return nil, false
	}
	list = []json.RawMessage{}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return list, true
	}
	for i < len(raw) {
		end := skipValue(raw, i)
		list = append(list, json.RawMessage(raw[i:end:end]))
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] == ']' {
			break
		}
		i = skipSpace(raw, i+1) // ,
	}
	return list, true
}

// unmarshalString does what json.Unmarshal(raw, s) does for a string, raw
// being valid JSON: null leaves *s as it is, another non-string fails.
func unmarshalString(raw []byte, s *string) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) {
		return false
	}
	switch raw[i] {
	case 'n':
		return true
	case '"':
		return decodeString(raw[i:], s)
	}
	return false
}

// decodeString decodes the string token tok (quotes included, possibly
// followed by whitespace), the common case without escapes directly.
func decodeString(tok []byte, s *string) bool {
	for len(tok) > 0 && isSpace(tok[len(tok)-1]) {
		tok = tok[:len(tok)-1]
	}
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return false
	}
	body := tok[1 : len(tok)-1]
	plain := true
	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain || utf8.Valid(body) && !hasEscapeOrControl(body) {
		*s = string(body)
		return true
	}
	var v string
	if json.Unmarshal(tok, &v) != nil {
		return false
	}
	*s = v
	return true
}

func hasEscapeOrControl(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c == '"' || c < 0x20 {
			return true
		}
	}
	return false
}

// decodeAny does what a json.Decoder with UseNumber decoding into an any
// does, for raw that json.Valid accepts: objects become map[string]any (the
// last of duplicate keys wins), arrays []any, numbers json.Number.
func decodeAny(raw []byte) any {
	v, _, _ := decodeAnyAt(raw, skipSpace(raw, 0), true)
	return v
}

// decodeObject does what json.Unmarshal(raw, &m) does for a map[string]any
// m (numbers become float64), raw being valid JSON: ok is false when raw is
// not an object or holds a number out of float64's range; m is nil for null.
func decodeObject(raw []byte) (m map[string]any, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' && raw[i] != 'n' {
		return nil, false
	}
	v, _, ok := decodeAnyAt(raw, i, false)
	if !ok {
		return nil, false
	}
	m, _ = v.(map[string]any)
	return m, true
}

// decodeAnyAt decodes the valid value starting at i and returns it with the
// index just past it; numbers are json.Number when useNumber, else float64
// (false when one does not fit).
func decodeAnyAt(raw []byte, i int, useNumber bool) (any, int, bool) {
	ok := true
	switch raw[i] {
	case '{':
		m := map[string]any{}
		i = skipSpace(raw, i+1)
		if raw[i] == '}' {
			return m, i + 1, true
		}
		for {
			end := skipString(raw, i)
			var key string
			decodeString(raw[i:end], &key)
			i = skipSpace(raw, skipSpace(raw, end)+1) // :
			var v any
			var vok bool
			v, i, vok = decodeAnyAt(raw, i, useNumber)
			m[key], ok = v, ok && vok
			i = skipSpace(raw, i)
			if raw[i] == '}' {
				return m, i + 1, ok
			}
			i = skipSpace(raw, i+1) // ,
		}
	case '[':
		list := []any{}
		i = skipSpace(raw, i+1)
		if raw[i] == ']' {
			return list, i + 1, true
		}
		for {
			var v any
			var vok bool
			v, i, vok = decodeAnyAt(raw, i, useNumber)
			list, ok = append(list, v), ok && vok
			i = skipSpace(raw, i)
			if raw[i] == ']' {
				return list, i + 1, ok
			}
			i = skipSpace(raw, i+1) // ,
		}
	case '"':
		end := skipString(raw, i)
		var s string
		decodeString(raw[i:end], &s)
		return s, end, true
	case 't':
		return true, i + 4, true
	case 'f':
		return false, i + 5, true
	case 'n':
		return nil, i + 4, true
	}
	end := skipValue(raw, i)
	if useNumber {
		return json.Number(raw[i:end]), end, true
	}
	f, err := strconv.ParseFloat(string(raw[i:end]), 64)
	return f, end, err == nil
}
