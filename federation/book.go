package federation

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/agentfinder/agentfinder/crawler/netguard"
	"github.com/agentfinder/agentfinder/normalize"
)

// How a registry was learned.
const (
	LearnedConfigured = "configured" // --upstream or the upstreams file: trusted
	LearnedCrawled    = "crawled"    // an application/ai-registry(+json) catalog entry
	LearnedDNS        = "dns"        // a _search._agents.<domain> record
	LearnedUpstream   = "upstream"   // named in an upstream's answer (per search, not kept in the book)
)

// ReferralType is the type of referral entries (§7.1 example).
const ReferralType = "application/ai-registry"

// Registry is one registry this registry knows.
type Registry struct {
	Endpoint    string   `json:"endpoint"`              // search endpoint URL (§7: the entry URL if it ends in /search, else base URL + "search")
	Identifier  string   `json:"identifier"`            // catalog identifier (synthesized for configured and DNS registries)
	DisplayName string   `json:"displayName"`           // human-readable name
	Description string   `json:"description,omitempty"` // may be empty
	Tags        []string `json:"tags,omitempty"`        // may be empty
	Learned     string   `json:"learned"`               // Learned* constant
	// ForwardAuth: the caller's credential is sent to it (configured only).
	ForwardAuth bool `json:"-"`
}

// Trusted reports whether the registry was configured by the operator
// (publisher verification claims honored; the network guard applies to all).
func (r Registry) Trusted() bool { return r.Learned == LearnedConfigured }

// Book is the registry book: the registries known and how each was learned.
// It is safe for concurrent use.
type Book struct {
	guard *netguard.Guard

	mu   sync.RWMutex
	regs map[string]*Registry // by EndpointKey
	seq  []string             // keys in insertion order
}

// NewBook returns an empty book whose registries must name addresses guard
// allows (nil: the default guard, public addresses only). The check here
// covers literal addresses, so a bad entry is refused when it is learned;
// the federator's dialer checks every address actually connected to.
func NewBook(guard *netguard.Guard) *Book {
	if guard == nil {
		guard = netguard.New(netguard.Config{})
	}
	return &Book{guard: guard, regs: map[string]*Registry{}}
}

// errNotRegistryURL reports a registry URL that cannot be used.
var errNotRegistryURL = errors.New("not an http(s) registry URL")

// SearchEndpoint returns the search endpoint for a registry URL (§7): the
// URL itself when its path ends in /search, else the URL joined with
// "search". Only http and https URLs without user info are accepted.
func SearchEndpoint(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("registry url %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Opaque != "" {
		return "", fmt.Errorf("registry url %q: %w", raw, errNotRegistryURL)
	}
	u.Fragment, u.RawFragment = "", ""
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	if strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/search") {
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawPath = ""
		return u.String(), nil
	}
	return u.JoinPath("search").String(), nil
}

// add inserts or updates r. A configured registry is never downgraded by a
// learned one, but learned metadata fills what configuration left empty.
func (b *Book) add(r Registry) {
	k := EndpointKey(r.Endpoint)
	b.mu.Lock()
	defer b.mu.Unlock()
	old, ok := b.regs[k]
	if !ok {
		b.regs[k] = &r
		b.seq = append(b.seq, k)
		return
	}
	if old.Learned == LearnedConfigured && r.Learned != LearnedConfigured {
		if old.Description == "" {
			old.Description = r.Description
		}
		if len(old.Tags) == 0 {
			old.Tags = r.Tags
		}
		if strings.HasPrefix(old.Identifier, "urn:ai:"+syntheticPublisher) || old.DisplayName == hostOf(old.Endpoint) {
			old.Identifier, old.DisplayName = r.Identifier, r.DisplayName
		}
		return
	}
	*old = r
}

// AddConfigured adds a trusted, operator-configured upstream (as
// Config.Upstreams does): federated to in auto mode. A literal address the
// guard refuses is an error naming it.
func (b *Book) AddConfigured(raw string) error {
	return b.AddUpstream(Upstream{URL: raw})
}

