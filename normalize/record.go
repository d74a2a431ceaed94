// Package normalize owns the shared record of Agent Finder and the rules that
// turn any ai-catalog.json manifest, and the artifact documents its entries
// point to (A2A agent cards, MCP server.json, ADP agent cards, HAIDIP and xu
// agent metadata), into that record. It is pure: no I/O, no clocks it does
// not get from its caller, and it imports nothing of ours.
package normalize

import (
	"encoding/json"
	"time"
)

// Record is the one document Agent Finder keeps per catalog entry identifier,
// whatever artifact the entry describes. JSON names are camelCase, as in the
// manifest, so a record is the catalog entry plus fields of our own.
type Record struct {
	// Entry fields, kept as published (after canonicalization of spellings).
	Identifier            string          `json:"identifier"`
	DisplayName           string          `json:"displayName"`
	Type                  string          `json:"type"`
	URL                   string          `json:"url,omitempty"`
	Data                  json.RawMessage `json:"data,omitempty"`
	Description           string          `json:"description,omitempty"`
	Tags                  []string        `json:"tags,omitempty"`
	Capabilities          []string        `json:"capabilities,omitempty"`
	RepresentativeQueries []string        `json:"representativeQueries,omitempty"`
	Version               string          `json:"version,omitempty"`
	UpdatedAt             string          `json:"updatedAt,omitempty"`
	Metadata              map[string]any  `json:"metadata,omitempty"`
	TrustManifest         json.RawMessage `json:"trustManifest,omitempty"`
	// Extra holds the entry's members normalize does not know ("@context",
	// "pay:price", ...), as published, so a relay does not drop them. Never trusted.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`

	// Derived for search.
	Examples          []string       `json:"examples,omitempty"`     // xu examples, A2A skill examples, ADP tool descriptions
	Bindings          []Binding      `json:"bindings,omitempty"`     // protocol + endpoint
	Skills            []string       `json:"skills,omitempty"`       // hierarchical skill tags with their parents ("travel/flights", "travel")
	SkillNames        []string       `json:"skillNames,omitempty"`   // A2A skill names, MCP tool names, ADP tool names
	Protocols         []string       `json:"protocols,omitempty"`    // a2a, mcp, adp, haidip, ...
	Publisher         string         `json:"publisher,omitempty"`    // the domain in the URN, lower-case
	PublisherVerified bool           `json:"publisherVerified"`      // manifest fetched from that domain or a subdomain
	Compliance        []string       `json:"compliance,omitempty"`   // "soc2-type2", "soc2", "hipaa", ...
	Host              *HostInfo      `json:"host,omitempty"`         // the catalog's host info
	Status            string         `json:"status,omitempty"`       // active (default), deprecated, ... ; "stale" is set by ingest
	ExpiresAt         string         `json:"expiresAt,omitempty"`    // RFC 3339
	Seq               int64          `json:"seq,omitempty"`          // ADP sequence number, orders updates
	Variants          []string       `json:"variants,omitempty"`     // spellings seen: "mediaType", "inline", "urn:air", "mcp-server-card", "a2a-v0.3", ...
	ArtifactType      string         `json:"artifactType,omitempty"` // the type as published before canonicalization, when it differed
	Provider          string         `json:"provider,omitempty"`     // organization from the artifact (A2A provider, HAIDIP provider)
	Constraints       map[string]any `json:"constraints,omitempty"`  // operational constraints from the artifact (ADP, xu), advisory
	TTL               int64          `json:"ttl,omitempty"`          // seconds the artifact asks to be cached (ADP metadata.ttl)
	Versions          []string       `json:"versions,omitempty"`     // an MCP registry server's versions seen, the record's own among them
	Auth              []string       `json:"auth,omitempty"`         // authentication methods the artifact declares (AuthMethod spellings: api-key, bearer, oauth2, none, ...)

	// Trust is the crawl-time verdict on the record's signature, digests and
	// domain (see Trust); Health is the prober's last look at its endpoint.
	// Neither ever feeds the relevance score.
	Trust  *Trust  `json:"trust,omitempty"`
	Health *Health `json:"health,omitempty"`
	// Tools are the tools the server offers: those its endpoint listed
	// when last probed, else those its server card declares.
	Tools *ToolSet `json:"tools,omitempty"`

	// Visibility lists the groups that may see the record; empty means
	// public. The crawler sets it from the seed that led to the catalog
	// (never from what a publisher wrote); searchapi filters every read by it.
	Visibility []string `json:"visibility,omitempty"`

	// Provenance.
	Source      Source    `json:"source"`
	IndexedAt   time.Time `json:"indexedAt,omitempty"`
	ContentHash string    `json:"contentHash,omitempty"` // hash of the published content, independent of key order
}

