package sigcheck

import (
	"bytes"
	"testing"

	"github.com/gowebpki/jcs"
)

// canonicalSeeds are edge cases of RFC 8785: number forms, escapes,
// surrogates, key order by UTF-16 code units, duplicates, bad input.
var canonicalSeeds = []string{
	`{"b":1,"a":[true,false,null],"c":{"z":"\u00e9","y":"\ud83d\ude00"}}`,
	`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000001,1e-7,1e21,1e20,-0,0.0,9007199254740993,-1.5e+300]}`,
	`{"esc":"\b\f\n\r\t\"\\\/\u0000\u001f\u007f\u2028","a\u0000":1}`,
	`{"\u20ac":1,"\r":2,"1":3,"\u0080":4,"\ud83d\ude00":5,"\ufb33":6,"ö":7}`,
	`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`,
	`{"lone":"\udc00"}`, `{"high":"\ud800x"}`, `{"high":"\ud800\u0041"}`,
	`[1e400]`, `[-1e400]`, `[01]`, `[1.]`, `[.5]`, `[+1]`, `[0x10]`, `[NaN]`,
	"{\"bad\":\"\xff\"}", "{\"ctl\":\"\x01\"}", "{\"a\":1}  ", " [] ", `{"a":1}x`, `{"a":1,}`, `[1,]`,
	`"top"`, `42`, `true`, `null`, ``, `{`, `{"a"}`, `{"a":tru}`, `[1 2]`,
	"{\"é\":1}", "[\"\xe2\x80\"]", `{"a":{"b":{"c":[[[]]]}}}`,
	// Members in order already, or not, at some depth (sortedNames).
	`{"a":1,"b":{"c":[{"d":1,"e":2},{"e":1,"d":2}]},"c":""}`, `{"":1,"a":{"":[],"b":{}},"b":[{"x":1}]}`,
	`{"a":[1,{"b":2,"a":1}],"b":"}"}`, `{"a\"":1,"a":2}`, `{"a\\":1,"a":2}`, `{"z":{"a":1},"a":{"z":1}}`,
	`{"A":1,"_":2,"a":3,"~":4}`, `{"\u007f":1,"~":2}`, `{"é":1,"z":2}`, `{"a":1,"b":2,"b":3}`,
	"{\n  \"collections\": [],\n  \"entries\": [\n    {\"a\": 1, \"b\": [\"x\", {\"c\": null}]}\n  ],\n  \"host\": {}\n}",
}

// checkCanonical compares canonicalize with gowebpki/jcs on doc: both
// refuse it, or both give the same bytes.
func checkCanonical(t *testing.T, doc []byte) {
	t.Helper()
	want, werr := jcs.Transform(doc)
	orig := bytes.Clone(doc)
	got, gerr := canonicalize(doc)
	if !bytes.Equal(doc, orig) {
		t.Fatalf("canonicalize changed its input %q", orig)
	}
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%q: gowebpki/jcs error %v, canonicalize error %v (gave %q, want %q)", doc, werr, gerr, got, want)
	}
	if werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("%q: canonicalize gave %q, gowebpki/jcs %q", doc, got, want)
	}
}

// TestCanonicalMatchesGowebpki holds canonicalize to gowebpki/jcs on the
// RFC 8785 edge cases and on signed catalogs.
func TestCanonicalMatchesGowebpki(t *testing.T) {
	for _, s := range canonicalSeeds {
		checkCanonical(t, []byte(s))
	}
}

// FuzzCanonical holds canonicalize to gowebpki/jcs on any input.
func FuzzCanonical(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) { checkCanonical(t, doc) })
}

// TestSortedNames: the cheap pass tells members in order from members out
// of order (or names it cannot compare by bytes) in jsontext's compact
// output.
func TestSortedNames(t *testing.T) {
	for s, want := range map[string]bool{
		`{}`: true, `[]`: true, `"a"`: true, `{"":1,"a":{"b":[{"c":1,"d":2}],"c":"}"},"b":[]}`: true,
		`{"a":1,"b":{"d":1,"c":2}}`: false, `{"b":1,"a":2}`: false, `[{"a":1},{"b":1,"a":2}]`: false,
		`{"a":[{"z":1}],"b":1}`: true, `{"a":"x","a":"y"}`: false, `{"é":1}`: false, `{"a\"":1}`: false,
	} {
		if got := sortedNames([]byte(s)); got != want {
			t.Errorf("sortedNames(%s) = %v, want %v", s, got, want)
		}
	}
}
