package searchapi

import (
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"

	"github.com/agentfinder/agentfinder/searchapi/door"
)

// RateLimit configures the per-client rate limit of the API: a token bucket
// per client address. The zero value turns it off.
type RateLimit struct {
	// PerSecond is the rate at which a client's bucket refills, in requests
	// per second; 0 turns the limit off.
	PerSecond float64
	// Burst is the bucket's size: how many requests a client with a full
	// bucket may send at once. 0 means twice PerSecond (at least 1).
	Burst int
	// MaxClients bounds the buckets kept; beyond it the least recently seen
	// client is forgotten (and starts again with a full bucket). 0 means
	// 65536.
	MaxClients int
	// TrustedProxies are the peers whose X-Forwarded-For is believed: the
	// client is the right-most address in it that is not a trusted proxy.
	// From any other peer, the peer's own address is the client. The
	// per-client in-flight cap (Config.MaxPerClient) names clients the same
	// way, with or without a rate.
	TrustedProxies []netip.Prefix
}

// Defaults suited to a public engine: a person or a well-behaved program
// never notices them, a flood is cut to a trickle.
const (
	DefaultRatePerSecond = 20
	DefaultRateBurst     = 40
)

// rateExempt are the paths the rate limit never applies to: probes and
// scrapes must see the server as it is, even under a flood.
var rateExempt = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// clientLimiter keeps one token bucket per client.
type clientLimiter struct {
	every   rate.Limit
	burst   int
	who     clientNamer
	clients *lru.Cache[netip.Addr, *rate.Limiter]
	now     func() time.Time
}

// clientNamer says which client a request comes from.
type clientNamer struct {
	trusted []netip.Prefix
}

// newClientLimiter returns nil (no limit) when cfg.PerSecond is 0.
func newClientLimiter(cfg RateLimit, now func() time.Time) (*clientLimiter, error) {
	if cfg.PerSecond == 0 {
		return nil, nil
	}
	if cfg.PerSecond < 0 || math.IsNaN(cfg.PerSecond) || math.IsInf(cfg.PerSecond, 0) {
		return nil, fmt.Errorf("searchapi: RateLimit.PerSecond %v: want a positive rate or 0 (off)", cfg.PerSecond)
	}
	if cfg.Burst <= 0 {
		cfg.Burst = max(1, int(2*cfg.PerSecond))
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = 1 << 16
	}
	clients, err := lru.New[netip.Addr, *rate.Limiter](cfg.MaxClients)
	if err != nil {
		return nil, fmt.Errorf("searchapi: rate limit: %w", err)
	}
	return &clientLimiter{every: rate.Limit(cfg.PerSecond), burst: cfg.Burst, who: clientNamer{cfg.TrustedProxies}, clients: clients, now: now}, nil
}

// allow takes a token from the bucket of r's client; when there is none it
// returns false and how long until there is.
func (l *clientLimiter) allow(r *http.Request) (bool, time.Duration) {
	key := l.who.key(r)
	lim, ok := l.clients.Get(key)
	if !ok {
		fresh := rate.NewLimiter(l.every, l.burst)
		if prev, found, _ := l.clients.PeekOrAdd(key, fresh); found {
			lim = prev
		} else {
			lim = fresh
		}
	}
	now := l.now()
	if lim.AllowN(now, 1) {
		return true, 0
	}
	missing := 1 - lim.TokensAt(now)
	return false, time.Duration(missing / float64(l.every) * float64(time.Second))
}

// key is the client's bucket: clientKey of its address.
func (c clientNamer) key(r *http.Request) netip.Addr { return clientKey(c.client(r)) }

// client is r's client address: the peer, or, when the peer is a trusted
// proxy, the right-most X-Forwarded-For address that is not one (the
// left-most when all are). An address that does not parse ends the walk.
func (c clientNamer) client(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	addr := ap.Addr().Unmap()
	if !c.isTrusted(addr) {
		return addr
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		addr = a.Unmap()
		if !c.isTrusted(addr) {
			break
		}
	}
	return addr
}

func (c clientNamer) isTrusted(a netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientKey is the bucket of an address: IPv4 addresses one each, IPv6 one
// per /64 (what one subscriber usually holds).
func clientKey(a netip.Addr) netip.Addr {
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.Addr()
		}
	}
	return a
}

// rateLimited is the answer to a client over its rate.
func rateLimited(wait time.Duration) *door.APIError {
	return &door.APIError{Status: http.StatusTooManyRequests, Code: door.CodeRateLimited,
		Message: "too many requests from this client; retry after the time in Retry-After", RetryAfter: wait}
}

// inFlight caps the API requests each client has in flight, so a few
// clients with slow searches cannot take every slot. Its map holds only
// clients with requests in flight.
type inFlight struct {
	max int
	mu  sync.Mutex
	n   map[netip.Addr]int
}

// acquire takes one of key's places; false when it has none left.
func (f *inFlight) acquire(key netip.Addr) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n[key] >= f.max {
		return false
	}
	f.n[key]++
	return true
}

// release gives back a place acquire took.
func (f *inFlight) release(key netip.Addr) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n[key]--; f.n[key] <= 0 {
		delete(f.n, key)
	}
}

// errRateLimited answers a request when every slot is taken.
var errRateLimited = &door.APIError{Status: http.StatusTooManyRequests, Code: door.CodeRateLimited, Message: "too many concurrent requests; retry shortly"}

// errClientBusy answers a client that has MaxPerClient requests in flight.
var errClientBusy = &door.APIError{Status: http.StatusTooManyRequests, Code: door.CodeRateLimited,
	Message: "too many requests in flight from this client; retry once one has been answered"}