// Binding is one way to reach an artifact: a protocol and an endpoint.
type Binding struct {
	Protocol  string `json:"protocol"`            // a2a, mcp, adp, http, ...
	URL       string `json:"url,omitempty"`       // endpoint
	Transport string `json:"transport,omitempty"` // JSONRPC, GRPC, HTTP+JSON, streamable-http, sse, stdio, ...
	Package   string `json:"package,omitempty"`   // for MCP packages: registry/name@version
	// Template is set when URL still holds {variables} (an MCP registry
	// remote): the user fills them in; the prober never requests it.
	Template bool `json:"template,omitempty"`
	// Runtime is the command a package's publisher says runs it (an MCP
	// package's runtimeHint: npx, uvx, docker, dnx, ...).
	Runtime string `json:"runtime,omitempty"`
	// Args are the arguments the package wants, runtime arguments first,
	// as a command line holds them ("<value>" where the user supplies one).
	Args []string `json:"args,omitempty"`
	// Env names the environment variables the package reads.
	Env []string `json:"env,omitempty"`
	// Headers names the HTTP headers a remote wants (an API key, ...).
	Headers []string `json:"headers,omitempty"`
}

// sameBinding reports whether a and b name one way to reach an artifact.
func sameBinding(a, b Binding) bool {
	return a.Protocol == b.Protocol && a.URL == b.URL && a.Transport == b.Transport && a.Package == b.Package
}

// HostInfo describes the operator of a catalog (Agent Finder §4.3).
type HostInfo struct {
	DisplayName      string `json:"displayName,omitempty"`
	Identifier       string `json:"identifier,omitempty"`
	DocumentationURL string `json:"documentationUrl,omitempty"`
}

// Source records where a record came from.
type Source struct {
	Catalog   string    `json:"catalog"`        // URL of the catalog document that listed the entry
	Via       string    `json:"via,omitempty"`  // one of the Via* constants
	Path      []string  `json:"path,omitempty"` // chain of catalog URLs (and inline bundle identifiers) that led here, outermost first
	FetchedAt time.Time `json:"fetchedAt,omitempty"`
}

// How a catalog was found.
const (
	ViaWellKnown  = "wellknown"
	ViaAgentmap   = "agentmap"
	ViaLinkTag    = "linktag"
	ViaDNS        = "dns"
	ViaSeed       = "seed"
	ViaCollection = "collection"
	ViaNested     = "nested"
)

// Severity of a Problem.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"   // the entry (or document) was dropped
	SeverityWarning Severity = "warning" // kept, but something is off
)

// Problem is one thing wrong with a document, located by a JSON path such as
// "entries[3].identifier". Problems travel next to the good records; they
// never discard a catalog's valid entries.
type Problem struct {
	Path     string   `json:"path"`
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
}

// Problem codes. Use these names exactly; they are part of the CLI's and the
// crawl report's contract.
const (
	CodeInvalidJSON         = "invalid_json"
	CodeNotAnObject         = "not_an_object"
	CodeMissingField        = "missing_field"
	CodeInvalidIdentifier   = "invalid_identifier"
	CodeURLAndData          = "url_and_data"
	CodeNoContent           = "no_content"
	CodeInvalidURL          = "invalid_url"
	CodeInvalidType         = "invalid_type"
	CodeDuplicateIdentifier = "duplicate_identifier"
	CodeDepthExceeded       = "depth_exceeded"
	CodeDeprecatedField     = "deprecated_field"
	CodePublisherUnverified = "publisher_unverified"
	CodeTrustDomainMismatch = "trust_domain_mismatch"
	CodeConflict            = "conflict"         // ingest: a losing write when two catalogs publish one identifier
	CodeKeptLastGood        = "kept_last_good"   // ingest: an entry became invalid; its last good record is kept
	CodeInvalidArtifact     = "invalid_artifact" // an artifact document could not be used to enrich its entry
	CodeUnexpectedMediaType = "unexpected_media_type"
)

