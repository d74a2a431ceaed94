package normalize

import (
	"encoding/json"
	"strconv"

	"github.com/agentfinder/agentfinder/normalize/rawjson"
)

// decodeAny and decodeObject decode JSON that json.Valid accepted into
// interfaces without its second validation pass; normalize/rawjson splits
// such JSON into raw members.

// decodeAny does what a json.Decoder with UseNumber decoding into an any
// does, for raw that json.Valid accepts: objects become map[string]any (the
// last of duplicate keys wins), arrays []any, numbers json.Number.
func decodeAny(raw []byte) any {
	v, _, _ := decodeAnyAt(raw, rawjson.SkipSpace(raw, 0), true)
	return v
}

// decodeObject does what json.Unmarshal(raw, &m) does for a map[string]any
// m (numbers become float64), raw being valid JSON: ok is false when raw is
// not an object or holds a number out of float64's range; m is nil for null.
func decodeObject(raw []byte) (m map[string]any, ok bool) {
	i := rawjson.SkipSpace(raw, 0)
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
		i = rawjson.SkipSpace(raw, i+1)
		if raw[i] == '}' {
			return m, i + 1, true
		}
		for {
			end := rawjson.SkipString(raw, i)
			var key string
			rawjson.DecodeString(raw[i:end], &key)
			i = rawjson.SkipSpace(raw, rawjson.SkipSpace(raw, end)+1) // :
			var v any
			var vok bool
			v, i, vok = decodeAnyAt(raw, i, useNumber)
			m[key], ok = v, ok && vok
			i = rawjson.SkipSpace(raw, i)
			if raw[i] == '}' {
				return m, i + 1, ok
			}
			i = rawjson.SkipSpace(raw, i+1) // ,
		}
	case '[':
		list := []any{}
		i = rawjson.SkipSpace(raw, i+1)
		if raw[i] == ']' {
			return list, i + 1, true
		}
		for {
			var v any
			var vok bool
			v, i, vok = decodeAnyAt(raw, i, useNumber)
			list, ok = append(list, v), ok && vok
			i = rawjson.SkipSpace(raw, i)
			if raw[i] == ']' {
				return list, i + 1, ok
			}
			i = rawjson.SkipSpace(raw, i+1) // ,
		}
	case '"':
		end := rawjson.SkipString(raw, i)
		var s string
		rawjson.DecodeString(raw[i:end], &s)
		return s, end, true
	case 't':
		return true, i + 4, true
	case 'f':
		return false, i + 5, true
	case 'n':
		return nil, i + 4, true
	}
	end := rawjson.SkipValue(raw, i)
	if useNumber {
		return json.Number(raw[i:end]), end, true
	}
	f, err := strconv.ParseFloat(string(raw[i:end]), 64)
	return f, end, err == nil
}
