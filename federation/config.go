package federation

import (
	"bufio"
	"crypto/x509"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"
)

// Defaults for zero Config fields.
const (
	DefaultBudget          = 1500 * time.Millisecond
	DefaultUpstreamTimeout = time.Second
	DefaultMaxHops         = 2
	DefaultConcurrency     = 8
	DefaultMaxReferrals    = 10
	DefaultBreakerFailures = 3
	DefaultBreakerCooldown = 30 * time.Second
	// MaxResponseBytes is the largest upstream response body read; a larger
	// one is an error for that upstream.
	MaxResponseBytes = 1 << 20
)

// Config configures a Federator. The zero value is usable: no upstreams, a
// random name and token key, the defaults above.
type Config struct {
	// Name identifies this registry in Via headers (its public base URL is a
	// good choice). Loop detection relies on it being unique among the
	// registries that federate to each other. Empty means a random name.
	Name string

	// Upstreams are configured registries (search endpoints or base URLs).
	// They are trusted (their publisherVerified claims are relayed, they are
	// always federated to in auto mode) but, like learned registries, only
	// reached at addresses the network guard allows: open internal ones
	// with AllowCIDRs or AllowPrivate.
	Upstreams []string
	// ForwardAuthTo lists the upstreams (as written in Upstreams) that
	// receive the caller's verified Authorization header in auto mode
	// (WithCredential). No other registry, and never a learned one, does.
	ForwardAuthTo []string

	// FederateLearned lets auto mode fan out to registries learned from
	// crawled catalogs, DNS and upstream answers. By default they are only
	// referred to.
	FederateLearned bool
	// FederateHosts allows fan-out to learned registries whose host matches
	// one of these patterns (path.Match syntax, e.g. "*.example.com").
	FederateHosts []string
	// AllowPrivate lets upstreams, configured and learned, resolve to
	// loopback, private, link-local and other non-public unicast addresses
	// (intranets). Multicast, unspecified and broadcast stay refused.
	AllowPrivate bool
	// AllowCIDRs opens these prefixes to upstreams, configured and learned
	// (an enterprise's internal registries); every other non-public address
	// stays refused, on every redirect hop.
	AllowCIDRs []netip.Prefix

	// Budget bounds the whole fan-out of one search; what has not arrived
	// by then is reported as a timeout. Zero means DefaultBudget.
	Budget time.Duration
	// UpstreamTimeout bounds one upstream call (within Budget). Zero means
	// DefaultUpstreamTimeout.
	UpstreamTimeout time.Duration
	// Concurrency bounds the upstream calls in flight per search. Zero means
	// DefaultConcurrency.
	Concurrency int
	// MaxHops bounds registry-to-registry chains: a request whose Via already
	// names MaxHops registries is answered locally only, and registries named
	// in upstream answers are followed only while the chain stays within it.
	// Zero means DefaultMaxHops.
	MaxHops int
	// ForwardAuto sends federation "auto" upstream while the chain stays
	// within MaxHops; by default upstream requests say "none".
	ForwardAuto bool

	// BreakerFailures consecutive failures open an upstream's circuit; it is
	// skipped until BreakerCooldown has passed, then one call probes it.
	BreakerFailures int
	BreakerCooldown time.Duration

	// MaxReferrals bounds the referrals returned. Zero means DefaultMaxReferrals.
	MaxReferrals int

	// TokenKey signs page tokens (HMAC-SHA256). Empty means a random key:
	// tokens then only work against this process.
	TokenKey []byte

	// RootCAs, when set, replaces the system roots for upstream TLS
	// (enterprise CAs).
	RootCAs *x509.CertPool

	// Now is the clock (breaker, provenance). Nil means time.Now.
	Now func() time.Time
}

func (c *Config) setDefaults() {
	if c.Budget <= 0 {
		c.Budget = DefaultBudget
	}
	if c.UpstreamTimeout <= 0 {
		c.UpstreamTimeout = DefaultUpstreamTimeout
	}
	if c.UpstreamTimeout > c.Budget {
		c.UpstreamTimeout = c.Budget
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.MaxHops <= 0 {
		c.MaxHops = DefaultMaxHops
	}
	if c.BreakerFailures <= 0 {
		c.BreakerFailures = DefaultBreakerFailures
	}
	if c.BreakerCooldown <= 0 {
		c.BreakerCooldown = DefaultBreakerCooldown
	}
	if c.MaxReferrals <= 0 {
		c.MaxReferrals = DefaultMaxReferrals
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Upstream is one configured upstream registry.
type Upstream struct {
	URL string // search endpoint or base URL
	// ForwardAuth sends the caller's verified credential to this upstream.
	ForwardAuth bool
}

// ParseUpstream parses an upstream as written in the upstreams file or an
// --upstream value: a URL, optionally followed by "forwardAuth" (or
// "forwardAuth=true"/"forwardAuth=false").
func ParseUpstream(line string) (Upstream, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return Upstream{}, fmt.Errorf("empty upstream")
	}
	u := Upstream{URL: fields[0]}
	if _, err := SearchEndpoint(u.URL); err != nil {
		return Upstream{}, err
	}
	for _, opt := range fields[1:] {
		k, v, hasV := strings.Cut(opt, "=")
		if !strings.EqualFold(k, "forwardAuth") {
			return Upstream{}, fmt.Errorf("unknown upstream option %q (want forwardAuth)", opt)
		}
		switch {
		case !hasV || strings.EqualFold(v, "true"):
			u.ForwardAuth = true
		case strings.EqualFold(v, "false"):
			u.ForwardAuth = false
		default:
			return Upstream{}, fmt.Errorf("upstream option %q: want true or false", opt)
		}
	}
	return u, nil
}

// LoadUpstreamsFile reads upstream registries, one per line as ParseUpstream
// reads them; blank lines and lines starting with # are ignored, as is
// anything after " #".
func LoadUpstreamsFile(path string) ([]Upstream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read upstreams: %w", err)
	}
	defer f.Close()
	var out []Upstream
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		u, err := ParseUpstream(line)
		if err != nil {
			return nil, fmt.Errorf("read upstreams: %s:%d: %w", path, n, err)
		}
		out = append(out, u)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read upstreams %s: %w", path, err)
	}
	return out, nil
}
