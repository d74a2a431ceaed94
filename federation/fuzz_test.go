package federation

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzParseAnswer feeds arbitrary upstream bodies to the strict parser: it
// must never panic, and every hit it lets through must be a well-formed
// entry carrying none of the fields only this registry may set.
func FuzzParseAnswer(f *testing.F) {
	for _, n := range []string{"search-root-auto.json", "search-nested-referrals.json", "search-empty-referrals.json", "error-422-v042-request-shape.json"} {
		if b, err := os.ReadFile(filepath.Join(capturesDir, n)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"results":[{"identifier":"urn:ai:a.example:x","displayName":"x","type":"t","url":"https://a.example/x","score":1e400}]}`))
	f.Add([]byte(`{"results":null}`))
	f.Add([]byte(`[]`))
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := parseAnswer(body, "https://up.example/search", false, now)
		if err != nil {
			return
		}
		for _, h := range a.hits {
			if !wellFormed(h.Entry) || h.Identifier == "" || h.Source != "https://up.example/search" {
				t.Fatalf("invalid hit let through: %+v", h)
			}
			for _, k := range reservedFields {
				if _, ok := h.Entry[k]; ok {
					t.Fatalf("reserved field %s relayed from an untrusted upstream", k)
				}
			}
		}
		for _, r := range a.registries {
			if _, err := SearchEndpoint(r.Endpoint); err != nil {
				t.Fatalf("registry with a bad endpoint: %+v", r)
			}
		}
	})
}
