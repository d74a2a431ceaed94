package crawler

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
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
	group     *robotstxt.Group // nil: everything allowed
	agentmaps []string         // absolute URLs from Agentmap lines
	err       error            // the host is unreachable: requests fail with this
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

// robotsCheck returns nil when u may be fetched: its host is reachable and
// robots.txt allows the path to RobotsAgent.
func (s *session) robotsCheck(ctx context.Context, u *url.URL) error {
	h, err := s.robotsFor(ctx, u)
	if err != nil {
		return err
	}
	if h.err != nil {
		return h.err
	}
	if h.group == nil {
		return nil
	}
	p := u.EscapedPath()
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	if !h.group.Test(p) {
		return fmt.Errorf("%w: %s", ErrRobotsDisallowed, p)
	}
	return nil
}

// loadRobots fetches and parses robots.txt for origin key and installs the
// host's colly limit rule: PerHostConcurrency, and a delay of
// max(Config.Delay, the site's Crawl-delay capped at MaxCrawlDelay).
func (s *session) loadRobots(ctx context.Context, key string, h *hostState) {
	var crawlDelay time.Duration
	defer func() { s.limitHost(key, crawlDelay) }()
	res, err := s.get(ctx, key+"/robots.txt", kindRobots, nil)
	if err != nil {
		switch Reason(err) {
		case ReasonDNSError, ReasonSSRFBlocked, ReasonTimeout, ReasonConnection, ReasonTLSError, ReasonCanceled:
			// The host itself is unreachable; its other URLs would fail the same way.
			h.err = err
		default:
			// A robots.txt that is too large or loops is treated as absent.
			s.log.Debug("robots.txt unusable", "origin", key, "err", err)
		}
		return
	}
	data, err := robotstxt.FromStatusAndBytes(res.Status, res.Body)
	if err != nil {
		s.log.Debug("robots.txt unparsable", "origin", key, "err", err)
		return
	}
	h.group = data.FindGroup(RobotsAgent)
	crawlDelay = h.group.CrawlDelay
	if res.Status >= 200 && res.Status < 300 {
		base, _ := url.Parse(res.URL)
		h.agentmaps = agentmapLines(res.Body, base)
	}
}

// limitHost installs the colly LimitRule of one host once per crawl.
func (s *session) limitHost(key string, crawlDelay time.Duration) {
	u, err := url.Parse(key)
	if err != nil {
		return
	}
	delay := max(s.cfg.Delay, min(crawlDelay, s.cfg.MaxCrawlDelay))
	par := s.cfg.PerHostConcurrency
	if delay > 0 {
		par = 1 // a delay is a pause between consecutive requests
	}
	if par <= 0 {
		return
	}
	s.hostsMu.Lock()
	defer s.hostsMu.Unlock()
	if s.limited[u.Host] {
		return
	}
	s.limited[u.Host] = true
	if err := s.col.Limit(&colly.LimitRule{DomainGlob: globQuote(u.Host), Parallelism: par, Delay: delay}); err != nil {
		s.log.Warn("limit rule", "host", u.Host, "err", err)
	}
}

// globQuote escapes glob metacharacters so a host (IPv6 literals included)
// matches only itself.
func globQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]{}\!`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
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
