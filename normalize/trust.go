package normalize

import "time"

// Trust says how far a record's origin can be checked, computed at crawl
// time and kept apart from relevance: the search score never reads it.
type Trust struct {
	// Level is TrustSigned, TrustDomain, TrustRegistry or TrustNone.
	Level string `json:"level"`
	// Signer is the DID whose valid signature made the level TrustSigned,
	// or the signer a failed signature named.
	Signer string `json:"signer,omitempty"`
	// CheckedAt is when the crawler checked the signature and digests.
	CheckedAt time.Time `json:"checkedAt,omitzero"`
	// Problems name what failed (the Code* signature and digest codes): a
	// record with a problem is never TrustSigned.
	Problems []Problem `json:"problems,omitempty"`
}

// Trust levels, strongest first.
const (
	TrustSigned = "signed" // a valid signature by the publisher
	TrustDomain = "domain" // fetched from the publisher's domain (PublisherVerified)
	// TrustRegistry: read from an MCP registry, which checked that the
	// publisher owns the server name's namespace; the registry vouches,
	// not the publisher's own domain.
	TrustRegistry = "registry"
	TrustNone     = "none" // neither, or a signature or digest that failed
)

// Signature and digest problem codes (Trust.Problems, and the validate
// command's report).
const (
	CodeBadSignature      = "bad_signature"     // the JWS does not verify over the canonical content
	CodeWrongSigner       = "wrong_signer"      // signed, but not by the publisher (or the catalog's host)
	CodeSignatureExpired  = "signature_expired" // expiresAt (or the JWS's own exp) is past
	CodeUnresolvableKey   = "unresolvable_key"  // the signer's DID document or key could not be had
	CodeForbiddenHeader   = "forbidden_header"  // jku, jwk, x5u or x5c: the signer chose its own key
	CodeSubjectMismatch   = "subject_mismatch"  // the signed subject names another entry or artifact
	CodeUnsupportedSigAlg = "unsupported_sig"   // a profile or algorithm other than did-web-v1 / ES256
	CodeDigestMismatch    = "digest_mismatch"   // a fetched artifact or attestation does not hash to its digest
	CodeWeakDigest        = "weak_digest"       // a digest in an algorithm other than sha256
)

// Health says whether a record's endpoint answered when the prober last
// checked it. A down record is never deleted for being down.
type Health struct {
	// Status is HealthUp, HealthDown, HealthAuthRequired, HealthNotMCP,
	// HealthTemplate or HealthUnknown.
	Status string `json:"status"`
	// CheckedAt is when the last probe ended (zero when never probed).
	CheckedAt time.Time `json:"checkedAt,omitzero"`
	// LatencyMs is how long the last successful probe took.
	LatencyMs int64 `json:"latencyMs,omitempty"`
	// Detail says what the probe saw ("HTTP 503", "timeout", "stdio only", ...).
	Detail string `json:"detail,omitempty"`
	// Protocol is what answered: "mcp" or "a2a" (empty when nothing did).
	Protocol string `json:"protocol,omitempty"`
	// Transport is the MCP transport spoken: "streamable-http" or "sse".
	Transport string `json:"transport,omitempty"`
	// ProtocolVersion is the version the endpoint reported (an MCP
	// server's negotiated or discovered protocol version).
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// ServerName and ServerVersion are what the endpoint said it is (MCP
	// serverInfo).
	ServerName    string `json:"serverName,omitempty"`
	ServerVersion string `json:"serverVersion,omitempty"`
	// Auth is what an auth_required endpoint asked for.
	Auth *AuthChallenge `json:"auth,omitempty"`
}

// AuthChallenge is what an endpoint that answered 401 or 403 asks of a
// client: the WWW-Authenticate scheme and, when it points to one, its OAuth
// protected resource metadata (RFC 9728).
type AuthChallenge struct {
	Scheme               string   `json:"scheme,omitempty"` // "Bearer", "Basic", ...
	Realm                string   `json:"realm,omitempty"`
	ResourceMetadata     string   `json:"resourceMetadata,omitempty"` // the metadata document's URL
	AuthorizationServers []string `json:"authorizationServers,omitempty"`
	Scopes               []string `json:"scopes,omitempty"` // the challenge's scope, else scopes_supported
}

// Health statuses.
const (
	HealthUp           = "up"
	HealthDown         = "down"          // only after repeated failures
	HealthAuthRequired = "auth_required" // answered 401 or 403: there, but gated
	HealthNotMCP       = "not_mcp"       // answers HTTP, but not MCP (an HTML page, a JSON API)
	HealthTemplate     = "template"      // the endpoint URL still holds a {placeholder}: never probed
	HealthUnknown      = "unknown"       // not probed (no endpoint, stdio only) or not yet
)

// Live reports whether a health status leaves the endpoint usable: every
// status but down, not_mcp and template (an unknown or gated endpoint may
// well work). Search ranks records that are not live below live ones of
// similar relevance.
func Live(status string) bool {
	switch status {
	case HealthDown, HealthNotMCP, HealthTemplate:
		return false
	}
	return true
}

// FieldHealth is the index field holding a record's Health; ingest updates
// it alone when a probe's verdict comes in.
const FieldHealth = "health"
