package normalize

import (
	"encoding/json"
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
	// Trust holds the crawler's signature and digest verdicts for this
	// document; nil means they were not checked, and every record's Trust
	// then says only whether its publisher's domain served it.
	Trust *TrustVerdicts
}

// Result is a normalized manifest.
type Result struct {
	Manifest  *Manifest  // nil when the document is not a JSON object
	Records   []Record   // valid entries, nested inline bundles flattened
	Problems  []Problem  // everything wrong, with JSON paths
	Links     []Link     // catalogs to follow (nested by url, collections)
	Artifacts []Artifact // entries whose url points to a mappable artifact
	// Rejected holds the identifiers of entries left out as invalid (those
	// that name one): the publisher still lists them, so a consumer keeps
	// the last good record it has for each rather than deleting it.
	Rejected []string
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
