// Package rawjson splits JSON that is already known to be valid (a document
// json.Valid accepted, or an answer the Meilisearch client decoded into a
// json.RawMessage) into raw members and items, without reflection, maps of
// interfaces or copies. normalize reads catalogs with it, searchapi the
// answers of Meilisearch; both sit on hot paths.
//
// Each function answers what the json.Unmarshal call it replaces would, and
// the slices it returns alias its input (capacity-limited, so an append
// copies). On input that is not valid JSON nothing panics: EachMember and
// EachElement return ErrMalformed when the structure does not hold, the
// others answer false or stop at the end of the input.
//
// It imports nothing of ours.
package rawjson

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// ErrMalformed reports input whose structure is not JSON.
var ErrMalformed = errors.New("rawjson: malformed JSON")

// IsSpace reports JSON insignificant whitespace.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// SkipSpace returns the index of the first non-space byte of b at or after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// SkipString returns the index just past the string token starting at i,
// or len(b) when it is not terminated.
func SkipString(b []byte, i int) int {
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

// SkipValue returns the index just past the value starting at i: len(b)
// when a string, object or array is not terminated, i when there is no
// value at i.
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = SkipString(b, i)
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

// EachMember calls fn with each member of the object b, in order, and
// returns the first error fn returns, or ErrMalformed when b is not an
// object.
func EachMember(b []byte, fn func(key string, val []byte) error) error {
	_, err := Object(b, SkipSpace(b, 0), func(name []byte, at int) (int, error) {
		end := SkipValue(b, at)
		if end == at {
			return at, ErrMalformed
		}
		return end, fn(string(name), b[at:end:end])
	})
	return err
}

// EachElement calls fn with each element of the array b, in order, and
// returns the first error fn returns, or ErrMalformed when b is not an
// array.
func EachElement(b []byte, fn func(val []byte) error) error {
	_, err := Array(b, SkipSpace(b, 0), func(at int) (int, error) {
		end := SkipValue(b, at)
		if end == at {
			return at, ErrMalformed
		}
		return end, fn(b[at:end:end])
	})
	return err
}

// Object walks the object that starts at b[i] member by member, leaving
// each value to fn, so that a caller can read into a value in the same
// pass (EachMember skips each value first). fn gets the member's name,
// decoded (it aliases b when the name has no escapes: do not keep it), and
// where its value starts; it returns where the value ends (SkipValue(b, at)
// to skip it), or an error, which stops the walk and is returned. Object
// returns the index just past the object, or ErrMalformed when b[i] does
// not start an object or its structure does not hold.
func Object(b []byte, i int, fn func(name []byte, at int) (int, error)) (int, error) {
	if i >= len(b) || b[i] != '{' {
		return i, ErrMalformed
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, ErrMalformed
		}
		end := SkipString(b, i)
		name, ok := decodeName(b[i:end])
		if !ok {
			return i, ErrMalformed
		}
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return i, ErrMalformed
		}
		i = SkipSpace(b, i+1)
		end, err := fn(name, i)
		switch {
		case err != nil:
			return end, err
		case end <= i:
			return i, ErrMalformed
		}
		var closed bool
		if i, closed, err = next(b, end, '}'); err != nil || closed {
			return i, err
		}
	}
}

// Array walks the array that starts at b[i] element by element, leaving
// each element to fn as Object leaves values: fn gets where the element
// starts and returns where it ends, or an error. Array returns the index
// just past the array, or ErrMalformed.
func Array(b []byte, i int, fn func(at int) (int, error)) (int, error) {
	if i >= len(b) || b[i] != '[' {
		return i, ErrMalformed
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		end, err := fn(i)
		switch {
		case err != nil:
			return end, err
		case end <= i:
			return i, ErrMalformed
		}
		var closed bool
		if i, closed, err = next(b, end, ']'); err != nil || closed {
			return i, err
		}
	}
}

// next returns, for a member or element ending at end, where the next one
// starts, after its comma, or the index just past the close that ends its
// object or array there (closed).
func next(b []byte, end int, close byte) (i int, closed bool, err error) {
	i = SkipSpace(b, end)
	switch {
	case i >= len(b):
		return i, false, ErrMalformed
	case b[i] == close:
		return i + 1, true, nil
	case b[i] != ',':
		return i, false, ErrMalformed
	}
	return SkipSpace(b, i+1), false, nil
}

// decodeName decodes a member name token: the bytes between its quotes
// when it has no escapes, else a decoded copy.
func decodeName(tok []byte) ([]byte, bool) {
	if len(tok) >= 2 && tok[len(tok)-1] == '"' && plain(tok[1:len(tok)-1]) {
		return tok[1 : len(tok)-1], true
	}
	var s string
	if !DecodeString(tok, &s) {
		return nil, false
	}
	return []byte(s), true
}

// plain reports a string body that decodes to itself: ASCII without
// escapes, quotes or control characters.
func plain(body []byte) bool {
	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Members does what json.Unmarshal(raw, &m) does for a
// map[string]json.RawMessage m, raw being valid JSON: ok is false when raw
// is not an object; m is nil for null.
func Members(raw []byte) (m map[string]json.RawMessage, ok bool) {
	if i := SkipSpace(raw, 0); i < len(raw) && raw[i] == 'n' {
		return nil, true
	}
	m = map[string]json.RawMessage{}
	err := EachMember(raw, func(key string, val []byte) error {
		m[key] = val
		return nil
	})
	if err != nil {
		return nil, false
	}
	return m, true
}

// Items does what json.Unmarshal(raw, &list) does for a []json.RawMessage
// list, raw being valid JSON: ok is false when raw is not an array; list is
// nil for null and empty (not nil) for [].
func Items(raw []byte) (list []json.RawMessage, ok bool) {
	if i := SkipSpace(raw, 0); i < len(raw) && raw[i] == 'n' {
		return nil, true
	}
	list = []json.RawMessage{}
	err := EachElement(raw, func(val []byte) error {
		list = append(list, val)
		return nil
	})
	if err != nil {
		return nil, false
	}
	return list, true
}

// String does what json.Unmarshal(raw, s) does for a string, raw being valid
// JSON: null leaves *s as it is, another non-string fails.
func String(raw []byte, s *string) bool {
	i := SkipSpace(raw, 0)
	if i >= len(raw) {
		return false
	}
	switch raw[i] {
	case 'n':
		return true
	case '"':
		return DecodeString(raw[i:], s)
	}
	return false
}

// DecodeString decodes the string token tok (quotes included, possibly
// followed by whitespace), the common case without escapes directly.
func DecodeString(tok []byte, s *string) bool {
	for len(tok) > 0 && IsSpace(tok[len(tok)-1]) {
		tok = tok[:len(tok)-1]
	}
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return false
	}
	body := tok[1 : len(tok)-1]
	if plain(body) || utf8.Valid(body) && !hasEscapeOrControl(body) {
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
