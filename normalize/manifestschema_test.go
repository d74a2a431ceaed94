package normalize

import (
	"slices"
	"testing"
)

// TestSchemaProblems: a value of the wrong type is named by its path; a
// document of the right types has none.
func TestSchemaProblems(t *testing.T) {
	good := `{"specVersion": "1.0", "host": {"displayName": "Acme"}, "entries": [
		{"identifier": "urn:ai:acme.test:agent:a", "displayName": "A", "type": "application/a2a-agent-card+json",
		 "url": "https://acme.test/a.json", "tags": ["x"], "metadata": {"owner": "ops", "tier": 2, "public": true}}]}`
	if ps := SchemaProblems([]byte(good)); len(ps) != 0 {
		t.Errorf("a good manifest: %v", ps)
	}
	bad := `{"specVersion": 1, "entries": [
		{"identifier": "urn:ai:acme.test:agent:a", "displayName": "A", "type": "t", "url": "https://acme.test/a.json"},
		{"identifier": "urn:ai:acme.test:agent:b", "displayName": "B", "type": "t", "url": "https://acme.test/b.json",
		 "tags": "one", "metadata": {"authentication": {"mode": "off"}}}]}`
	var paths []string
	for _, p := range SchemaProblems([]byte(bad)) {
		if p.Code != CodeSchemaViolation || p.Severity != SeverityWarning || p.Message == "" {
			t.Errorf("problem %+v", p)
		}
		paths = append(paths, p.Path)
	}
	slices.Sort(paths)
	if want := []string{"entries[1].metadata.authentication", "entries[1].tags", "specVersion"}; !slices.Equal(paths, want) {
		t.Errorf("paths %v, want %v", paths, want)
	}
	if ps := SchemaProblems([]byte("{not json")); ps != nil {
		t.Errorf("not JSON: %v (Catalog reports it)", ps)
	}
}