// AddUpstream is AddConfigured for an upstream that may receive the
// caller's credential (u.ForwardAuth); re-adding an upstream updates it.
func (b *Book) AddUpstream(u Upstream) error {
	raw := u.URL
	ep, err := SearchEndpoint(raw)
	if err != nil {
		return err
	}
	if err := b.checkLiteral(ep); err != nil {
		return fmt.Errorf("upstream %q: %w (open it with an allowed CIDR)", raw, err)
	}
	b.add(Registry{
		Endpoint:    ep,
		Identifier:  syntheticIdentifier(ep, "registry"),
		DisplayName: hostOf(ep),
		Learned:     LearnedConfigured,
		ForwardAuth: u.ForwardAuth,
	})
	return nil
}

// AddFromRecords adds the registries among crawled records: entries of type
// application/ai-registry(+json) with a url. Entries whose URL is not http(s)
// or names a literal private address (unless allowed) are skipped. It
// returns how many were added or refreshed.
func (b *Book) AddFromRecords(records []normalize.Record) int {
	n := 0
	for _, rec := range records {
		if !isRegistryType(rec.Type) || rec.URL == "" {
			continue
		}
		ep, err := b.learnedEndpoint(rec.URL)
		if err != nil {
			continue
		}
		name := rec.DisplayName
		if name == "" {
			name = hostOf(ep)
		}
		b.add(Registry{
			Endpoint:    ep,
			Identifier:  rec.Identifier,
			DisplayName: name,
			Description: rec.Description,
			Tags:        slices.Clone(rec.Tags),
			Learned:     LearnedCrawled,
		})
		n++
	}
	return n
}

// AddDNS adds the registry a _search._agents.<domain> record named. endpoint
// is the URL the crawler derived from the record.
func (b *Book) AddDNS(domain, endpoint string) error {
	ep, err := b.learnedEndpoint(endpoint)
	if err != nil {
		return err
	}
	domain = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(domain), "."))
	id := syntheticIdentifier(ep, "dns")
	if isDomain(domain) {
		id = "urn:ai:" + domain + ":registry:dns"
	}
	b.add(Registry{
		Endpoint:    ep,
		Identifier:  id,
		DisplayName: domain,
		Description: "Agent registry announced in DNS by " + domain,
		Learned:     LearnedDNS,
	})
	return nil
}

// learnedEndpoint applies the static part of the network guard to a learned
// registry URL (the dialer checks the addresses actually connected to).
func (b *Book) learnedEndpoint(raw string) (string, error) {
	ep, err := SearchEndpoint(raw)
	if err != nil {
		return "", err
	}
	if err := b.checkLiteral(ep); err != nil {
		return "", fmt.Errorf("registry url %q: %w", raw, err)
	}
	return ep, nil
}

// checkLiteral refuses an endpoint whose host is a literal address the
// guard refuses, or a localhost name the guard would refuse once resolved.
func (b *Book) checkLiteral(ep string) error {
	u, err := url.Parse(ep)
	if err != nil {
		return err
	}
	h := strings.ToLower(u.Hostname())
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return b.guard.Check(netip.IPv6Loopback())
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return b.guard.Check(a)
	}
	return nil
}

// Registries returns a snapshot of the book in insertion order.
func (b *Book) Registries() []Registry {
	b.mu.RLock()
	defer b.mu.RUnlock()
	out := make([]Registry, 0, len(b.seq))
	for _, k := range b.seq {
		out = append(out, *b.regs[k])
	}
	return out
}

// Len returns the number of registries in the book.
func (b *Book) Len() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.seq)
}

// isRegistryType reports an application/ai-registry type, with or without +json.
func isRegistryType(t string) bool {
	return strings.TrimSuffix(normalize.CanonicalType(t), "+json") == "application/ai-registry"
}

// syntheticPublisher is the publisher of identifiers made up for registries
// that have none (configured URLs, IP hosts): a reserved TLD, never real.
const syntheticPublisher = "registry.invalid"

