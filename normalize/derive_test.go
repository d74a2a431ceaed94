package normalize

import (
	"fmt"
	"strings"
	"testing"
)

func TestIdentityDomain(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"did:web:acme.com", "acme.com", true},
		{"did:web:trust.acme.com:agents:x", "trust.acme.com", true},
		{"did:web:acme.com%3A8443", "acme.com", true},
		{"spiffe://acme.com/travel/concierge", "acme.com", true},
		{"https://Agents.Acme.com/id", "agents.acme.com", true},
		{"acme.com", "acme.com", true},
		{"did:key:z6Mk", "", false},
		{"urn:ext", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		got, ok := IdentityDomain(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("IdentityDomain(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDomainsAlign(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"acme.com", "acme.com", true},
		{"www.snowdata.ai", "snowdata.ai", true},
		{"snowdata.ai", "mcp.snowdata.ai", true},
		{"www.snowdata.ai", "mcp.snowdata.ai", true}, // same registrable domain
		{"acme.co.uk", "other.co.uk", false},         // a public suffix is no authority
		{"evil.example", "acme.com", false},
		{"notacme.com", "acme.com", false},
	}
	for _, tc := range tests {
		if got := domainsAlign(tc.a, tc.b); got != tc.want {
			t.Errorf("domainsAlign(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestComplianceValues(t *testing.T) {
	eq(t, "soc2", ComplianceValues([]string{"SOC2-Type2"}), []string{"soc2-type2", "soc2"})
	eq(t, "hipaa", ComplianceValues([]string{"HIPAA-Audit", "hipaa-audit"}), []string{"hipaa-audit", "hipaa"})
	eq(t, "iso", ComplianceValues([]string{"ISO 27001"}), []string{"iso27001"})
	eq(t, "iso spellings", ComplianceValues([]string{"ISO-27001", "ISO27001", "iso_27001"}), []string{"iso27001"})
	eq(t, "iso qualified", ComplianceValues([]string{"ISO-27001-2022"}), []string{"iso27001-2022", "iso27001"})
	eq(t, "pci spaced", ComplianceValues([]string{"PCI DSS"}), []string{"pci-dss", "pci"})
	eq(t, "pci", ComplianceValues([]string{"PCI-DSS-v4"}), []string{"pci-dss-v4", "pci-dss"})
	eq(t, "unknown family kept whole", ComplianceValues([]string{"State-Contractor-License", " "}), []string{"state-contractor-license"})
}

func TestSkillPaths(t *testing.T) {
	eq(t, "paths", skillPaths([]string{"NLP/Translation", "nlp/text-analysis/sentiment", "python", "/ops/"}),
		[]string{"nlp/translation", "nlp", "nlp/text-analysis/sentiment", "nlp/text-analysis", "python", "ops"})
}

func TestNormalizeTags(t *testing.T) {
	eq(t, "tags", NormalizeTags([]string{" Finance", "finance", "", "Machine  Learning", "FINANCE "}), []string{"finance", "machine learning"})
	if NormalizeTags(nil) != nil || NormalizeTags([]string{" "}) != nil {
		t.Error("no tags should be nil")
	}
}

func TestParseIdentifier(t *testing.T) {
	id, _, ok := ParseIdentifier("urn:AIR:Acme.COM:finance:trading:bot")
	if !ok || id.NID != "air" || id.Publisher != "acme.com" || len(id.Segments) != 3 {
		t.Fatalf("got %+v %v", id, ok)
	}
	for _, bad := range []string{"urn:ai:acme.com:", "urn:ai:-acme.com:x", "urn:ai:acme.123:x", "urn:ai:acme.com:x#frag", "urn:ai:acme.com:x%zz", "urn:ai:localhost:x", "uri:ai:acme.com:x"} {
		if _, reason, ok := ParseIdentifier(bad); ok || reason == "" {
			t.Errorf("ParseIdentifier(%q) accepted", bad)
		}
	}
	eq(t, "canonical", CanonicalIdentifier("URN:AIR:Acme.COM:x:Y"), "urn:ai:acme.com:x:Y")
}

// TestLargeListsStayBounded feeds lists far longer than maxItems: the record
// keeps a bounded number of derived values.
func TestLargeListsStayBounded(t *testing.T) {
	var atts, skills, tools []string
	for i := range 5000 {
		atts = append(atts, fmt.Sprintf(`{"type":"T-%d"}`, i))
		skills = append(skills, fmt.Sprintf(`{"name":"s%d","description":"d%d","examples":["e%d"]}`, i, i, i))
		tools = append(tools, fmt.Sprintf(`{"name":"t%d","description":"d%d"}`, i, i))
	}
	entry := `{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"application/a2a-agent-card+json","data":{"skills":[` +
		strings.Join(skills, ",") + `]},"trustManifest":{"identity":"did:web:acme.com","attestations":[` + strings.Join(atts, ",") + `]}}`
	r := catalogRecord(t, entry)
	if len(r.Compliance) > 2*maxItems || len(r.SkillNames) > maxItems || len(r.Examples) > 2*maxItems {
		t.Errorf("compliance %d, skill names %d, examples %d", len(r.Compliance), len(r.SkillNames), len(r.Examples))
	}
	mcp := catalogRecord(t, `{"identifier":"urn:ai:acme.com:m","displayName":"M","type":"application/mcp-server+json","data":{"tools":[`+strings.Join(tools, ",")+`]}}`)
	if len(mcp.SkillNames) != maxItems {
		t.Errorf("mcp tools %d", len(mcp.SkillNames))
	}
}