// Link is a catalog to fetch next: an entry of type application/ai-catalog+json
// given by url, or a collections[].url.
type Link struct {
	URL  string   `json:"url"`
	Via  string   `json:"via"`            // ViaCollection or ViaNested
	Path []string `json:"path,omitempty"` // chain of catalogs that led to the link, outermost first
	From string   `json:"from,omitempty"` // JSON path in the document that named it
}

// Artifact is an entry whose url points to an artifact type normalize can map
// (A2A card, MCP server.json, ADP card, ...): fetching it enriches the record.
type Artifact struct {
	Identifier string `json:"identifier"`
	URL        string `json:"url"`
	Type       string `json:"type"` // canonical media type
	// Accept is the media type the entry names as published (an
	// application/mcp-server-card+json entry asks for a server card, not
	// the canonical application/mcp-server+json): the fetch's Accept header.
	Accept string `json:"accept"`
	// Guessed is set when the catalog gave no url and URL is the
	// conventional place of the artifact (an inline MCP server card's full
	// card at <streamable-http remote>/server-card): nothing there is no
	// problem.
	Guessed bool `json:"guessed,omitempty"`
}

// FetchStatus is the outcome of fetching one catalog.
type FetchStatus string

// Fetch outcomes. Only StatusOK may delete records a catalog no longer lists.
const (
	StatusOK          FetchStatus = "ok"
	StatusNotModified FetchStatus = "not_modified"
	StatusFailed      FetchStatus = "failed"
)

// CatalogResult is what one catalog fetch produced: the unit the crawler hands
// to its sink and ingest applies to the index.
type CatalogResult struct {
	Catalog string   `json:"catalog"`        // final URL the catalog was fetched from
	Via     string   `json:"via"`            // how it was found
	Path    []string `json:"path,omitempty"` // chain of catalogs that led to it (excluding itself)
	// Seed is the seed whose crawl fetched it ("" when unknown): ingest
	// counts a catalog's claims as confirmed only while the latest crawl of
	// its seed fetched it (see ingest's precedence rules).
	Seed       string        `json:"seed,omitempty"`
	Status     FetchStatus   `json:"status"`
	Reason     string        `json:"reason,omitempty"` // for StatusFailed: timeout, http_status, too_large, not_json, ...
	Error      string        `json:"error,omitempty"`  // human detail for StatusFailed
	FetchedAt  time.Time     `json:"fetchedAt"`
	MaxAge     time.Duration `json:"maxAge,omitempty"` // refresh hint from Cache-Control max-age / ttl; 0 if none
	Records    []Record      `json:"records,omitempty"`
	Problems   []Problem     `json:"problems,omitempty"`
	Links      []Link        `json:"links,omitempty"`
	Registries []Record      `json:"registries,omitempty"` // entries of type application/ai-registry (also in Records)
	// Rejected names the identifiers of entries the catalog still lists but
	// that are invalid now (see Result.Rejected): ingest keeps their last
	// good records instead of deleting them as vanished.
	Rejected []string `json:"rejected,omitempty"`
	// Urgent is set when someone is waiting for these records (the crawl
	// was asked for by an IndexNow ping, crawler.CrawlOptions.Urgent):
	// ingest writes the batch holding it at once rather than waiting for
	// more results.
	Urgent bool `json:"urgent,omitempty"`
}

// Problem codes added by the normalize implementation.
const (
	CodeTypeMismatch     = "type_mismatch"      // warning: type and mediaType name different types; type is used
	CodeInvalidMediaType = "invalid_media_type" // warning: the type is not a type/subtype media type
	CodeInvalidTimestamp = "invalid_timestamp"  // warning: a timestamp is not ISO 8601
)
