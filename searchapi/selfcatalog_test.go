package searchapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/normalize"
)

// TestSelfCatalogValidEverywhere: in every configuration (the defaults, make
// run's 127.0.0.1, localhost, IPv6, a real domain, an explicit registry
// domain) the self catalog passes the validator,
// a v0.4.2 manifest check and the v0.4.2 manifest JSON Schema.
func TestSelfCatalogValidEverywhere(t *testing.T) {
	cases := []struct {
		name, publicURL, domain string
		wantDomain              string
	}{
		{"defaults", "", "", DefaultRegistryDomain},
		{"make run", "http://127.0.0.1:8080/", "", DefaultRegistryDomain},
		{"localhost", "http://localhost:8080/", "", DefaultRegistryDomain},
		{"ipv6", "http://[::1]:8080/", "", DefaultRegistryDomain},
		{"domain", "https://Finder.Example.com/", "", "finder.example.com"},
		{"flag", "http://10.0.0.5:8080", "finder.corp.example", "finder.corp.example"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(Config{Index: "unused", Meili: meili.New("http://127.0.0.1:1", ""), PublicURL: c.publicURL, RegistryDomain: c.domain}, nil)
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/.well-known/ai-catalog.json", nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d", rec.Code)
			}
			body := rec.Body.Bytes()
			res := normalize.Catalog(body, normalize.Options{Origin: s.publicURL + "/.well-known/ai-catalog.json"})
			for _, p := range res.Problems {
				if p.Severity == normalize.SeverityError {
					t.Errorf("validator: %s %s: %s", p.Code, p.Path, p.Message)
				}
			}
			if len(res.Records) != 2 { // the registry and its MCP server
				t.Errorf("validator kept %d records, want 2", len(res.Records))
			}
			checkManifestV042(t, body)
			checkManifestSchema(t, body)
			if want := "urn:ai:" + c.wantDomain + ":registry:agentfinder"; s.Identifier() != want {
				t.Errorf("identifier %s, want %s", s.Identifier(), want)
			}
		})
	}
	if _, err := New(Config{Index: "unused", Meili: meili.New("http://127.0.0.1:1", ""), RegistryDomain: "http://finder.example"}, nil); err == nil || !strings.Contains(err.Error(), "not a domain name") {
		t.Errorf("a URL as registry domain: %v, want a clear error", err)
	}
}

// checkManifestSchema holds body to the v0.4.2 manifest's value types, as
// the JSON Schema normalize ships (metadata values are scalars, tags arrays
// of strings, ...).
func checkManifestSchema(t *testing.T, body []byte) {
	t.Helper()
	for _, p := range normalize.SchemaProblems(body) {
		t.Errorf("schema: %s: %s", p.Path, p.Message)
	}
}

// fqdnRE is a fully qualified domain name (§4.2.1: the publisher MUST be one),
// written here independently of normalize's rule.
var fqdnRE = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)

// checkManifestV042 checks body against the manifest of Agent Finder v0.4.2
// (§4.1-4.3): entries with identifier (urn:ai:<FQDN>[:<namespace>...]:<name>),
// displayName, type, exactly one of url and data, optional fields of their
// types; a host with a displayName and, when present, a DID or domain as its
// identifier.
func checkManifestV042(t *testing.T, body []byte) {
	t.Helper()
	var doc struct {
		SpecVersion *string                      `json:"specVersion"`
		Host        map[string]any               `json:"host"`
		Entries     []map[string]json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	if doc.SpecVersion == nil || *doc.SpecVersion == "" {
		t.Error("manifest: specVersion missing")
	}
	if name, _ := doc.Host["displayName"].(string); name == "" {
		t.Errorf("host.displayName missing: %v", doc.Host)
	}
	if id, ok := doc.Host["identifier"]; ok {
		s, _ := id.(string)
		if !fqdnRE.MatchString(s) && !strings.HasPrefix(s, "did:") {
			t.Errorf("host.identifier %v is neither a DID nor a domain", id)
		}
	}
	if u, ok := doc.Host["documentationUrl"].(string); ok && !absoluteURL(u) {
		t.Errorf("host.documentationUrl %q is not an absolute URL", u)
	}
	if len(doc.Entries) == 0 {
		t.Fatal("manifest: no entries")
	}
	for i, e := range doc.Entries {
		str := func(k string) (string, bool) {
			var s string
			raw, ok := e[k]
			return s, ok && json.Unmarshal(raw, &s) == nil
		}
		id, _ := str("identifier")
		parts := strings.Split(id, ":")
		if len(parts) < 4 || parts[0] != "urn" || parts[1] != "ai" || !fqdnRE.MatchString(parts[2]) || parts[len(parts)-1] == "" {
			t.Errorf("entries[%d].identifier %q is not urn:ai:<FQDN>[:<namespace>...]:<name>", i, id)
		}
		for _, k := range []string{"displayName", "type"} {
			if v, ok := str(k); !ok || v == "" {
				t.Errorf("entries[%d].%s missing", i, k)
			}
		}
		_, hasURL := e["url"]
		_, hasData := e["data"]
		if hasURL == hasData {
			t.Errorf("entries[%d]: want exactly one of url and data", i)
		}
		if u, ok := str("url"); hasURL && (!ok || !absoluteURL(u)) {
			t.Errorf("entries[%d].url %s is not an absolute URL", i, e["url"])
		}
		for _, k := range []string{"tags", "capabilities", "representativeQueries"} {
			var list []string
			if raw, ok := e[k]; ok && json.Unmarshal(raw, &list) != nil {
				t.Errorf("entries[%d].%s is not an array of strings", i, k)
			}
			if k == "representativeQueries" && (len(list) < 2 || len(list) > 5) {
				t.Errorf("entries[%d].representativeQueries has %d, SHOULD have 2-5", i, len(list))
			}
		}
	}
}

func absoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
