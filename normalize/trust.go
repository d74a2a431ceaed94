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
	// Status is HealthUp, HealthDown, HealthAuthRequired or HealthUnknown.
	Status string `json:"status"`
	// CheckedAt is when the last probe ended (zero when never probed).
	CheckedAt time.Time `json:"checkedAt,omitzero"`
	// LatencyMs is how long the last successful probe took.
	LatencyMs int64 `json:"latencyMs,omitempty"`
	// Detail says what the probe saw ("HTTP 503", "timeout", "stdio only", ...).
	Detail string `json:"detail,omitempty"`
}

// Health statuses.
const (
	HealthUp           = "up"
	HealthDown         = "down"          // only after repeated failures
	HealthAuthRequired = "auth_required" // answered 401 or 403: there, but gated
	HealthUnknown      = "unknown"       // not probed (no endpoint, stdio only) or not yet
)

// FieldHealth is the index field holding a record's Health; ingest updates
// it alone when a probe's verdict comes in.
const FieldHealth = "health"
