package normalize

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestXuD0Metadata: the Efficient Agent Discovery Profile's own examples
// (§4.9, the metadata example, and §13.1, the minimal D0 metadata) are
// accepted as D0 metadata: a catalog entry of type
// application/agent-metadata+json carrying them, inline or fetched, maps
// without problems to a record with the name, description and at least one
// binding D0 requires.
func TestXuD0Metadata(t *testing.T) {
	tests := []struct {
		file, name, desc, binding string
		tags                      []string
	}{
		{"4.9-metadata-example.json", "HR Core Automator", "Optimizes HR workflows and onboarding checks.",
			"https request-response https://agents.example.net/hr-core/invoke ",
			[]string{"hr", "workflow", "onboarding", "hcm", "api-automation", "employee-record", "validation"}},
		{"13.1-minimal-d0.json", "Minimal Agent", "Answers short factual questions.", "https  https://example.net/agent/invoke ", nil},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "xu", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			check := func(t *testing.T, r Record, name string) {
				eq(t, "displayName", r.DisplayName, name)
				eq(t, "description", r.Description, tc.desc)
				eq(t, "bindings", bindingKeys(r.Bindings), []string{tc.binding})
				eq(t, "tags", r.Tags, tc.tags)
				eq(t, "protocols", r.Protocols, []string{"https"})
			}
			inline := Catalog(doc(`{"identifier":"urn:ai:example.net:agent:x","displayName":"From Catalog","type":"application/agent-metadata+json","data":`+string(body)+`}`), Options{})
			if len(inline.Records) != 1 || len(inline.Problems) != 0 {
				t.Fatalf("inline: %d records, problems %+v", len(inline.Records), inline.Problems)
			}
			check(t, inline.Records[0], "From Catalog") // the catalog's fields win
			fetched := catalogRecord(t, `{"identifier":"urn:ai:example.net:agent:x","displayName":"x","type":"application/agent-metadata+json","url":"https://example.net/x.json"}`)
			fetched.DisplayName = "" // let the artifact name it
			if probs := Enrich(&fetched, "application/json", body); len(probs) != 0 {
				t.Fatalf("Enrich problems: %+v", probs)
			}
			check(t, fetched, tc.name)
		})
	}
}

// TestDocumentFilterFields: the languages a record supports and its
// artifact's provider become filterable document fields.
func TestDocumentFilterFields(t *testing.T) {
	rec := Record{Identifier: "urn:ai:example.com:agent:t", Publisher: "example.com", Provider: "ExampleAI",
		Constraints: map[string]any{"supported_languages": []any{"EN", "fr", "en", 3}}}
	d := NewDocument(rec, time.Unix(0, 0))
	eq(t, "languages", d.Languages, []string{"en", "fr"})
	eq(t, "publisherNames", d.PublisherNames, []string{"example.com", "exampleai"})
	rec.Constraints = map[string]any{"supported_languages": []string{"zh"}}
	eq(t, "languages from []string", NewDocument(rec, time.Unix(0, 0)).Languages, []string{"zh"})
}
