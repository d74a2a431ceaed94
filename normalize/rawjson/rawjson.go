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
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return ErrMalformed
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return ErrMalformed
		}
		end := SkipString(b, i)
		var key string
		if !DecodeString(b[i:end], &key) {
			return ErrMalformed
		}
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return ErrMalformed
		}
		i = SkipSpace(b, i+1)
		end = SkipValue(b, i)
		if end == i {
			return ErrMalformed
		}
		if err := fn(key, b[i:end:end]); err != nil {
			return err
		}
		var err error
		if i, err = after(b, end, '}'); err != nil || i < 0 {
			return err
		}
	}
}

// EachElement calls fn with each element of the array b, in order, and
// returns the first error fn returns, or ErrMalformed when b is not an
// array.
func EachElement(b []byte, fn func(val []byte) error) error {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return ErrMalformed
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for {
		end := SkipValue(b, i)
		if end == i {
			return ErrMalformed
		}
		if err := fn(b[i:end:end]); err != nil {
			return err
		}
		var err error
		if i, err = after(b, end, ']'); err != nil || i < 0 {
			return err
		}
	}
}

// after returns where the member or element after a value ending at end
// starts, or -1 when close ends the object or array there instead.
func after(b []byte, end int, close byte) (int, error) {
	i := SkipSpace(b, end)
	switch {
	case i >= len(b):
		return 0, ErrMalformed
	case b[i] == close:
		return -1, nil
	case b[i] != ',':
		return 0, ErrMalformed
	}
	return SkipSpace(b, i+1), nil
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
