package normalize

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/normalize/rawjson"
)

// TestRawHelpersMatchEncodingJSON checks the helpers that split validated
// JSON against the encoding/json calls they replace, on every JSON file in
// testdata and fixtures/realworld, each of their members and hard cases.
func TestRawHelpersMatchEncodingJSON(t *testing.T) {
	var docs [][]byte
	for _, s := range canonicalCases {
		docs = append(docs, []byte(s))
	}
	docs = append(docs, []byte(`{"big":1e400,"ok":1}`), []byte(`{"a":[1e-400,-0,2.5E3]}`), []byte(`{"a":{"b":[-1e309]}}`))
	for _, dir := range []string{"testdata", repoRealworld} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
				if b, err := os.ReadFile(p); err == nil {
					docs = append(docs, b)
				}
			}
			return nil
		})
	}
	// Add every member and item one level down, where most calls happen.
	for _, doc := range docs[:len(docs):len(docs)] {
		if !json.Valid(doc) {
			continue
		}
		m, _ := rawjson.Members(doc)
		for _, v := range m {
			docs = append(docs, v)
		}
		l, _ := rawjson.Items(doc)
		for _, v := range l {
			docs = append(docs, v)
		}
	}
	checked := 0
	for _, doc := range docs {
		if !json.Valid(doc) {
			continue
		}
		checked++
		d := json.NewDecoder(bytes.NewReader(doc))
		d.UseNumber()
		var want any
		if err := d.Decode(&want); err != nil {
			t.Fatalf("%.60q: %v", doc, err)
		}
		if got := decodeAny(doc); !reflect.DeepEqual(got, want) {
			t.Errorf("decodeAny(%.60q) = %v, want %v", doc, got, want)
		}

		var wa map[string]any
		werr := json.Unmarshal(doc, &wa)
		if ga, ok := decodeObject(doc); ok != (werr == nil) || ok && !reflect.DeepEqual(ga, wa) {
			t.Errorf("decodeObject(%.60q) = %v, %v; want %v, %v", doc, ga, ok, wa, werr)
		}

		var wm map[string]json.RawMessage
		werr = json.Unmarshal(doc, &wm)
		gm, ok := rawjson.Members(doc)
		if ok != (werr == nil) || !reflect.DeepEqual(gm, wm) {
			t.Errorf("rawjson.Members(%.60q) = %v, %v; want %v, %v", doc, gm, ok, wm, werr)
		}
		var wl []json.RawMessage
		werr = json.Unmarshal(doc, &wl)
		gl, ok := rawjson.Items(doc)
		if ok != (werr == nil) || !reflect.DeepEqual(gl, wl) {
			t.Errorf("rawjson.Items(%.60q) = %v, %v; want %v, %v", doc, gl, ok, wl, werr)
		}
		ws, gs := "keep", "keep"
		werr = json.Unmarshal(doc, &ws)
		if ok := rawjson.String(doc, &gs); ok != (werr == nil) || ok && gs != ws {
			t.Errorf("rawjson.String(%.60q) = %q, %v; want %q, %v", doc, gs, ok, ws, werr)
		}
	}
	if checked < 200 {
		t.Errorf("only %d valid documents checked", checked)
	}
}
