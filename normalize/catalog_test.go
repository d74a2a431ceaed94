package normalize

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// doc wraps entry objects (JSON text) into a manifest.
func doc(entries ...string) []byte {
	return []byte(`{"specVersion":"1.0","host":{"displayName":"Acme"},"entries":[` + strings.Join(entries, ",") + `]}`)
}

// problemKeys lists problems as "severity code path", sorted.
func problemKeys(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s %s %s", p.Severity, p.Code, p.Path))
	}
	sort.Strings(out)
	return out
}

func recordIDs(rs []Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Identifier)
	}
	return out
}

const (
	okA2A = `{"identifier":"urn:ai:acme.com:agent:a","displayName":"A","type":"application/a2a-agent-card+json","url":"https://acme.com/a.json"}`
	okMCP = `{"identifier":"urn:ai:acme.com:mcp:b","displayName":"B","type":"application/mcp-server+json","url":"https://acme.com/b.json"}`
)

func TestCatalogCodes(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		opts     Options
		records  []string
		problems []string
	}{
		{name: "invalid json", body: `{"entries": [`, problems: []string{"error invalid_json $"}},
		{name: "empty body", body: ``, problems: []string{"error invalid_json $"}},
		{name: "array document", body: `[1,2]`, problems: []string{"error not_an_object $"}},
		{name: "string document", body: `"x"`, problems: []string{"error not_an_object $"}},
		{name: "no entries", body: `{"specVersion":"1.0"}`, problems: []string{"error missing_field entries"}},
		{name: "entries not an array", body: `{"specVersion":"1.0","entries":{}}`, problems: []string{"error invalid_type entries"}},
		{name: "no specVersion is a warning", body: `{"entries":[` + okA2A + `]}`, records: []string{"urn:ai:acme.com:agent:a"}, problems: []string{"warning missing_field specVersion"}},
		{name: "valid siblings kept", body: string(doc(okA2A, `{"displayName":"x","type":"a/b","url":"https://acme.com"}`, okMCP)),
			records:  []string{"urn:ai:acme.com:agent:a", "urn:ai:acme.com:mcp:b"},
			problems: []string{"error missing_field entries[1].identifier"}},
		{name: "entry not an object", body: string(doc(`42`, okA2A)), records: []string{"urn:ai:acme.com:agent:a"}, problems: []string{"error invalid_type entries[0]"}},
		{name: "missing type", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","url":"https://acme.com/x"}`)),
			problems: []string{"error missing_field entries[0].type"}},
		{name: "missing displayName is a warning", body: string(doc(`{"identifier":"urn:ai:acme.com:x","type":"application/json","url":"https://acme.com/x"}`)),
			records: []string{"urn:ai:acme.com:x"}, problems: []string{"warning missing_field entries[0].displayName"}},
		{name: "identifier not a urn", body: string(doc(`{"identifier":"plain","displayName":"X","type":"a/b","url":"https://acme.com/x"}`)),
			problems: []string{"error invalid_identifier entries[0].identifier"}},
		{name: "identifier other nid", body: string(doc(`{"identifier":"urn:example:acme.com:x","displayName":"X","type":"a/b","url":"https://acme.com/x"}`)),
			problems: []string{"error invalid_identifier entries[0].identifier"}},
		{name: "identifier without name", body: string(doc(`{"identifier":"urn:ai:acme.com","displayName":"X","type":"a/b","url":"https://acme.com/x"}`)),
			problems: []string{"error invalid_identifier entries[0].identifier"}},
		{name: "identifier publisher not a domain", body: string(doc(`{"identifier":"urn:ai:acme:x","displayName":"X","type":"a/b","url":"https://acme.com/x"}`)),
			problems: []string{"error invalid_identifier entries[0].identifier"}},
		{name: "identifier label too long", body: string(doc(`{"identifier":"urn:air:` + strings.Repeat("a", 64) + `.com:x:y","displayName":"X","type":"a/b","url":"https://acme.com/x"}`)),
			problems: []string{"error invalid_identifier entries[0].identifier"}},
		{name: "identifier empty segment", body: string(doc(`{"identifier":"urn:ai:acme.com::x","displayName":"X","type":"a/b","url":"https://acme.com/x"}`)),
			problems: []string{"error invalid_identifier entries[0].identifier"}},
		{name: "identifier with space", body: string(doc(`{"identifier":"urn:ai:acme.com:my agent","displayName":"X","type":"a/b","url":"https://acme.com/x"}`)),
			problems: []string{"error invalid_identifier entries[0].identifier"}},
		{name: "identifier nid case-insensitive", body: string(doc(`{"identifier":"URN:AIR:Acme.com:x","displayName":"X","type":"a/b","url":"https://acme.com/x"}`)),
			records: []string{"URN:AIR:Acme.com:x"}},
		{name: "identifier wrong json type", body: string(doc(`{"identifier":7,"displayName":"X","type":"a/b","url":"https://acme.com/x"}`)),
			problems: []string{"error invalid_type entries[0].identifier"}},
		{name: "url and data", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":"https://acme.com/x","data":{}}`)),
			problems: []string{"error url_and_data entries[0]"}},
		{name: "url and inline", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":"https://acme.com/x","inline":{}}`)),
			problems: []string{"error url_and_data entries[0]", "warning deprecated_field entries[0].inline"}},
		{name: "no content", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b"}`)),
			problems: []string{"error no_content entries[0]"}},
		{name: "null data is no content", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","data":null}`)),
			problems: []string{"error no_content entries[0]"}},
		{name: "relative url", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":"/x.json"}`)),
			problems: []string{"error invalid_url entries[0].url"}},
		{name: "ftp url", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":"ftp://acme.com/x"}`)),
			problems: []string{"error invalid_url entries[0].url"}},
		{name: "url without host", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":"https:///x"}`)),
			problems: []string{"error invalid_url entries[0].url"}},
		{name: "url wrong json type", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":["https://acme.com"]}`)),
			problems: []string{"error invalid_type entries[0].url"}},
		{name: "data not an object", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","data":"text"}`)),
			problems: []string{"error invalid_type entries[0].data"}},
		{name: "tags wrong type is a warning", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":"https://acme.com/x","tags":{"a":1}}`)),
			records: []string{"urn:ai:acme.com:x"}, problems: []string{"warning invalid_type entries[0].tags"}},
		{name: "tags with a number", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":"https://acme.com/x","tags":["a",1]}`)),
			records: []string{"urn:ai:acme.com:x"}, problems: []string{"warning invalid_type entries[0].tags[1]"}},
		{name: "metadata wrong type", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":"https://acme.com/x","metadata":[]}`)),
			records: []string{"urn:ai:acme.com:x"}, problems: []string{"warning invalid_type entries[0].metadata"}},
		{name: "duplicate identifier, same artifact", body: string(doc(okA2A, okA2A)), records: []string{"urn:ai:acme.com:agent:a"},
			problems: []string{"warning duplicate_identifier entries[1].identifier"}},
		{name: "duplicate identifier, other artifact", body: string(doc(okA2A, strings.Replace(okA2A, "a.json", "other.json", 1))), records: []string{"urn:ai:acme.com:agent:a"},
			problems: []string{"error duplicate_identifier entries[1].identifier"}},
		{name: "duplicate across urn:air spelling, newer kept", body: string(doc(
			`{"identifier":"urn:ai:acme.com:x","displayName":"Old","type":"a/b","url":"https://acme.com/1","updatedAt":"2026-01-01T00:00:00Z"}`,
			`{"identifier":"urn:air:ACME.com:x","displayName":"New","type":"a/b","url":"https://acme.com/2","updatedAt":"2026-03-01T00:00:00Z"}`)),
			records: []string{"urn:air:ACME.com:x"}, problems: []string{"error duplicate_identifier entries[0].identifier"}},
		{name: "inline deprecated", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"application/json","inline":{"a":1}}`)),
			records: []string{"urn:ai:acme.com:x"}, problems: []string{"warning deprecated_field entries[0].inline"}},
		{name: "publisher verified from subdomain", opts: Options{Origin: "https://www.acme.com/.well-known/ai-catalog.json"}, body: string(doc(okA2A)),
			records: []string{"urn:ai:acme.com:agent:a"}},
		{name: "publisher unverified", opts: Options{Origin: "https://evil.example/.well-known/ai-catalog.json"}, body: string(doc(okA2A)),
			records: []string{"urn:ai:acme.com:agent:a"}, problems: []string{"warning publisher_unverified entries[0].identifier"}},
		{name: "lookalike domain is unverified", opts: Options{Origin: "https://notacme.com/"}, body: string(doc(okA2A)),
			records: []string{"urn:ai:acme.com:agent:a"}, problems: []string{"warning publisher_unverified entries[0].identifier"}},
		{name: "trust domain mismatch", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":"https://acme.com/x","trustManifest":{"identity":"spiffe://evil.example/x"}}`)),
			records: []string{"urn:ai:acme.com:x"}, problems: []string{"warning trust_domain_mismatch entries[0].trustManifest.identity"}},
		{name: "trust domain aligned", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":"https://acme.com/x","trustManifest":{"identity":"did:web:trust.acme.com:agents"}}`)),
			records: []string{"urn:ai:acme.com:x"}},
		{name: "trust identity without domain", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":"https://acme.com/x","trustManifest":{"identity":"did:key:z6Mk"}}`)),
			records: []string{"urn:ai:acme.com:x"}},
		{name: "trustManifest wrong type", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":"https://acme.com/x","trustManifest":"yes"}`)),
			records: []string{"urn:ai:acme.com:x"}, problems: []string{"warning invalid_type entries[0].trustManifest"}},
		{name: "type and mediaType differ", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"application/json","mediaType":"text/plain","url":"https://acme.com/x"}`)),
			records: []string{"urn:ai:acme.com:x"}, problems: []string{"warning type_mismatch entries[0].mediaType"}},
		{name: "malformed media type", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"application/ example","url":"https://acme.com/x"}`)),
			records: []string{"urn:ai:acme.com:x"}, problems: []string{"warning invalid_media_type entries[0].type"}},
		{name: "bad updatedAt", body: string(doc(`{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":"https://acme.com/x","updatedAt":"yesterday"}`)),
			records: []string{"urn:ai:acme.com:x"}, problems: []string{"warning invalid_timestamp entries[0].updatedAt"}},
		{name: "collection bad url", body: `{"specVersion":"1.0","entries":[],"collections":[{"url":"catalog.json"}]}`,
			problems: []string{"error invalid_url collections[0].url"}},
		{name: "nested by url beyond depth", opts: Options{Path: []string{"a", "b", "c", "d"}},
			body:     string(doc(`{"identifier":"urn:ai:acme.com:c","displayName":"C","type":"application/ai-catalog+json","url":"https://acme.com/c.json"}`)),
			records:  []string{"urn:ai:acme.com:c"},
			problems: []string{"error depth_exceeded entries[0].url"}},
		{name: "inline nesting beyond depth", opts: Options{MaxDepth: 1},
			body: string(doc(`{"identifier":"urn:ai:acme.com:c","displayName":"C","type":"application/ai-catalog+json","data":` + string(doc(
				`{"identifier":"urn:ai:acme.com:d","displayName":"D","type":"application/ai-catalog+json","data":`+string(doc(okA2A))+`}`)) + `}`)),
			records:  []string{"urn:ai:acme.com:c", "urn:ai:acme.com:d"},
			problems: []string{"error depth_exceeded entries[0].data.entries[0].data"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := Catalog([]byte(tc.body), tc.opts)
			if got := recordIDs(res.Records); !slices.Equal(got, tc.records) {
				t.Errorf("records = %q, want %q", got, tc.records)
			}
			want := append([]string(nil), tc.problems...)
			sort.Strings(want)
			if got := problemKeys(res.Problems); !slices.Equal(got, want) {
				t.Errorf("problems = %q, want %q", got, want)
				for _, p := range res.Problems {
					t.Logf("  %+v", p)
				}
			}
		})
	}
}

