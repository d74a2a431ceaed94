package normalize

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// catalogRecord returns the one record of a manifest listing one entry.
func catalogRecord(t *testing.T, entry string) Record {
	t.Helper()
	res := Catalog(doc(entry), Options{})
	if len(res.Records) != 1 {
		t.Fatalf("records = %d, problems: %+v", len(res.Records), res.Problems)
	}
	return res.Records[0]
}

func bindingKeys(bs []Binding) []string {
	var out []string
	for _, b := range bs {
		out = append(out, fmt.Sprintf("%s %s %s %s", b.Protocol, b.Transport, b.URL, b.Package))
	}
	return out
}

func TestEnrich(t *testing.T) {
	tests := []struct {
		file, typ, contentType string
		check                  func(t *testing.T, r Record)
	}{
		{file: "a2a-v03.json", typ: "application/a2a-agent-card+json", contentType: "application/json", check: func(t *testing.T, r Record) {
			eq(t, "skillNames", r.SkillNames, []string{"Flight Search", "Hotel Booking"})
			eq(t, "examples", r.Examples, []string{"Finds flights between two airports.", "find a flight from SFO to Tokyo next Friday", "Books hotel rooms.", "book a hotel near Shibuya for three nights"})
			eq(t, "tags", r.Tags, []string{"catalog-tag", "travel", "flights", "hotels"})
			eq(t, "bindings", bindingKeys(r.Bindings), []string{"a2a JSONRPC https://api.acme.com/a2a/travel ", "a2a GRPC https://grpc.acme.com/travel "})
			eq(t, "provider", r.Provider, "Acme Corp")
			eq(t, "variants", r.Variants, []string{"a2a-v0.3"})
			eq(t, "displayName (catalog wins)", r.DisplayName, "From Catalog")
			eq(t, "description (filled)", r.Description, "Plans trips: flights, hotels and local transport.")
			eq(t, "protocols", r.Protocols, []string{"a2a"})
		}},
		{file: "a2a-v10.json", typ: "application/a2a-agent-card+json", check: func(t *testing.T, r Record) {
			eq(t, "bindings", bindingKeys(r.Bindings), []string{"a2a JSONRPC https://agents.example.com/supplier/a2a/v1 ", "a2a HTTP+JSON https://agents.example.com/supplier/rest/v1 "})
			eq(t, "variants", r.Variants, []string{"a2a-v1.0"})
			eq(t, "skillNames", r.SkillNames, []string{"Compare suppliers"})
			eq(t, "provider", r.Provider, "Example Procurement")
		}},
		{file: "a2a-v10-secured.json", typ: "application/a2a-agent-card+json", check: func(t *testing.T, r Record) {
			eq(t, "bindings", bindingKeys(r.Bindings), []string{"a2a JSONRPC https://agents.example.org/claims/a2a ", "a2a GRPC https://agents.example.org/claims/grpc "})
			eq(t, "variants", r.Variants, []string{"a2a-v1.0", "a2a-signed"})
			eq(t, "auth", r.Auth, []string{"bearer", "oidc", "api-key"})
			eq(t, "skillNames", r.SkillNames, []string{"Triage a claim", "Draft first reply"})
			eq(t, "examples", r.Examples, []string{"Scores a claim's urgency from its text and attachments.", "how urgent is claim 4411 with water damage in the kitchen",
				"Drafts the first letter to the claimant.", "draft a reply acknowledging claim 4411"})
			eq(t, "tags", r.Tags, []string{"catalog-tag", "insurance/claims", "triage", "writing"})
			eq(t, "version", r.Version, "2.3.0")
		}},
		{file: "mcp-server.json", typ: "application/mcp-server+json", check: func(t *testing.T, r Record) {
			eq(t, "bindings", bindingKeys(r.Bindings), []string{
				"mcp streamable-http https://mcp.acme.com/weather ",
				"mcp sse https://mcp.acme.com/weather/sse ",
				"mcp stdio  npm/@acme/weather-mcp@1.4.2",
				"mcp streamable-http http://localhost:8080/mcp oci/ghcr.io/acme/weather-mcp@1.4.2",
			})
			eq(t, "skillNames", r.SkillNames, []string{"get_forecast", "get_wind"})
			eq(t, "examples", r.Examples, []string{"Get the 5-day forecast for a city.", "Current wind speed and direction."})
			eq(t, "version", r.Version, "1.4.2")
		}},
		{file: "mcp-server-card.json", typ: "application/mcp-server-card+json", check: func(t *testing.T, r Record) {
			eq(t, "bindings", bindingKeys(r.Bindings), []string{"mcp streamable-http https://mcp.snowdata.ai "})
			eq(t, "skillNames", r.SkillNames, []string{"get_snow_report", "find_best_powder"})
			eq(t, "variants", r.Variants, []string{"mcp-server-card+json", "mcp-server-card"})
		}},
		{file: "adp-card.json", typ: "application/adp-agent-card+json", check: func(t *testing.T, r Record) {
			eq(t, "skills", r.Skills, []string{"nlp/translation", "nlp", "nlp/text-analysis", "python"})
			eq(t, "skillNames", r.SkillNames, []string{"translate", "detect_language"})
			eq(t, "examples", r.Examples, []string{"Translate text between languages", "Detect the language of a text"})
			eq(t, "bindings", bindingKeys(r.Bindings), []string{"adp aitp agent://translator-zh-en ", "adp http+json https://api.example.com/translate/v1 "})
			eq(t, "seq", r.Seq, int64(42))
			eq(t, "ttl", r.TTL, int64(3600))
			eq(t, "updatedAt", r.UpdatedAt, "2026-03-24T12:00:00Z")
			eq(t, "constraints", fmt.Sprint(r.Constraints["rate_limit"]), "60/min")
			eq(t, "protocols", r.Protocols, []string{"adp"})
			eq(t, "auth", r.Auth, []string{"bearer"})
		}},
		{file: "haidip-agent.json", typ: "application/haidip-agent+json", check: func(t *testing.T, r Record) {
			eq(t, "capabilities", r.Capabilities, []string{"translation", "language"})
			eq(t, "tags", r.Tags, []string{"catalog-tag", "nlp", "translation", "english", "french"})
			eq(t, "bindings", bindingKeys(r.Bindings), []string{"haidip HTTP+JSON https://api.example.com/agents/translator-001 "})
			eq(t, "provider", r.Provider, "ExampleAI")
			eq(t, "auth", r.Auth, []string{"api-key"})
		}},
		{file: "xu-metadata.json", typ: "application/agent-metadata+json", check: func(t *testing.T, r Record) {
			eq(t, "examples", r.Examples, []string{"Prepare a new-employee onboarding workflow.", "Check an employee record for missing payroll fields."})
			eq(t, "tags", r.Tags, []string{"catalog-tag", "hr", "workflow", "onboarding", "hcm", "api-automation", "employee-record", "validation"})
			eq(t, "bindings", bindingKeys(r.Bindings), []string{"https request-response https://agents.example.net/hr-core/invoke "})
			eq(t, "status", r.Status, "active")
			eq(t, "expiresAt", r.ExpiresAt, "2026-12-31T00:00:00Z")
			eq(t, "updatedAt", r.UpdatedAt, "2026-05-08T00:00:00Z")
			eq(t, "protocols", r.Protocols, []string{"https"})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "artifacts", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			// by url, then Enrich
			rec := catalogRecord(t, `{"identifier":"urn:ai:acme.com:x","displayName":"From Catalog","type":"`+tc.typ+`","url":"https://acme.com/x.json","tags":["Catalog-Tag"]}`)
			before := rec.ContentHash
			if probs := Enrich(&rec, tc.contentType, body); len(probs) != 0 {
				t.Errorf("Enrich problems: %+v", probs)
			}
			if rec.ContentHash == before {
				t.Error("content hash did not change with the artifact")
			}
			tc.check(t, rec)
			// inline: the same mapping
			inline := catalogRecord(t, `{"identifier":"urn:ai:acme.com:x","displayName":"From Catalog","type":"`+tc.typ+`","data":`+string(body)+`,"tags":["Catalog-Tag"]}`)
			tc.check(t, inline)
		})
	}
}

