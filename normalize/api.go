package normalize

// INTERIM: signatures agreed between packages. The normalize helper replaces
// the bodies below with the real implementation (keep the signatures).

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
)

// Options say where a manifest came from, which decides publisher verification
// and provenance.
type Options struct {
	Origin   string    // URL the manifest was fetched from; empty skips publisher verification
	Via      string    // how the manifest was found (Via* constant)
	Path     []string  // chain of catalogs that led to this one, outermost first
	MaxDepth int       // nesting limit for inline and linked catalogs; 0 means 4
	Now      time.Time // fetch time, stored as Source.FetchedAt
}

// Result is a normalized manifest.
type Result struct {
	Manifest  *Manifest  // nil when the document is not a JSON object
	Records   []Record   // valid entries, nested inline bundles flattened
	Problems  []Problem  // everything wrong, with JSON paths
	Links     []Link     // catalogs to follow (nested by url, collections)
	Artifacts []Artifact // entries whose url points to a mappable artifact
}

// Manifest is the parsed top level of an ai-catalog.json document. Unknown
// fields are kept in Extra so a relay does not drop them; they are never trusted.
type Manifest struct {
	SpecVersion string                     `json:"specVersion,omitempty"`
	Host        *HostInfo                  `json:"host,omitempty"`
	Entries     []json.RawMessage          `json:"entries"`
	Collections []json.RawMessage          `json:"collections,omitempty"`
	Extra       map[string]json.RawMessage `json:"-"`
}

// Catalog parses and validates an ai-catalog.json document. It never fails as
// a whole: a broken document yields problems and no records, a broken entry
// is dropped with its problems while its valid siblings are kept.
func Catalog(body []byte, opts Options) Result {
	var m Manifest
	if err := json.Unmarshal(body, &m); err != nil {
		return Result{Problems: []Problem{{Path: "$", Code: CodeInvalidJSON, Severity: SeverityError, Message: err.Error()}}}
	}
	res := Result{Manifest: &m}
	for _, raw := range m.Entries {
		var r Record
		if json.Unmarshal(raw, &r) != nil || r.Identifier == "" {
			continue
		}
		r.Type = CanonicalType(r.Type)
		r.Source = Source{Catalog: opts.Origin, Via: opts.Via, Path: opts.Path, FetchedAt: opts.Now}
		r.ContentHash = ContentHash(raw)
		res.Records = append(res.Records, r)
	}
	return res
}

// Enrich maps an artifact document fetched from rec.URL (an A2A agent card,
// MCP server.json, ADP agent card, ...) into rec: skills, examples, bindings,
// tool names. contentType is the response's Content-Type (may be empty). The
// record's catalog fields win over the artifact's. It reports problems with
// the artifact and never clears what the catalog said.
func Enrich(rec *Record, contentType string, body []byte) []Problem {
	return nil
}

// CanonicalType returns the canonical spelling of a media type: lower-case,
// parameters removed, and known variants unified (application/mcp-server-card+json
// becomes application/mcp-server+json, application/ai-registry becomes
// application/ai-registry+json, ...). Filters match on this form.
func CanonicalType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	return t
}

// DocID returns the Meilisearch document key for an identifier: a hash, since
// Meilisearch keys allow only [A-Za-z0-9_-].
func DocID(identifier string) string {
	sum := sha256.Sum256([]byte(identifier))
	return hex.EncodeToString(sum[:16])
}

// ContentHash hashes a JSON document independently of key order and
// insignificant whitespace.
func ContentHash(doc []byte) string {
	sum := sha256.Sum256(doc)
	return hex.EncodeToString(sum[:])
}
