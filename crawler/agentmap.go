package crawler

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/temoto/robotstxt"
)

// hostState is what one crawl knows about a scheme://host: its robots.txt
// rules for our agent and the Agentmap lines it lists. It is filled once
// (ready is closed after) and read by every request to that host.
type hostState struct {
	ready     chan struct{}
	robots    *robotstxt.RobotsData // nil: everything allowed
	agentmaps []string              // absolute URLs from Agentmap lines
	err       error                 // the host is unreachable: requests fail with this
	lim       *hostLimit            // the host's collector with its LimitRule, and its slots; nil: the session's collector, no limit
}

// robotsFor returns the robots state of u's origin, fetching robots.txt on
// first use. Concurrent callers wait for the first.
func (s *session) robotsFor(ctx context.Context, u *url.URL) (*hostState, error) {
	key := u.Scheme + "://" + u.Host
	s.hostsMu.Lock()
	h, ok := s.hosts[key]
	if !ok {
		h = &hostState{ready: make(chan struct{})}
		s.hosts[key] = h
	}
	s.hostsMu.Unlock()
	if !ok {
		s.loadRobots(ctx, key, h)
		close(h.ready)
		return h, nil
	}
	select {
	case <-h.ready:
		return h, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// robotsCheck returns the host's state when u may be fetched: its host is
// reachable and robots.txt allows the path to RobotsAgent.
func (s *session) robotsCheck(ctx context.Context, u *url.URL) (*hostState, error) {
	h, err := s.robotsFor(ctx, u)
	if err != nil {
		return nil, err
	}
	if h.err != nil {
		return nil, h.err
	}
	if h.robots == nil {
		return h, nil
	}
	p := u.EscapedPath()
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	if !h.robots.TestAgent(p, RobotsAgent) {
		return nil, fmt.Errorf("%w: %s", ErrRobotsDisallowed, p)
	}
	return h, nil
}

// loadRobots fetches and parses robots.txt for origin key and gives the
// host its colly limit rule: PerHostConcurrency, and a delay of
// max(Config.Delay, the site's Crawl-delay capped at MaxCrawlDelay).
func (s *session) loadRobots(ctx context.Context, key string, h *hostState) {
	var crawlDelay time.Duration
	defer func() { h.lim = s.hostCollector(key, crawlDelay) }()
	res, err := s.get(ctx, key+"/robots.txt", kindRobots, nil)
	if err != nil {
		switch Reason(err) {
		case ReasonDNSError, ReasonSSRFBlocked, ReasonTimeout, ReasonConnection, ReasonTLSError, ReasonCanceled:
			// The host itself is unreachable; its other URLs would fail the same way.
			h.err = err
		default:
			// A robots.txt that is too large or loops is treated as absent.
			s.c.log.Debug("robots.txt unusable", "origin", key, "err", err)
		}
		return
	}
	if res.Status == http.StatusTooManyRequests || res.Status >= 500 {
		// RFC 9309 §2.3.1.4: an unreachable robots.txt means complete
		// disallow (Google treats 429 the same way).
		h.err = fmt.Errorf("%w: %s/robots.txt answered HTTP %d", ErrRobotsUnavailable, key, res.Status)
		return
	}
	data, err := robotstxt.FromStatusAndBytes(res.Status, res.Body)
	if err != nil {
		s.c.log.Debug("robots.txt unparsable", "origin", key, "err", err)
		return
	}
	h.robots = data
	crawlDelay = data.FindGroup(RobotsAgent).CrawlDelay
	if res.Status >= 200 && res.Status < 300 {
		base, _ := url.Parse(res.URL)
		h.agentmaps = agentmapLines(res.Body, base)
	}
}

// hostCollector returns the limit of one host: nil (the session's
// collector) when the host needs none, else a collector of its own whose
// single LimitRule ("*") holds the host's parallelism and delay, and as
// many slots (hostLimit). One collector per limited host
// (rather than one LimitRule per host added to a shared collector while it
// runs) because colly's Limit is not safe while requests are in flight; the
// rule is installed before the collector's first request. http and https
// and every port of one host name share it (politeness is per machine, not
// per origin); the first origin whose robots.txt is read sets the delay.
func (s *session) hostCollector(key string, crawlDelay time.Duration) *hostLimit {
	u, err := url.Parse(key)
	if err != nil {
		return nil
	}
	delay := max(s.c.cfg.Delay, min(crawlDelay, s.c.cfg.MaxCrawlDelay))
	par := s.c.cfg.PerHostConcurrency
	if delay > 0 {
		par = 1 // a delay is a pause between consecutive requests
	}
	if par <= 0 {
		return nil
	}
	s.hostsMu.Lock()
	defer s.hostsMu.Unlock()
	if lim := s.limited[u.Hostname()]; lim != nil {
		return lim
	}
	// The host's collector runs under the session's context (its own
	// collector's), not the context of the request that happened to read
	// robots.txt first: that one may end long before the session does.
	col := s.c.newCollector(s.col.Context)
	if err := col.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: par, Delay: delay}); err != nil {
		s.c.log.Warn("limit rule", "host", u.Hostname(), "err", err)
		return nil
	}
	lim := newHostLimit(col, par)
	s.limited[u.Hostname()] = lim
	return lim
}

// agentmapLines returns the URLs of every "Agentmap:" line (directive name
// case-insensitive, absolute or relative to base) in a robots.txt body.
// temoto/robotstxt ignores unknown directives, so they are read here.
func agentmapLines(body []byte, base *url.URL) []string {
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "agentmap") {
			continue
		}
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		ref, err := url.Parse(v)
		if err != nil {
			continue
		}
		if base != nil {
			ref = base.ResolveReference(ref)
		}
		if ref.Scheme != "http" && ref.Scheme != "https" {
			continue
		}
		if s := ref.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
