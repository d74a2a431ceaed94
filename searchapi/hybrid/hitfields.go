package hybrid

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/agentfinder/agentfinder/normalize/rawjson"
)

// The fields of a hit are read on every search (each sub-query's
// identifiers and scores, the pool's texts): these read them without
// reflection (rawjson, whose strings without escapes are their bytes), with
// the results of encoding/json.

// String reads raw, a JSON string; ok is false for anything else.
func String(raw json.RawMessage) (s string, ok bool) {
	return s, rawjson.String(raw, &s)
}

// errNotString stops the walk of an array holding something else.
var errNotString = errors.New("not a string")

// Strings reads raw, a JSON string or array of strings; anything else is
// nil.
func Strings(raw json.RawMessage) []string {
	if s, ok := String(raw); ok && len(raw) > 0 && raw[0] == '"' {
		return []string{s}
	}
	out := []string{}
	end, err := rawjson.Array(raw, rawjson.SkipSpace(raw, 0), func(at int) (int, error) {
		next := rawjson.SkipValue(raw, at)
		var s string
		if next == at || !rawjson.String(raw[at:next], &s) {
			return at, errNotString
		}
		out = append(out, s)
		return next, nil
	})
	if err != nil || rawjson.SkipSpace(raw, end) != len(raw) {
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
