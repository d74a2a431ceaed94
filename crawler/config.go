package crawler

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"path"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultUserAgent identifies the crawler; robots.txt groups are matched
// against RobotsAgent.
const DefaultUserAgent = "AgentFinderBot/dev (+https://github.com/agentfinder/agentfinder)"

// RobotsAgent is the product token robots.txt groups are matched against.
const RobotsAgent = "AgentFinderBot"

// Config tunes a Crawler. The zero value is a polite public-web crawler:
// system resolver, private addresses refused, robots.txt honoured.
type Config struct {
	// UserAgent sent with every request; DefaultUserAgent when empty.
	// Use "AgentFinderBot/<version> (+<public url>)".
	UserAgent string

	// DNSServer ("host:port") answers every lookup: SVCB/TXT discovery and
	// the A/AAAA lookups of the dialer. Empty means the system resolver.
	DNSServer string
	// PortMap rewrites destination ports in the dialer ("443" -> "8443"),
	// after URL handling, so https://host/ reaches a server on another port
	// with the right SNI and Host. A testing and enterprise (port-forwarding)
	// option; empty for the public web.
	PortMap map[string]string

	// AllowPrivate opens loopback, private (RFC 1918, ULA), link-local and
	// other non-public unicast addresses to the dialer. Multicast,
	// unspecified and broadcast addresses stay refused (see netguard).
	AllowPrivate bool
	// AllowCIDRs opens these prefixes whatever their kind; an IPv6 address
	// embedding an IPv4 one (NAT64, 6to4, ...) also needs that IPv4 opened.
	AllowCIDRs []netip.Prefix

	// CAFile is a PEM bundle of extra trusted roots, added to the system pool.
	CAFile string
	// HostHeaders adds request headers per host. Keys are path.Match
	// patterns against the host name without port ("catalog.corp.test",
	// "*.corp.test"). Headers are sent only to matching hosts, so an
	// Authorization header never follows a redirect elsewhere.
	HostHeaders map[string]http.Header
	// IncludeHosts, when non-empty, restricts fetching to host names
	// matching one of these path.Match patterns. ExcludeHosts always wins.
	IncludeHosts []string
	// ExcludeHosts lists path.Match host patterns never fetched.
	ExcludeHosts []string

	// MaxDepth bounds following of nested catalogs and collections: a seed
	// catalog has depth 0. Default 4.
	MaxDepth int
	// MaxCatalogsPerSeed caps the catalogs fetched from one seed. Default 1000.
	MaxCatalogsPerSeed int
	// Concurrency bounds the tasks in flight for the whole Crawler (across
	// concurrent Crawl calls) and the workers of one crawl. A task is one
	// catalog (its fetch, then up to 4 artifact fetches at once) or one
	// domain's discovery (robots.txt then the home page, beside its DNS
	// queries). Default 16.
	Concurrency int
	// PerHostConcurrency bounds requests in flight per host (colly
	// LimitRule). Default 2; negative means unlimited.
	PerHostConcurrency int
	// Delay is the minimum pause between requests to one host; a site's
	// robots.txt Crawl-delay raises it (max of both), capped by MaxCrawlDelay.
	Delay time.Duration
	// MaxCrawlDelay caps a site's Crawl-delay. Default 10s.
	MaxCrawlDelay time.Duration
	// Timeout bounds one HTTP request, body included. Default 15s.
	Timeout time.Duration
	// MaxBodySize bounds a response body. Default 4 MiB.
	MaxBodySize int64
	// MaxRedirects bounds a redirect chain. Default 5.
	MaxRedirects int
	// MaxAttempts bounds attempts per request for timeouts, 429 and 5xx. Default 3.
	MaxAttempts int
	// RetryBackoff is the first retry's base delay, doubled per attempt,
	// with jitter. Default 500ms.
	RetryBackoff time.Duration
	// MaxRetryAfter caps a server's Retry-After and any backoff, so one
	// endpoint holds a crawl for at most (MaxAttempts-1)*MaxRetryAfter
	// beyond its requests. Default 10s.
	MaxRetryAfter time.Duration

	// DisableEnrichment turns off fetching the artifacts (A2A cards, MCP
	// server.json, ...) that catalog entries point to.
	DisableEnrichment bool
	// DisableDNS turns off SVCB/TXT discovery.
	DisableDNS bool
	// DisableVerification turns off checking signatures (and fetching the
	// signers' DID documents), artifact and attestation digests: records
	// then say only whether their publisher's domain served them.
	DisableVerification bool
	// DIDCacheTTL is how long a fetched DID document's keys are used
	// before it is fetched again. Default 1h.
	DIDCacheTTL time.Duration
	// MaxAttestations bounds the attestation documents fetched per
	// catalog to check their digests. Default 16.
	MaxAttestations int

	// RegistryPageSize is the limit a walk of an MCP registry asks each
	// list page for. Default 100 (the official registry's largest).
	RegistryPageSize int
	// MaxRegistryPages caps the list pages one walk of an MCP registry
	// fetches; a walk that reaches it resumes where it stopped on the next
	// run. Default 1000.
	MaxRegistryPages int
	// MaxRegistryServers caps the server versions one walk reads; as for
	// pages, the next run resumes. Default 100000.
	MaxRegistryServers int
	// RegistryFullEvery is how old the last full walk of an MCP registry
	// may be before a run walks it in full again instead of asking for
	// changes: the full walk hands every record on again, so none ages
	// into stale in the index (ingest's StaleAfter, 7 days by default,
	// must be longer). Default 24h.
	RegistryFullEvery time.Duration

	// Now is the clock; time.Now when nil.
	Now func() time.Time

	// Metrics, when set, receives the crawler's Prometheus instruments
	// (agentfinder_crawler_*); nil records nothing. The caller owns the
	// registry; New fails if the names are taken there.
	Metrics prometheus.Registerer
}

