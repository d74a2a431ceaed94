package normalize

import (
	"slices"
	"strings"
	"time"
)

// Document is a Record as stored in the Meilisearch index: the record's own
// fields plus the few fields the index needs for keys, filters and sorting.
// ingest writes Documents; searchapi reads them. Field names here are the
// index schema: filters and sorts refer to them.
type Document struct {
	Record

	// ID is the Meilisearch primary key: RecordKey(Identifier, Visibility),
	// so claims of different visibility are documents apart.
	ID string `json:"id"`
	// IdentifierKey is DocID(Identifier), the same for every spelling of
	// the identifier and every visibility: a lookup by identifier filters
	// on it (with the caller's access).
	IdentifierKey string `json:"identifierKey"`
	// Stale is set by ingest when the record's catalog kept failing or aged
	// out; searches leave stale records out by default.
	Stale bool `json:"stale"`
	// PublisherNames holds what the publisher filter matches, lower-case: the
	// URN publisher domain, the host identifier, the host display name and
	// the artifact's provider.
	PublisherNames []string `json:"publisherNames,omitempty"`
	// Languages are the natural languages the entry supports, lower-case
	// (constraints.supported_languages of ADP, HAIDIP and xu artifacts).
	Languages []string `json:"languages,omitempty"`
	// SourceCatalog is Source.Catalog, flattened for filtering by catalog.
	SourceCatalog string `json:"sourceCatalog,omitempty"`
	// UpdatedAtTs, IndexedAtTs and ExpiresAtTs are Unix seconds for sorting
	// and filtering (0 when unknown; ExpiresAtTs 0 means never expires).
	UpdatedAtTs int64 `json:"updatedAtTs"`
	IndexedAtTs int64 `json:"indexedAtTs"`
	ExpiresAtTs int64 `json:"expiresAtTs"`
	// LostClaims are the other catalogs' records for this identifier that
	// lost to this one under ingest's precedence rules, sorted by catalog, so
	// a conflict stays visible on the record. Ingest keeps it current.
	LostClaims []Claim `json:"lostClaims,omitempty"`
	// AliasKeys are AliasKeys(Identifier, LostClaims): the DocIDs of the
	// other identifiers this agent was reached by and merged under, so a
	// lookup by one of them finds this document.
	AliasKeys []string `json:"aliasKeys,omitempty"`
	// SourceKind is SourceKind(Record): what kind of source the record
	// came from (catalog, card, registry), for precedence.
	SourceKind string `json:"sourceKind,omitempty"`
	// MatchKeys are MatchKeys(Record): what else identifies the agent, so
	// ingest finds it again when another kind of source lists it.
	MatchKeys []string `json:"matchKeys,omitempty"`
	// ToolsKey is ToolsKey(Tools), set where the records index stores the
	// document (RecordDocument), which keeps the tools themselves in the
	// tools index alone: ingest tells by it whether a tool document is the
	// one of the record as stored.
	ToolsKey string `json:"toolsKey,omitempty"`
	// DeclaredTools are the tools the record's server card or server.json
	// declares, kept whatever Tools holds (ingest's rule: the endpoint's
	// list when the prober read one, else these), so that a record whose
	// endpoint stops listing (gated, not MCP) shows them again at once. The
	// tools index stores them, on the record's tool document (ToolDocument:
	// not searched, never retrieved by searches, never shown); the records
	// index does not (RecordDocument).
	DeclaredTools *ToolSet `json:"declaredTools,omitempty"`
	// Vectors holds Meilisearch's "_vectors" (embedder name to one vector or a
	// list of vectors, or nil to opt out). Empty when no embedder is configured.
	Vectors map[string]any `json:"_vectors,omitempty"`
	// Unembedded is set by ingest on a document written without vectors
	// into an index whose embedder a writer with the model configured (a
	// crawl without the model beside a serve with it): that writer
	// rewrites it with vectors on its catalog's next fetch.
	Unembedded bool `json:"unembedded,omitempty"`
}

// Claim is one catalog's record for an identifier that lost to the stored
// record: enough to show who else claims it, and for ingest to compare it
// again later.
type Claim struct {
	Identifier        string `json:"identifier"`       // as that catalog wrote it
	Catalog           string `json:"catalog"`          // URL of the catalog that listed it
	Reason            string `json:"reason"`           // the precedence rule it lost by: "signed by the publisher", "verified publisher", "seq", ...
	Signed            bool   `json:"signed,omitempty"` // its trust level was signed
	PublisherVerified bool   `json:"publisherVerified"`
	Seq               int64  `json:"seq,omitempty"`
	UpdatedAtTs       int64  `json:"updatedAtTs,omitempty"` // its updatedAt, Unix seconds
	ContentHash       string `json:"contentHash,omitempty"`
	// Kind is the kind of source it came from (SourceKind) and Keys its
	// match keys (MatchKeys): a claim may name the agent by another
	// identifier, found to be the same agent by one of them.
	Kind string   `json:"kind,omitempty"`
	Keys []string `json:"keys,omitempty"`
}

// AliasKeys returns the DocIDs of the identifiers of lost that are not
// identifier (claims of the same agent reached under another identifier
// and merged into its document), sorted, without repeats; nil when there
// are none.
func AliasKeys(identifier string, lost []Claim) []string {
	own := DocID(identifier)
	var out []string
	for _, c := range lost {
		if k := DocID(c.Identifier); k != own {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// NewDocument builds the index document for rec, indexed at now.
func NewDocument(rec Record, now time.Time) Document {
	rec.IndexedAt = now.UTC()
	d := Document{
		Record:        rec,
		ID:            RecordKey(rec.Identifier, rec.Visibility),
		IdentifierKey: DocID(rec.Identifier),
		SourceCatalog: rec.Source.Catalog,
		IndexedAtTs:   now.Unix(),
		SourceKind:    SourceKind(&rec),
		MatchKeys:     MatchKeys(&rec),
	}
	seen := map[string]bool{}
	add := func(s string) {
		s = strings.ToLower(strings.TrimSpace(s))
		if s != "" && !seen[s] {
			seen[s] = true
			d.PublisherNames = append(d.PublisherNames, s)
		}
	}
	add(rec.Publisher)
	if rec.Host != nil {
		add(rec.Host.Identifier)
		add(rec.Host.DisplayName)
	}
	add(rec.Provider)
	d.Languages = languages(rec.Constraints["supported_languages"])
	if t, ok := ParseTime(rec.UpdatedAt); ok {
		d.UpdatedAtTs = t.Unix()
	}
	if t, ok := ParseTime(rec.ExpiresAt); ok {
		d.ExpiresAtTs = t.Unix()
	}
	return d
}

// languages reads a supported_languages constraint (a list of strings or
// one string, as decoded from JSON or set by a mapper) as lower-case codes.
func languages(v any) []string {
	var in []string
	switch l := v.(type) {
	case string:
		in = []string{l}
	case []string:
		in = l
	case []any:
		for _, x := range l {
			if s, ok := x.(string); ok {
				in = append(in, s)
			}
		}
	}
	var out []string
	for _, s := range in {
		if s = strings.ToLower(strings.TrimSpace(s)); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// ParseTime reads the timestamp spellings seen in catalogs and accepted in
// filters: RFC 3339, a date and time without zone (UTC), or a date.
func ParseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
