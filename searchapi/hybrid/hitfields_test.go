package hybrid

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestHitFieldsAsEncodingJSON reads every shape a hit's field can take with
// String, Strings and Number and compares each with what encoding/json
// reads from it: the direct paths must never answer differently.
func TestHitFieldsAsEncodingJSON(t *testing.T) {
	values := []string{
		`"plain"`, `""`, `"with \"quote\""`, `"tab\tnew\nline"`, `"\u00e9t\u00e9"`, `"été 日本"`, "\"bad \xff utf8\"",
		`"back\\slash"`, `"\ud83d\ude00"`, `[]`, ` [ ] `, `["a","b"]`, `[ "a" , "b" ]`, "[\n\t\"a\",\r\n\"b\"\n]",
		`["a,b","c]"]`, `["esc\"aped","x"]`, `["é","日本"]`, "[\"bad \xff\"]", `["a",1]`, `["a",null]`, `[["a"]]`,
		`["a",]`, `["a" "b"]`, `[,"a"]`, `["a"]x`, `["a"`, `"open`, `null`, `true`, `12`, `-0.5e3`, `1E400`, `0.8123456789012345`,
		`{"a":"b"}`, ``, `"`, `[`,
	}
	for _, v := range values {
		raw := json.RawMessage(v)
		var wantS string
		wantOK := json.Unmarshal(raw, &wantS) == nil
		if got, ok := String(raw); ok != wantOK || got != wantS {
			t.Errorf("String(%q) = %q, %v; encoding/json %q, %v", v, got, ok, wantS, wantOK)
		}
		if got, want := Strings(raw), referenceStrings(raw); !reflect.DeepEqual(got, want) {
			t.Errorf("Strings(%q) = %#v; encoding/json %#v", v, got, want)
		}
		var wantF float64
		wantOK = json.Unmarshal(raw, &wantF) == nil
		if got, ok := Number(raw); ok != wantOK || (ok && got != wantF) {
			t.Errorf("Number(%q) = %v, %v; encoding/json %v, %v", v, got, ok, wantF, wantOK)
		}
	}
}

// referenceStrings is Strings written with encoding/json alone.
func referenceStrings(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		return []string{s}
	}
	var out []string
	if json.Unmarshal(raw, &out) != nil {
		return nil
	}
	return out
}
