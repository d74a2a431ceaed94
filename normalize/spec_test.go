package normalize

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSpecExamples parses the manifests of Agent Finder v0.4.2 §4.1 and §4.4
// (testdata/spec, copied from the specification text).
func TestSpecExamples(t *testing.T) {
	origin := "https://acme.com/.well-known/ai-catalog.json"
	read := func(name string) Result {
		t.Helper()
		body, err := os.ReadFile(filepath.Join("testdata", "spec", name))
		if err != nil {
			t.Fatal(err)
		}
		return Catalog(body, Options{Origin: origin})
	}
	t.Run("4.1 manifest", func(t *testing.T) {
		res := read("4.1-manifest.json")
		eq(t, "problems", res.Problems, []Problem(nil))
		eq(t, "records", recordIDs(res.Records), []string{
			"urn:ai:acme.com:agent:assistant", "urn:ai:acme.com:server:weather", "urn:ai:acme.com:plugin:finance-suite",
			"urn:ai:acme.com:finance:a2a", "urn:ai:acme.com:market:2026", "urn:ai:acme.com:registry:global"})
		eq(t, "links", len(res.Links), 1)
		eq(t, "collection", res.Links[0].URL, "https://acme.com/catalogs/engineering.json")
		eq(t, "artifacts", len(res.Artifacts), 3)
		reg := RegistryRecords(res.Records)
		if len(reg) != 1 || !slices.Contains(reg[0].Compliance, "soc2") || !slices.Contains(reg[0].Compliance, "soc2-type2") {
			t.Errorf("registry: %+v", reg)
		}
		for _, r := range res.Records {
			if !r.PublisherVerified || r.Publisher != "acme.com" {
				t.Errorf("%s: publisher %q verified %v", r.Identifier, r.Publisher, r.PublisherVerified)
			}
		}
	})
	t.Run("4.4 enterprise", func(t *testing.T) {
		res := read("4.4-enterprise-trust.json")
		eq(t, "problems", res.Problems, []Problem(nil))
		eq(t, "compliance", res.Records[0].Compliance, []string{"spiffe-x509", "soc2-type2", "soc2", "gdpr"})
	})
	t.Run("4.4 solo developer paths", func(t *testing.T) {
		// hf.co and github.com are not acme.com: warnings only.
		for _, name := range []string{"4.4-skill-github.json", "4.4-github-pages.json", "4.4-solo-mcp-inline.json"} {
			res := read(name)
			if len(res.Records) == 0 {
				t.Errorf("%s: no records: %+v", name, res.Problems)
			}
			for _, p := range res.Problems {
				if p.Severity == SeverityError {
					t.Errorf("%s: %+v", name, p)
				}
			}
		}
	})
}
