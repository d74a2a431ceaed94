package normalize

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary documents to Catalog (and each record's inline
// data, and the document itself, to Enrich) and checks it never panics and
// keeps its promises: records have valid identifiers and marshal, problems
// are located and classified. Seeds: every JSON file in testdata and, when
// present, the repository's real-world copies (fixtures/realworld). Crashers found are kept in testdata/fuzz.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"testdata", repoRealworld} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
				return nil
			}
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
			return nil
		})
	}
	f.Add([]byte(`{"entries":[{"identifier":"urn:ai:a.b:c","displayName":"x","type":"application/ai-catalog+json","data":{"entries":[{"identifier":"urn:ai:a.b:c","displayName":"x","type":"application/ai-catalog","data":{"entries":[]}}]}}]}`))
	f.Add([]byte("\xef\xbb\xbf{\"entries\":null}"))
	f.Fuzz(func(t *testing.T, body []byte) {
		res := Catalog(body, Options{Origin: "https://acme.com/.well-known/ai-catalog.json", MaxDepth: 3})
		for _, p := range res.Problems {
			if p.Path == "" && p.Code != CodeURLAndData && p.Code != CodeNoContent {
				t.Errorf("problem without path: %+v", p)
			}
			if p.Severity != SeverityError && p.Severity != SeverityWarning || p.Code == "" || p.Message == "" {
				t.Errorf("malformed problem: %+v", p)
			}
		}
		if len(res.Records) > 0 && res.Manifest == nil {
			t.Error("records without a manifest")
		}
		for i := range res.Records {
			r := &res.Records[i]
			if _, _, ok := ParseIdentifier(r.Identifier); !ok {
				t.Errorf("record with invalid identifier %q", r.Identifier)
			}
			if (r.URL == "") == (r.Data == nil) {
				t.Errorf("record %q has url %q and data %d bytes", r.Identifier, r.URL, len(r.Data))
			}
			Enrich(r, "application/json", body)
			if r.Data != nil {
				Enrich(r, "", r.Data)
			}
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("record %q does not marshal: %v", r.Identifier, err)
			}
		}
		for _, l := range res.Links {
			if _, ok := checkURL(l.URL); !ok || len(l.Path) > 3+1 {
				t.Errorf("bad link %+v", l)
			}
		}
		for _, typ := range []string{TypeA2A, TypeMCP, TypeADP, TypeHAIDIP, TypeXu} {
			r := Record{Identifier: "urn:ai:acme.com:x", Type: typ, URL: "https://acme.com/x"}
			Enrich(&r, "", body)
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("%s: enriched record does not marshal: %v", typ, err)
			}
		}
	})
}