func TestEnrichProblems(t *testing.T) {
	rec := catalogRecord(t, okA2A)
	if ps := Enrich(&rec, "application/json", []byte(`[1]`)); len(ps) != 1 || ps[0].Code != CodeInvalidArtifact {
		t.Errorf("array artifact: %+v", ps)
	}
	if ps := Enrich(&rec, "", []byte(`{"skills": 3, "name": "X"}`)); len(ps) != 1 || ps[0].Code != CodeInvalidArtifact || ps[0].Path != "skills" {
		t.Errorf("skills not an array: %+v", ps)
	}
	if ps := Enrich(&rec, "text/html; charset=utf-8", []byte(`<html>`)); len(ps) != 2 || ps[0].Code != CodeUnexpectedMediaType || ps[1].Code != CodeInvalidArtifact {
		t.Errorf("html artifact: %+v", ps)
	}
	if ps := Enrich(&rec, "application/mcp-server+json", []byte(`{"name":"x"}`)); len(ps) != 1 || ps[0].Code != CodeUnexpectedMediaType {
		t.Errorf("mcp served for a2a: %+v", ps)
	}
	// unknown types keep the catalog fields only
	skill := catalogRecord(t, `{"identifier":"urn:ai:acme.com:s","displayName":"S","type":"application/ai-skill","url":"https://acme.com/SKILL.md"}`)
	want := fmt.Sprintf("%+v", skill)
	if ps := Enrich(&skill, "text/markdown", []byte("# skill")); len(ps) != 0 || fmt.Sprintf("%+v", skill) != want {
		t.Errorf("unknown type changed: %+v %+v", ps, skill)
	}
	if Enrich(nil, "", nil) != nil {
		t.Error("nil record")
	}
}

func TestInlineMCPOfSpec(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "spec", "4.4-solo-mcp-inline.json"))
	if err != nil {
		t.Fatal(err)
	}
	res := Catalog(body, Options{})
	if len(res.Records) != 1 {
		t.Fatalf("records: %+v problems %+v", res.Records, res.Problems)
	}
	r := res.Records[0]
	eq(t, "problems", problemKeys(res.Problems), []string{"warning deprecated_field entries[0].inline"})
	eq(t, "skillNames", r.SkillNames, []string{"get_weather"})
	eq(t, "examples", r.Examples, []string{"Get current weather for a city"})
	eq(t, "variants", r.Variants, []string{"inline"})
	eq(t, "publisher", r.Publisher, "hf.co")
}

func eq(t *testing.T, name string, got, want any) {
	t.Helper()
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("%s = %q, want %q", name, got, want)
	}
}
