// Package indexnow is the IndexNow endpoint of Agent Finder: a publisher
// pings GET /indexnow?url=...&key=... or POST /indexnow with
// {host, key, keyLocation, urlList} when a catalog changed, proves it
// controls the host with a key file (https://<host>/<key>.txt, or
// keyLocation on the same host), and the named catalogs are crawled at once
// instead of at the next scheduled visit.
//
// Answers follow the protocol as search engines implement it: 200 when the
// ping was accepted and its crawl queued, 400 for a malformed request, 403
// when the key file does not verify (or the host is not one this registry
// crawls), 422 when a URL or keyLocation is not on the host or the key does
// not match the protocol's format, 429 (with Retry-After) beyond a host's
// crawl budget, or its budget of key file fetches.
//
// The package owns the protocol, the verified-key cache, the per-host budget
// and the metrics. Fetching the key file (it needs the network and the
// crawler's rules) and starting crawls are the caller's, through the
// KeyFetcher and Crawls interfaces; cmd/agentfinder adapts the crawler and
// the scheduler.
package indexnow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// ErrOtherHost is what a KeyFetcher's error wraps when a redirect left the
// key file's host: a file elsewhere proves nothing about this host.
var ErrOtherHost = errors.New("redirect to another host")

// KeyFetcher fetches a key file with the crawler's rules (robots.txt, size
// and time limits, the network guard), failing (with ErrOtherHost) when a
// redirect leaves the file's host. Any answer but 200 OK is an error.
type KeyFetcher interface {
	FetchOwnershipFile(ctx context.Context, url string) ([]byte, error)
}

// Crawls is the crawl side of a verified ping.
type Crawls interface {
	// Admit reports whether a ping for urls of host may lead to a crawl:
	// the host (or one of the URLs) is already crawled, or unknown hosts
	// may become seeds. It is asked once the key file has verified the
	// ping (so only the host's owner learns the answer).
	Admit(host string, urls []string) bool
	// Crawl crawls what the ping named, ahead of the schedule: the
	// catalogs among urls, or the host when a URL is not a known catalog.
	// Repeated requests while a crawl waits or runs fold together.
	Crawl(host string, urls []string) error
}

// Defaults of Config.
const (
	// DefaultPerMinute is a host's crawl budget: pings per minute that
	// lead to a crawl; more get 429.
	DefaultPerMinute = 3
	// DefaultVerifiedFor is how long a verified key is trusted before its
	// file is fetched again.
	DefaultVerifiedFor = time.Hour
	// DefaultFailedFor is how long a key that did not verify is refused
	// without fetching its file again.
	DefaultFailedFor = time.Minute
	// MaxURLs is the most URLs one POST may list (the protocol's limit).
	MaxURLs = 10000
)

// Config configures a Handler. Keys and Crawls are required.
type Config struct {
	Keys   KeyFetcher
	Crawls Crawls
	// PerMinute is each host's budget of accepted pings per minute
	// (default DefaultPerMinute); Burst is how many may come at once
	// (default PerMinute, at least 1). Key file fetches (a key whose
	// verdict is not cached) have a budget of the same size per host.
	PerMinute float64
	Burst     int
	// VerifiedFor and FailedFor bound how long a key's verdict is cached
	// (defaults DefaultVerifiedFor, DefaultFailedFor).
	VerifiedFor, FailedFor time.Duration
	// MaxHosts bounds the hosts whose keys, budgets and pending pings are
	// remembered (least recently used forgotten first); default 10000.
	MaxHosts int
	// FetchTimeout bounds one key file fetch; default 10s.
	FetchTimeout time.Duration
	// Metrics, when set, receives agentfinder_indexnow_*; nil records nothing.
	Metrics prometheus.Registerer
	Logger  *slog.Logger
	Now     func() time.Time
}

// Handler serves /indexnow. Create it with New.
type Handler struct {
	cfg     Config
	log     *slog.Logger
	keys    *lru.Cache[keyID, verdict]
	budgets *hostBudgets                  // crawls a host's pings start
	fetches *hostBudgets                  // a host's key files fetched (verdicts not cached)
	pending *lru.Cache[string, time.Time] // host -> first ping not yet searchable
	m       *metrics
}

