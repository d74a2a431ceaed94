package normalize

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// canonicalCases are documents whose canonical form is easy to get wrong:
// escapes, duplicate keys, odd UTF-8, trailing data, numbers as written.
var canonicalCases = []string{
	``, ` `, `null`, `true`, `false`, `0`, `-0.5e+10`, `1E3`, `01`, `1.`, `-`, `"x"`, `"`, `tru`,
	`{}`, `[]`, `{ }`, `[ ]`, `{"a":1}`, ` {"b":1,"a":2} `, `{"a":1,"a":2}`, `{"b":1,"a":2,"b":3,"a":[4]}`,
	`{"a":1}{"b":2}`, `{"a":1} x`, `[1,2] `, `123abc`, `"a"b`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `{"a":1 "b":2}`,
	`{"\u0061":1,"a":2}`, `{"a\nb":"c\td","\u00e9":"\u00e9","é":1}`, `{"x":"\/\"\\\b\f\n\r\t\u0001\u007f"}`,
	`{"x":"<>&\u2028\u2029"}`, "{\"x\":\"\u2028\"}", `{"x":"\ud800"}`, `{"x":"\ud83d\ude00"}`, "{\"x\":\"\xff\"}",
	"{\"\xff\":1,\"\xfe\":2}", "{\"x\":\"a\x01b\"}", `{"x":"\q"}`, `{"Z":1,"a":2,"_":3,"A":4}`,
	`{"n":[1.50,2e5,-0,0.0],"o":{"z":{"y":{"x":null}}}}`, "\xef\xbb\xbf{}", "\t{\n\"a\" :\r[ true , false ]\n}\n",
	strings.Repeat("[", 600) + strings.Repeat("]", 600), strings.Repeat(`{"a":`, 600) + "1" + strings.Repeat("}", 600),
}

// TestCanonicalizerMatchesReference checks that the one-pass canonicalizer
// writes exactly what canonicalJSON (decode into Go values, re-encode) does,
// on hard cases, every JSON file in testdata and fixtures/realworld, and
// every entry of those files: stored content hashes must not change.
func TestCanonicalizerMatchesReference(t *testing.T) {
	docs := map[string][]byte{}
	for i, s := range canonicalCases {
		docs["case "+string(rune('A'+i%26))+strings.Repeat("'", i/26)] = []byte(s)
	}
	for _, dir := range []string{"testdata", repoRealworld} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			docs[p] = b
			var top struct{ Entries []json.RawMessage }
			if json.Unmarshal(b, &top) == nil {
				for i, e := range top.Entries {
					docs[p+"#"+string(rune('0'+i%10))+strings.Repeat("'", i/10)] = e
				}
			}
			return nil
		})
	}
	if len(docs) < 100 {
		t.Fatalf("only %d documents to compare", len(docs))
	}
	c := new(canonicalizer)
	for name, doc := range docs {
		want := string(canonicalJSON(doc))
		if got := string(c.canonical(doc)); got != want {
			t.Errorf("%s: canonical form\n got %q\nwant %q", name, got, want)
		}
	}
}

// FuzzCanonicalizer compares the canonicalizer with canonicalJSON on
// arbitrary input.
func FuzzCanonicalizer(f *testing.F) {
	for _, s := range canonicalCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		c := new(canonicalizer)
		if got, want := c.canonical(doc), canonicalJSON(doc); !bytes.Equal(got, want) {
			t.Errorf("canonical form of %q\n got %q\nwant %q", doc, got, want)
		}
	})
}

// TestContentHashKnownValue pins one hash: a changed value would make every
// stored record look changed to ingest.
func TestContentHashKnownValue(t *testing.T) {
	a := ContentHash([]byte(`{"b": [1, 2.50], "a": "x\u00e9"}`))
	b := ContentHash([]byte(`{"a":"xé","b":[1,2.50]}`))
	if a != b {
		t.Errorf("key order or whitespace changed the hash: %s != %s", a, b)
	}
	if want := sha256Hex(`{"a":"xé","b":[1,2.50]}`); a != want {
		t.Errorf("ContentHash = %s, want sha256 of the canonical form %s", a, want)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