func TestCatalogNestedAndLinks(t *testing.T) {
	body := []byte(`{
	  "specVersion": "1.0",
	  "host": {"displayName": "Acme", "identifier": "did:web:acme.com"},
	  "entries": [
	    {"identifier": "urn:ai:acme.com:bundle", "displayName": "Bundle", "type": "application/ai-catalog+json",
	     "data": {"specVersion": "1.0", "host": {"displayName": "Inner"},
	              "entries": [` + okA2A + `],
	              "collections": [{"url": "https://acme.com/inner-collection.json"}]}},
	    {"identifier": "urn:ai:acme.com:remote", "displayName": "Remote", "type": "application/ai-catalog",
	     "url": "https://acme.com/remote.json"}
	  ],
	  "collections": [{"displayName": "Eng", "url": "https://acme.com/eng.json"}, "https://acme.com/bare.json"]
	}`)
	origin := "https://acme.com/.well-known/ai-catalog.json"
	res := Catalog(body, Options{Origin: origin, Via: ViaWellKnown, Path: []string{"https://seed.example/"}})
	if len(res.Problems) != 0 {
		t.Fatalf("problems: %+v", res.Problems)
	}
	if got, want := recordIDs(res.Records), []string{"urn:ai:acme.com:bundle", "urn:ai:acme.com:agent:a", "urn:ai:acme.com:remote"}; !slices.Equal(got, want) {
		t.Fatalf("records = %q, want %q", got, want)
	}
	child := res.Records[1]
	if want := []string{"https://seed.example/", origin, "urn:ai:acme.com:bundle"}; !slices.Equal(child.Source.Path, want) {
		t.Errorf("child path = %q, want %q", child.Source.Path, want)
	}
	if child.Host == nil || child.Host.DisplayName != "Inner" {
		t.Errorf("child host = %+v, want the inner catalog's", child.Host)
	}
	if top := res.Records[0]; !slices.Equal(top.Source.Path, []string{"https://seed.example/"}) || top.Source.Catalog != origin || top.Source.Via != ViaWellKnown {
		t.Errorf("top source = %+v", top.Source)
	}
	if res.Records[2].Type != TypeAICatalog || res.Records[2].ArtifactType != "application/ai-catalog" {
		t.Errorf("remote type = %q (%q)", res.Records[2].Type, res.Records[2].ArtifactType)
	}
	var links []string
	for _, l := range res.Links {
		links = append(links, l.Via+" "+l.URL+" "+l.From+" "+strings.Join(l.Path, ">"))
	}
	want := []string{
		"collection https://acme.com/eng.json collections[0].url https://seed.example/>" + origin,
		"collection https://acme.com/bare.json collections[1] https://seed.example/>" + origin,
		"collection https://acme.com/inner-collection.json entries[0].data.collections[0].url https://seed.example/>" + origin + ">urn:ai:acme.com:bundle",
		"nested https://acme.com/remote.json entries[1].url https://seed.example/>" + origin,
	}
	sort.Strings(links)
	sort.Strings(want)
	if !slices.Equal(links, want) {
		t.Errorf("links:\n%s\nwant:\n%s", strings.Join(links, "\n"), strings.Join(want, "\n"))
	}
	if len(res.Artifacts) != 1 || res.Artifacts[0].URL != "https://acme.com/a.json" || res.Artifacts[0].Type != TypeA2A {
		t.Errorf("artifacts = %+v", res.Artifacts)
	}
}

