package rawjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

var seeds = []string{
	`{}`, `[]`, `null`, `"x"`, `{"a":1,"b":[true,false,null],"c":{"d":"e\"f"}}`,
	` { "k\u0041" : "v" , "a":"b" } `, `["東京", "a\\b", {"x":[]}]`, `{"dup":1,"dup":2}`,
	`{"s":"\ud800"}`, `1.5e3`, `{"a":}`, `{"a" 1}`, `[1,`, `{"a":1`, `{"a":1}}`, `[1 2]`,
}

// TestEachMalformed checks that structure errors are reported, not skipped.
func TestEachMalformed(t *testing.T) {
	for _, bad := range []string{``, `[]`, `{"a":}`, `{"a" 1}`, `{"a":1`, `{"a":1 "b":2}`, `{a:1}`, `{"a`} {
		if err := EachMember([]byte(bad), func(string, []byte) error { return nil }); !errors.Is(err, ErrMalformed) {
			t.Errorf("EachMember(%q) = %v, want ErrMalformed", bad, err)
		}
	}
	for _, bad := range []string{``, `{}`, `[1,`, `[1 2]`, `[,]`, `["a]`} {
		if err := EachElement([]byte(bad), func([]byte) error { return nil }); !errors.Is(err, ErrMalformed) {
			t.Errorf("EachElement(%q) = %v, want ErrMalformed", bad, err)
		}
	}
	stop := errors.New("stop")
	if err := EachElement([]byte(`[1,2]`), func([]byte) error { return stop }); err != stop {
		t.Errorf("fn's error not returned: %v", err)
	}
}

// FuzzRawJSON checks Members, Items and String against the encoding/json
// calls they replace on valid JSON, and that no input makes anything panic.
func FuzzRawJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		_ = EachMember(b, func(_ string, v []byte) error { SkipValue(v, 0); return nil })
		_ = EachElement(b, func([]byte) error { return nil })
		if !json.Valid(b) {
			Members(b)
			Items(b)
			String(b, new(string))
			return
		}
		var wm map[string]json.RawMessage
		werr := json.Unmarshal(b, &wm)
		if gm, ok := Members(b); ok != (werr == nil) || !reflect.DeepEqual(gm, wm) {
			t.Fatalf("Members(%q) = %v, %v; want %v, %v", s, gm, ok, wm, werr)
		}
		var wl []json.RawMessage
		werr = json.Unmarshal(b, &wl)
		if gl, ok := Items(b); ok != (werr == nil) || !reflect.DeepEqual(gl, wl) {
			t.Fatalf("Items(%q) = %v, %v; want %v, %v", s, gl, ok, wl, werr)
		}
		ws, gs := "keep", "keep"
		werr = json.Unmarshal(b, &ws)
		if ok := String(b, &gs); ok != (werr == nil) || ok && gs != ws {
			t.Fatalf("String(%q) = %q, %v; want %q, %v", s, gs, ok, ws, werr)
		}
		// Object and Array end where SkipValue does, on valid JSON.
		skip := func(at int) (int, error) { return SkipValue(b, at), nil }
		if i := SkipSpace(b, 0); b[i] == '{' || b[i] == '[' {
			var end int
			var err error
			if b[i] == '{' {
				end, err = Object(b, i, func(_ []byte, at int) (int, error) { return skip(at) })
			} else {
				end, err = Array(b, i, skip)
			}
			if err != nil || end != SkipValue(b, i) {
				t.Fatalf("walking %q: end %d, %v; want %d", s, end, err, SkipValue(b, i))
			}
		}
		if err := EachMember(b, func(k string, v []byte) error {
			if !json.Valid(v) {
				t.Fatalf("EachMember(%q): member %q value %q not valid", s, k, v)
			}
			return nil
		}); (err == nil) != (wm != nil) {
			t.Fatalf("EachMember(%q) = %v, want an error only for non-objects", s, err)
		}
	})
}