// syntheticIdentifier makes a stable identifier for a registry known only by
// its endpoint: urn:ai:<host domain>:registry:<kind>-<hash>, or under
// registry.invalid for hosts that are not domain names.
func syntheticIdentifier(endpoint, kind string) string {
	sum := sha256.Sum256([]byte(EndpointKey(endpoint)))
	h := hex.EncodeToString(sum[:4])
	host := strings.ToLower(hostOf(endpoint))
	if hn, _, err := net.SplitHostPort(host); err == nil {
		host = hn
	}
	if isDomain(host) {
		return "urn:ai:" + host + ":registry:" + kind + "-" + h
	}
	return "urn:ai:" + syntheticPublisher + ":" + kind + "-" + h
}

func hostOf(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpoint
	}
	return u.Host
}

// Referral is the catalog entry for a registry (§7.1 "referrals").
func (r Registry) Referral() json.RawMessage {
	v := struct {
		Identifier  string `json:"identifier"`
		DisplayName string `json:"displayName"`
		Type        string `json:"type"`
		URL         string `json:"url"`
		Description string `json:"description,omitempty"`
	}{r.Identifier, r.DisplayName, ReferralType, r.Endpoint, r.Description}
	b, _ := json.Marshal(v)
	return b
}

// Rank orders registries for a query, most relevant first: each query term
// found in the display name scores 3, in a tag 2, in the description or the
// host name 1. Ties keep configured registries first, then book order.
func Rank(regs []Registry, text string) []Registry {
	terms := terms(text)
	type scored struct {
		r     Registry
		score int
		i     int
	}
	s := make([]scored, len(regs))
	for i, r := range regs {
		s[i] = scored{r: r, i: i, score: relevance(r, terms)}
	}
	sort.SliceStable(s, func(a, b int) bool {
		if s[a].score != s[b].score {
			return s[a].score > s[b].score
		}
		ca, cb := s[a].r.Trusted(), s[b].r.Trusted()
		if ca != cb {
			return ca
		}
		return s[a].i < s[b].i
	})
	out := make([]Registry, len(s))
	for i := range s {
		out[i] = s[i].r
	}
	return out
}

func relevance(r Registry, terms []string) int {
	if len(terms) == 0 {
		return 0
	}
	name := setOf(tokens(r.DisplayName))
	desc := setOf(tokens(r.Description))
	host := setOf(tokens(hostOf(r.Endpoint)))
	tags := map[string]bool{}
	for _, t := range r.Tags {
		for _, w := range tokens(t) {
			tags[w] = true
		}
	}
	score := 0
	for _, t := range terms {
		if name[t] {
			score += 3
		}
		if tags[t] {
			score += 2
		}
		if desc[t] || host[t] {
			score++
		}
	}
	return score
}

// terms returns the distinct words of a query that can match a registry:
// no stop words, no single characters, plurals folded (see tokens).
func terms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range tokens(text) {
		if normalize.IsStopWord(w) || len(w) < 2 || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// tokens splits s into words (normalize.Words); a trailing plural "s" is
// dropped so "registries"/"registry" and "tools"/"tool" meet.
func tokens(s string) []string {
	f := normalize.Words(s)
	for i, w := range f {
		switch {
		case strings.HasSuffix(w, "ies") && len(w) > 4:
			f[i] = w[:len(w)-3] + "y"
		case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 3:
			f[i] = w[:len(w)-1]
		}
	}
	return f
}

func setOf(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// allowedHost reports whether host matches one of the patterns.
func allowedHost(host string, patterns []string) bool {
	host = strings.ToLower(host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToLower(p), host); ok {
			return true
		}
	}
	return false
}

// isDomain reports a syntactically valid, lower-case domain name with at
// least two labels and a non-numeric top-level label (so not an IP address),
// as normalize checks publisher domains. s must already be in the form
// normalize returns (lower case, no trailing dot).
func isDomain(s string) bool {
	d, ok := normalize.IdentityDomain(s)
	return ok && d == s
}