// New checks cfg and returns a Handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Keys == nil || cfg.Crawls == nil {
		return nil, errors.New("indexnow: Keys and Crawls are required")
	}
	if cfg.PerMinute < 0 {
		return nil, fmt.Errorf("indexnow: PerMinute %v: want a positive budget", cfg.PerMinute)
	}
	if cfg.PerMinute == 0 {
		cfg.PerMinute = DefaultPerMinute
	}
	if cfg.Burst <= 0 {
		cfg.Burst = max(1, int(cfg.PerMinute))
	}
	if cfg.VerifiedFor <= 0 {
		cfg.VerifiedFor = DefaultVerifiedFor
	}
	if cfg.FailedFor <= 0 {
		cfg.FailedFor = DefaultFailedFor
	}
	if cfg.MaxHosts <= 0 {
		cfg.MaxHosts = 10000
	}
	if cfg.FetchTimeout <= 0 {
		cfg.FetchTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	keys, err := lru.New[keyID, verdict](cfg.MaxHosts)
	if err != nil {
		return nil, err
	}
	pending, err := lru.New[string, time.Time](cfg.MaxHosts)
	if err != nil {
		return nil, err
	}
	budgets, err := newHostBudgets(cfg.PerMinute, cfg.Burst, cfg.MaxHosts)
	if err != nil {
		return nil, err
	}
	fetches, err := newHostBudgets(cfg.PerMinute, cfg.Burst, cfg.MaxHosts)
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Metrics)
	if err != nil {
		return nil, err
	}
	return &Handler{cfg: cfg, log: cfg.Logger.With("component", "indexnow"), keys: keys,
		budgets: budgets, fetches: fetches, pending: pending, m: m}, nil
}

// ping is one request, in either form.
type ping struct {
	Host        string   `json:"host"`
	Key         string   `json:"key"`
	KeyLocation string   `json:"keyLocation"`
	URLList     []string `json:"urlList"`
}

// keyFormat is the protocol's key: 8 to 128 characters of a-z, A-Z, 0-9, "-".
var keyFormat = regexp.MustCompile(`^[a-zA-Z0-9-]{8,128}$`)

// check applies the protocol's rules to p: the key's format, every URL
// (and keyLocation) on p.Host. It returns the rejection, or nil, and the
// host name in lower case.
func (p *ping) check() *rejection {
	if p.Key == "" || p.Host == "" || len(p.URLList) == 0 {
		return reject(400, reasonBadRequest, "host, key and at least one URL are required")
	}
	if len(p.URLList) > MaxURLs {
		return reject(400, reasonBadRequest, fmt.Sprintf("at most %d URLs per request", MaxURLs))
	}
	if !keyFormat.MatchString(p.Key) {
		return reject(422, reasonKeyFormat, "the key must be 8 to 128 characters of a-z, A-Z, 0-9 and -")
	}
	p.Host = strings.ToLower(strings.TrimSuffix(p.Host, "."))
	if strings.ContainsAny(p.Host, "/?#@ ") {
		return reject(400, reasonBadRequest, "host must be a host name")
	}
	for _, raw := range p.URLList {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return reject(400, reasonBadRequest, fmt.Sprintf("not an absolute http(s) URL: %q", raw))
		}
		if !sameHost(u, p.Host) {
			return reject(422, reasonOtherHost, fmt.Sprintf("URL %s is not on host %s", raw, p.Host))
		}
	}
	if p.KeyLocation != "" {
		u, err := url.Parse(p.KeyLocation)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return reject(400, reasonBadRequest, "keyLocation must be an absolute http(s) URL")
		}
		if !sameHost(u, p.Host) {
			return reject(422, reasonOtherHost, "keyLocation must be on host "+p.Host)
		}
	}
	return nil
}

// sameHost compares u's host with host (a name, optionally with a port):
// the names case-insensitively and, when host names a port, the port.
func sameHost(u *url.URL, host string) bool {
	name, port := host, ""
	if h, p, ok := strings.Cut(host, ":"); ok && !strings.Contains(p, ":") {
		name, port = h, p
	}
	if !strings.EqualFold(strings.TrimSuffix(u.Hostname(), "."), name) {
		return false
	}
	return port == "" || u.Port() == port
}

// keyURL is where p's key file is: keyLocation, or /<key>.txt at the root
// of the host over HTTPS.
func (p *ping) keyURL() string {
	if p.KeyLocation != "" {
		return p.KeyLocation
	}
	return "https://" + p.Host + "/" + p.Key + ".txt"
}

// rejection is a refused ping: its status, metrics reason and message.
type rejection struct {
	status     int
	reason     string
	msg        string
	retryAfter time.Duration
}

func reject(status int, reason, msg string) *rejection {
	return &rejection{status: status, reason: reason, msg: msg}
}

// Rejection reasons, the label of agentfinder_indexnow_rejected_total.
const (
	reasonBadRequest  = "bad_request"
	reasonKeyFormat   = "key_format"
	reasonOtherHost   = "url_not_on_host"
	reasonUnknownHost = "unknown_host"
	reasonKeyNotFound = "key_not_found"
	reasonKeyMismatch = "key_mismatch"
	reasonRedirect    = "key_redirect_other_host"
	reasonCrawl       = "crawl_unavailable"
)