func (c Config) withDefaults() Config {
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.MaxDepth <= 0 {
		c.MaxDepth = 4
	}
	if c.MaxCatalogsPerSeed <= 0 {
		c.MaxCatalogsPerSeed = 1000
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	if c.PerHostConcurrency == 0 {
		c.PerHostConcurrency = 2
	}
	if c.MaxCrawlDelay <= 0 {
		c.MaxCrawlDelay = 10 * time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = 15 * time.Second
	}
	if c.MaxBodySize <= 0 {
		c.MaxBodySize = 4 << 20
	}
	if c.MaxRedirects <= 0 {
		c.MaxRedirects = 5
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 3
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = 500 * time.Millisecond
	}
	if c.MaxRetryAfter <= 0 {
		c.MaxRetryAfter = 10 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.RegistryPageSize <= 0 {
		c.RegistryPageSize = 100
	}
	if c.MaxRegistryPages <= 0 {
		c.MaxRegistryPages = 1000
	}
	if c.MaxRegistryServers <= 0 {
		c.MaxRegistryServers = 100000
	}
	if c.RegistryFullEvery <= 0 {
		c.RegistryFullEvery = 24 * time.Hour
	}
	if c.DIDCacheTTL <= 0 {
		c.DIDCacheTTL = time.Hour
	}
	if c.MaxAttestations <= 0 {
		c.MaxAttestations = 16
	}
	return c
}

func (c Config) validate() error {
	for _, pats := range [][]string{c.IncludeHosts, c.ExcludeHosts} {
		for _, p := range pats {
			if _, err := path.Match(p, ""); err != nil {
				return fmt.Errorf("host pattern %q: %w", p, err)
			}
		}
	}
	for p := range c.HostHeaders {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("header host pattern %q: %w", p, err)
		}
	}
	return nil
}

// hostAllowed applies IncludeHosts and ExcludeHosts to a host name.
func (c Config) hostAllowed(host string) bool {
	host = strings.ToLower(host)
	for _, p := range c.ExcludeHosts {
		if ok, _ := path.Match(strings.ToLower(p), host); ok {
			return false
		}
	}
	if len(c.IncludeHosts) == 0 {
		return true
	}
	for _, p := range c.IncludeHosts {
		if ok, _ := path.Match(strings.ToLower(p), host); ok {
			return true
		}
	}
	return false
}

// headersFor returns the configured extra headers for a host name.
func (c Config) headersFor(host string) http.Header {
	var h http.Header
	host = strings.ToLower(host)
	for p, hdr := range c.HostHeaders {
		if ok, _ := path.Match(strings.ToLower(p), host); !ok {
			continue
		}
		if h == nil {
			h = http.Header{}
		}
		for k, vs := range hdr {
			for _, v := range vs {
				h.Add(k, v)
			}
		}
	}
	return h
}

// ParseHostHeaders reads a per-host header file:
//
//	{"hosts": {"catalog.corp.test": {"Authorization": "Bearer x"}}}
//
// Keys of "hosts" are path.Match patterns; values map header names to a
// string or a list of strings.
func ParseHostHeaders(data []byte) (map[string]http.Header, error) {
	var doc struct {
		Hosts map[string]map[string]json.RawMessage `json:"hosts"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse host headers: %w", err)
	}
	out := make(map[string]http.Header, len(doc.Hosts))
	for host, hdrs := range doc.Hosts {
		if _, err := path.Match(host, ""); err != nil {
			return nil, fmt.Errorf("parse host headers: pattern %q: %w", host, err)
		}
		h := http.Header{}
		for name, raw := range hdrs {
			var one string
			if err := json.Unmarshal(raw, &one); err == nil {
				h.Add(name, one)
				continue
			}
			var many []string
			if err := json.Unmarshal(raw, &many); err != nil {
				return nil, fmt.Errorf("parse host headers: %s %s: want a string or a list of strings", host, name)
			}
			for _, v := range many {
				h.Add(name, v)
			}
		}
		out[host] = h
	}
	return out, nil
}