func TestCatalogDerived(t *testing.T) {
	body := doc(`{
	  "identifier": "urn:air:Acme.COM:travel:concierge",
	  "displayName": "Travel Concierge",
	  "mediaType": "application/A2A-Agent-Card+json; charset=utf-8",
	  "url": "https://api.acme.com/travel/concierge.json",
	  "tags": [" Travel", "travel", "", "Flights  Booking"],
	  "@context": {"schema": "https://schema.org/"},
	  "trustManifest": {"identity": "spiffe://acme.com/travel/concierge",
	    "attestations": [{"type": "SPIFFE-X509"}, {"type": "SOC2-Type2"}, {"type": "HIPAA-Audit"}, {"type": "GDPR"}, {"type": 5}]}
	}`)
	res := Catalog(body, Options{Origin: "https://acme.com/.well-known/ai-catalog.json"})
	if len(res.Records) != 1 {
		t.Fatalf("records: %+v problems: %+v", res.Records, res.Problems)
	}
	r := res.Records[0]
	checks := []struct {
		name      string
		got, want any
	}{
		{"publisher", r.Publisher, "acme.com"},
		{"verified", r.PublisherVerified, true},
		{"type", r.Type, TypeA2A},
		{"artifactType", r.ArtifactType, "application/A2A-Agent-Card+json; charset=utf-8"},
		{"tags", r.Tags, []string{"travel", "flights booking"}},
		{"compliance", r.Compliance, []string{"spiffe-x509", "soc2-type2", "soc2", "hipaa-audit", "hipaa", "gdpr"}},
		{"variants", r.Variants, []string{"urn:air", "mediaType"}},
		{"protocols", r.Protocols, []string{"a2a"}},
		{"status", r.Status, "active"},
		{"host", r.Host.DisplayName, "Acme"},
		{"extra", string(r.Extra["@context"]), `{"schema": "https://schema.org/"}`},
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestContentHashIgnoresKeyOrder(t *testing.T) {
	a := Catalog([]byte(`{"entries":[{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":"https://acme.com/x","tags":["a","b"]}]}`), Options{})
	b := Catalog([]byte(`{"entries":[ {"tags":["a","b"],  "url":"https://acme.com/x","type":"a/b","displayName":"X","identifier":"urn:ai:acme.com:x"} ]}`), Options{})
	c := Catalog([]byte(`{"entries":[{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"a/b","url":"https://acme.com/x","tags":["b","a"]}]}`), Options{})
	if a.Records[0].ContentHash != b.Records[0].ContentHash {
		t.Errorf("hash depends on key order: %s vs %s", a.Records[0].ContentHash, b.Records[0].ContentHash)
	}
	if a.Records[0].ContentHash == c.Records[0].ContentHash {
		t.Errorf("hash ignores content change")
	}
}

func TestCanonicalType(t *testing.T) {
	tests := []struct{ in, want string }{
		{"application/mcp-server+json", TypeMCP},
		{"application/mcp-server-card+json", TypeMCP},
		{"Application/MCP-Server-Card+JSON; charset=utf-8", TypeMCP},
		{"application/ai-registry", TypeAIRegistry},
		{"application/ai-registry+json", TypeAIRegistry},
		{"application/a2a-agent-card+json", TypeA2A},
		{"application/a2a+json", TypeA2A},
		{"application/agent-card+json", TypeA2A},
		{"application/ai-catalog", TypeAICatalog},
		{"application/ai-skill", "application/ai-skill"},
		{" text/HTML ", "text/html"},
	}
	for _, tc := range tests {
		if got := CanonicalType(tc.in); got != tc.want {
			t.Errorf("CanonicalType(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if !SameType("application/ai-registry", "application/ai-registry+json") || SameType("application/json", "text/plain") {
		t.Error("SameType is wrong")
	}
}

func TestDocIDCanonical(t *testing.T) {
	if DocID("urn:air:Acme.com:x") != DocID("urn:ai:acme.com:x") {
		t.Error("urn:air and urn:ai spellings of one identifier have different keys")
	}
	if DocID("urn:ai:acme.com:x") == DocID("urn:ai:acme.com:y") {
		t.Error("different identifiers share a key")
	}
	for _, c := range DocID("anything at all") {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			t.Fatalf("DocID has %q", c)
		}
	}
}

// TestSameIdentifier: SameIdentifier and DocID agree on which spellings
// name one identifier.
func TestSameIdentifier(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{"urn:ai:acme.com:agent:x", "urn:air:acme.com:agent:x", true},
		{"urn:ai:acme.com:agent:x", "urn:ai:ACME.Com:agent:x", true},
		{"urn:ai:acme.com:agent:x", "URN:AIR:acme.com.:agent:x", true},
		{"urn:ai:acme.com:agent:x", "urn:ai:acme.com:agent:X", false},
		{"urn:ai:acme.com:agent:x", "urn:ai:acme.com:x", false},
		{"not a urn", "not a urn", true},
		{"not a urn", "NOT A URN", false},
	}
	for _, c := range cases {
		if got := SameIdentifier(c.a, c.b); got != c.same {
			t.Errorf("SameIdentifier(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
		if got := DocID(c.a) == DocID(c.b); got != c.same {
			t.Errorf("DocID(%q) == DocID(%q) is %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

func TestManifestExtraKept(t *testing.T) {
	res := Catalog([]byte(`{"specVersion":"1.0","entries":[],"signature":"x","extensions":{"a":1}}`), Options{})
	if res.Manifest == nil || string(res.Manifest.Extra["signature"]) != `"x"` || len(res.Manifest.Extra) != 2 {
		t.Fatalf("manifest = %+v", res.Manifest)
	}
	var m map[string]any
	if err := json.Unmarshal(res.Manifest.Extra["extensions"], &m); err != nil || m["a"] != float64(1) {
		t.Errorf("extensions = %s", res.Manifest.Extra["extensions"])
	}
}
