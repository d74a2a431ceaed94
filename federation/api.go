// Package federation is Agent Finder's client to upstream registries (Agent
// Finder §8): the registry book (configured, crawled and DNS-learned
// registries), fan-out with deadlines, reciprocal rank fusion, deduplication,
// loop prevention and referrals. Of ours it imports normalize and the leaf
// address guard crawler/netguard; searchapi calls it and it must not import
// searchapi, ingest or crawler itself.
//
// Decisions the spec leaves open:
//   - Ranking: sources are fused by reciprocal rank (k=60) on position;
//     scores of different registries are never compared (xu §6.1). The score
//     shown is the supplying registry's own, clamped to an integer in 0..100.
//   - Dedupe key: the identifier with urn:air: read as urn:ai: and the
//     publisher lower-cased. The copy kept is the verified one, then the
//     local one, then the earliest source's. Only configured (trusted)
//     upstreams can claim publisherVerified.
//   - Trust and health: only configured (trusted) upstreams' trust and
//     health are relayed, each checked against normalize's closed lists;
//     a learned registry's are dropped, so its results count as trust
//     "none" and health "unknown" (Reported) and never pass signedOnly or
//     liveOnly.
//   - Provenance: upstream results get source (the endpoint we asked),
//     originService (the upstream's own originService or source label when
//     it is an http(s) URL, else
//     the endpoint) and receivedAt (xu §10).
//   - Learned registries (crawled, DNS, named in answers) are referred to;
//     they are federated to only with Config.FederateLearned or a matching
//     Config.FederateHosts pattern.
//   - Every upstream, configured or learned, is dialled through the network
//     guard (crawler/netguard) on every hop: non-public addresses only
//     when Config.AllowPrivate or Config.AllowCIDRs opens them.
//   - Referrals are ranked by query terms found in a registry's name (3),
//     tags (2), description or host (1); ties keep configured ones first.
//   - Page tokens carry every source's position (its own token and an
//     offset into that page) and the last 100 identifiers shown, signed with
//     HMAC-SHA256 and bound to the query. A source that failed on a page is
//     not continued on later pages.
package federation

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Mode is the client's federation choice.
type Mode string

// Federation modes (§8). ParseMode also accepts "referral".
const (
	ModeAuto      Mode = "auto"
	ModeReferrals Mode = "referrals"
	ModeNone      Mode = "none"
)

// Query is a search as this registry understood it; it is what is forwarded
// to upstream registries.
type Query struct {
	Text       string              `json:"text"`
	Type       []string            `json:"type,omitempty"`
	Compliance []string            `json:"compliance,omitempty"`
	Publisher  []string            `json:"publisher,omitempty"`
	Filter     map[string][]string `json:"filter,omitempty"` // other ARD-style filters (tags, ...): OR within a key, AND across keys
	// Trust and Health, when set, are the trust levels and health statuses
	// a result may have (one of them). They are forwarded as the filters
	// trust.level and health, and every upstream result is held to them by
	// what it reports (Reported): an upstream that ignores the filter does
	// not get past it. An empty value matches nothing.
	Trust  []string `json:"trust,omitempty"`
	Health []string `json:"health,omitempty"`
	// Verified keeps only results from a verified publisher (verifiedOnly):
	// forwarded as the filter verifiedOnly, and held to the
	// publisherVerified an upstream result reports (relayed from configured
	// upstreams only).
	Verified bool `json:"verified,omitempty"`
	PageSize int  `json:"pageSize"`
}

// Hit is one search result from any source.
type Hit struct {
	// Identifier is the entry's identifier (the dedupe key).
	Identifier string
	// Entry is the result object as it will be returned to the client: the
	// published entry fields plus "score" and "source" and our extensions.
	Entry map[string]json.RawMessage
	// Score is the source's score (0-100 locally; anything upstream).
	Score float64
	// Source is the registry that supplied the hit (its public URL or label).
	Source string
	// Verified reports a verified publisher.
	Verified bool
	// Local is true for hits from this registry's own index.
	Local bool
	// OriginService and ReceivedAt are provenance for upstream hits.
	OriginService string
	ReceivedAt    time.Time
}

// LocalSearch runs the query against this registry's own index. pageToken is
// the local part of a continuation ("" for the first page); next is "" when
// there are no more local results.
type LocalSearch func(ctx context.Context, q Query, pageToken string) (hits []Hit, next string, err error)

// Outcome of one upstream in one search.
type Outcome struct {
	Registry  string `json:"registry"`          // search endpoint URL
	Status    string `json:"status"`            // ok, timeout, error, skipped
	Results   int    `json:"results"`           // valid hits received
	Dropped   int    `json:"dropped,omitempty"` // results left out as invalid
	LatencyMS int64  `json:"latencyMs"`         // time spent
	Error     string `json:"error,omitempty"`   // short reason for error/skipped
}

// Response is a federated answer.
type Response struct {
	Results   []Hit
	Referrals []json.RawMessage // catalog entries of type application/ai-registry
	Upstreams []Outcome
	PageToken string // opaque continuation for every source, "" when done
}

// Searcher is what searchapi needs from federation.
type Searcher interface {
	// Search answers q in the given mode (never ModeNone: searchapi answers that
	// alone). via lists the registries the request already passed through
	// (from the incoming Via header, raw elements or names), for loop
	// detection. local is called once, not at all when pageToken says the
	// local index is exhausted. Upstream failures never fail the search;
	// only an error of local does. A pageToken not issued for this query by
	// this registry is ErrInvalidPageToken.
	Search(ctx context.Context, mode Mode, q Query, pageToken string, via []string, local LocalSearch) (Response, error)
}

// ErrInvalidMode is returned by ParseMode for a federation value other than
// auto, referrals (or referral) and none; searchapi answers it with 400.
var ErrInvalidMode = errors.New("federation must be auto, referrals or none")

// ErrInvalidPageToken is returned by Search when pageToken was not issued by
// this registry (bad signature, wrong key, another query, garbled);
// searchapi answers it with 400 invalid_request.
var ErrInvalidPageToken = errors.New("invalid page token")

// ParseMode parses the client's federation value: "" means auto, "referral"
// is accepted for referrals, matching is case-insensitive. Anything else is
// ErrInvalidMode.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return ModeAuto, nil
	case "referrals", "referral":
		return ModeReferrals, nil
	case "none":
		return ModeNone, nil
	}
	return "", ErrInvalidMode
}

// Outcome statuses.
const (
	StatusOK      = "ok"
	StatusTimeout = "timeout"
	StatusError   = "error"
	StatusSkipped = "skipped"
)
