package crawler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/agentfinder/agentfinder/normalize"
)

// kind says what a request fetches; it decides the Accept header and how a
// large body is treated.
type kind int

const (
	kindCatalog kind = iota
	kindArtifact
	kindRobots
	kindHome
	kindOwnership // a small text file proving control of a host
	kindDID       // a did:web DID document, for signature keys
	kindAttest    // an attestation document, for its digest
	kindProbe     // an endpoint's liveness: status and headers only (Visitor.Visit)
	kindRegistry  // a page of an MCP registry's server list
	kindCard      // an A2A agent card at a well-known URI
	kindExchange  // an endpoint's answer: status, headers and a bounded body (Visitor.Exchange)
)

// acceptFor is the Accept header of an artifact fetch: the media type its
// entry names first, then any JSON.
func acceptFor(mediaType string) string {
	if mediaType == "" {
		return kindArtifact.accept()
	}
	return mediaType + ", application/json;q=0.9, */*;q=0.1"
}

func (k kind) accept() string {
	switch k {
	case kindRobots, kindOwnership:
		return "text/plain, */*;q=0.1"
	case kindHome:
		return "text/html, application/xhtml+xml;q=0.9, */*;q=0.1"
	case kindDID:
		return "application/did+json, application/did+ld+json;q=0.9, application/json;q=0.8, */*;q=0.1"
	case kindAttest:
		return "*/*"
	case kindRegistry:
		return "application/json, */*;q=0.1"
	case kindCard:
		return acceptFor(normalize.TypeA2A)
	}
	return "application/ai-catalog+json, application/json;q=0.9, application/*+json;q=0.8, */*;q=0.1"
}

// fetched is one final (non-redirect) response.
type fetched struct {
	URL       string // final URL after redirects
	Status    int
	Header    http.Header
	Body      []byte
	Truncated bool // only for kindHome: the body was cut at MaxBodySize
	// Elapsed, for kindProbe, is from the request leaving (after any wait
	// for the host's limit) to its response headers arriving.
	Elapsed time.Duration
}

// slot carries one colly request's outcome from its callbacks back to the
// caller; colly runs them synchronously in the calling goroutine.
type slot struct {
	limit    int64
	kind     kind
	res      *fetched
	tooLarge bool
	sent     time.Time     // kindProbe, kindExchange: when the request left
	elapsed  time.Duration // kindExchange: from sent to the response headers
}

const slotKey = "agentfinder.slot"

// newCollector builds the colly collector of one crawl. Fields are set after
// NewCollector so COLLY_* environment variables cannot override them.
func (c *Crawler) newCollector(ctx context.Context) *colly.Collector {
	col := colly.NewCollector()
	col.UserAgent = c.cfg.UserAgent
	col.MaxBodySize = int(c.cfg.MaxBodySize) + 1 // one byte more tells "too large" from "exactly the limit"
	col.AllowURLRevisit = true                   // the crawl keeps its own visited set; retries revisit
	col.ParseHTTPErrorResponse = true            // every status reaches OnResponse; we classify it
	col.Async = false                            // workers call Request concurrently and get results inline
	col.MaxDepth = 0
	col.MaxRequests = 0
	col.CacheDir = ""
	col.DetectCharset = false
	col.CheckHead = false
	col.TraceHTTP = false
	col.Context = ctx
	// robots.txt: colly's own check (IgnoreRobotsTxt=false) would fetch every
	// robots.txt a second time, gives no access to Crawl-delay or the
	// Agentmap lines discovery needs, and turns an unreachable robots.txt
	// into an opaque error. The crawl therefore fetches robots.txt once per
	// host through this same collector and transport, parses it with
	// temoto/robotstxt, and checks every URL (redirect hops included) before
	// requesting it: see session.robotsCheck.
	col.IgnoreRobotsTxt = true
	col.SetClient(c.client)
	col.OnRequestHeaders(func(r *colly.Request) {
		if s, _ := r.Ctx.GetAny(slotKey).(*slot); s != nil && (s.kind == kindProbe || s.kind == kindExchange) {
			s.sent = time.Now()
		}
	})
	col.OnResponseHeaders(func(r *colly.Response) {
		s, _ := r.Ctx.GetAny(slotKey).(*slot)
		if s == nil || s.kind == kindHome {
			return
		}
		if s.kind == kindProbe {
			s.res = &fetched{URL: r.Request.URL.String(), Status: r.StatusCode, Header: r.Headers.Clone(), Elapsed: time.Since(s.sent)}
			r.Request.Abort()
			return
		}
		if s.kind == kindExchange {
			s.elapsed = time.Since(s.sent)
		}
		if n, err := strconv.ParseInt(r.Headers.Get("Content-Length"), 10, 64); err == nil && n > s.limit {
			s.tooLarge = true
			r.Request.Abort()
		}
	})
	col.OnResponse(func(r *colly.Response) {
		s, _ := r.Ctx.GetAny(slotKey).(*slot)
		if s == nil {
			return
		}
		f := &fetched{URL: r.Request.URL.String(), Status: r.StatusCode, Header: *r.Headers, Body: r.Body, Elapsed: s.elapsed}
		if int64(len(f.Body)) > s.limit {
			if s.kind != kindHome {
				s.tooLarge = true
				return
			}
			f.Body, f.Truncated = f.Body[:s.limit], true
		}
		s.res = f
	})
	return col
}

// get fetches raw with robots.txt, host patterns, redirects (each hop
// checked again), retries and, on the first hop, the conditional headers of
// v. It returns the final response, whatever its status.
func (s *session) get(ctx context.Context, raw string, k kind, v *Validator) (*fetched, error) {
	return s.getAccept(ctx, raw, k, v, "")
}

// getAccept is get with accept, when not empty, as the Accept header of
// every hop instead of k's.
func (s *session) getAccept(ctx context.Context, raw string, k kind, v *Validator, accept string) (*fetched, error) {
	return s.hops(ctx, raw, k, true, func(col *colly.Collector, u *url.URL, hdr http.Header, hop int) (*fetched, error) {
		if accept != "" {
			hdr.Set("Accept", accept)
		}
		if hop == 0 && v != nil {
			if v.ETag != "" {
				hdr.Set("If-None-Match", v.ETag)
			}
			if v.LastModified != "" {
				hdr.Set("If-Modified-Since", v.LastModified)
			}
		}
		res, err := s.attempts(ctx, col, u, hdr, k)
		if err != nil {
			return nil, fmt.Errorf("get %s: %w", u, err)
		}
		return res, nil
	})
}

// hops sends raw with send, hop by hop along its redirects when redirects
// is set, each hop checked like the first (host patterns, robots.txt, see
// prepare) and given the crawl's headers; it returns the last hop's
// answer, whatever its status (a redirect itself when redirects is off).
func (s *session) hops(ctx context.Context, raw string, k kind, redirects bool, send func(col *colly.Collector, u *url.URL, hdr http.Header, hop int) (*fetched, error)) (*fetched, error) {
	seen := map[string]bool{}
	cur := raw
	for hop := 0; ; hop++ {
		u, err := parseHTTPURL(cur)
		if err != nil {
			return nil, err
		}
		lim, hdr, err := s.prepare(ctx, u, k)
		if err != nil {
			return nil, err
		}
		seen[u.String()] = true
		res, err := s.sendHeld(ctx, lim, func(col *colly.Collector) (*fetched, error) { return send(col, u, hdr, hop) })
		if err != nil || !redirects {
			return res, err
		}
		next, err := s.redirectTarget(raw, u, res, seen, hop)
		if err != nil || next == "" {
			return res, err
		}
		cur = next
	}
}

// prepare checks u against the host patterns and robots.txt (except for
// robots.txt itself) and returns the host's limit to send it under (nil:
// none, the session's collector; robots.txt is always sent so) and the
// request headers: user agent, Accept for k, and the headers configured
// for the host.
func (s *session) prepare(ctx context.Context, u *url.URL, k kind) (*hostLimit, http.Header, error) {
	if !s.c.cfg.hostAllowed(u.Hostname()) {
		return nil, nil, fmt.Errorf("get %s: %w", u, ErrExcluded)
	}
	var lim *hostLimit
	if k != kindRobots {
		h, err := s.robotsCheck(ctx, u)
		if errors.Is(err, ErrRobotsDisallowed) {
			s.c.metrics.robotsDisallowed()
		}
		if err != nil {
			return nil, nil, fmt.Errorf("get %s: %w", u, err)
		}
		lim = h.lim
	}
	hdr := http.Header{}
	hdr.Set("User-Agent", s.c.cfg.UserAgent)
	hdr.Set("Accept", k.accept())
	for name, vs := range s.c.cfg.headersFor(u.Hostname()) {
		hdr[name] = vs
	}
	return lim, hdr, nil
}

// sendHeld sends one request with send under the host's limit lim: holding
// one of its slots, with its collector (the session's when lim is nil).
func (s *session) sendHeld(ctx context.Context, lim *hostLimit, send func(col *colly.Collector) (*fetched, error)) (*fetched, error) {
	if lim == nil {
		return send(s.col)
	}
	release, err := lim.take(ctx, 1)
	if err != nil {
		return nil, err
	}
	defer release()
	return send(lim.col)
}

// redirectTarget returns the next URL when res (the answer to u, hop hops after
// raw) is a redirect, "" when it is not; a redirect that loops, leaves the
// pinned host or makes the chain too long is an error.
func (s *session) redirectTarget(raw string, u *url.URL, res *fetched, seen map[string]bool, hop int) (string, error) {
	loc := res.Header.Get("Location")
	if !isRedirect(res.Status) || loc == "" {
		return "", nil
	}
	next, err := u.Parse(loc)
	if err != nil {
		return "", fmt.Errorf("get %s: redirect to %q: %w", u, loc, ErrInvalidURL)
	}
	next.Fragment = ""
	if s.pinHost != "" && !strings.EqualFold(next.Host, s.pinHost) {
		return "", fmt.Errorf("get %s: redirect to %s: %w", u, next, ErrOtherHost)
	}
	if seen[next.String()] {
		return "", fmt.Errorf("get %s: redirect to %s: %w", u, next, ErrRedirectLoop)
	}
	if hop+1 > s.c.cfg.MaxRedirects {
		return "", fmt.Errorf("get %s: %w (%d)", raw, ErrTooManyRedirects, s.c.cfg.MaxRedirects)
	}
	return next.String(), nil
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// attempts runs one request with bounded retries: timeouts and connection
// errors, 429 and 5xx are retried with exponential backoff and jitter, or
// after the server's Retry-After, clamped to MaxRetryAfter.
func (s *session) attempts(ctx context.Context, col *colly.Collector, u *url.URL, hdr http.Header, k kind) (*fetched, error) {
	for attempt := 1; ; attempt++ {
		res, err := s.do(ctx, col, u, hdr, k)
		var wait time.Duration
		switch {
		case attempt >= s.c.cfg.MaxAttempts:
			return res, err
		case err != nil && retryable(err):
			wait = s.backoff(attempt)
		case err == nil && (res.Status == http.StatusTooManyRequests || res.Status >= 500 && res.Status != http.StatusNotImplemented):
			wait = max(s.backoff(attempt), retryAfter(res.Header.Get("Retry-After"), s.c.cfg.Now()))
		default:
			return res, err
		}
		wait = min(wait, s.c.cfg.MaxRetryAfter)
		s.c.log.Debug("retry", "url", u.String(), "attempt", attempt, "wait", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

func (s *session) backoff(attempt int) time.Duration {
	d := s.c.cfg.RetryBackoff << (attempt - 1)
	return d + rand.N(d)
}

// retryAfter parses a Retry-After value (seconds or an HTTP date).
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// do sends one GET request through colly.
func (s *session) do(ctx context.Context, col *colly.Collector, u *url.URL, hdr http.Header, k kind) (*fetched, error) {
	return s.send(ctx, col, http.MethodGet, u, hdr, nil, k, 0)
}

// send sends one request through colly. For kindProbe only the status and
// headers are read: the body is abandoned unread. limit, when positive and
// below MaxBodySize, bounds the body instead (a longer one is ErrTooLarge).
func (s *session) send(ctx context.Context, col *colly.Collector, method string, u *url.URL, hdr http.Header, body []byte, k kind, limit int64) (*fetched, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.requests.Add(1)
	if limit <= 0 || limit > s.c.cfg.MaxBodySize {
		limit = s.c.cfg.MaxBodySize
	}
	sl := &slot{limit: limit, kind: k}
	cctx := colly.NewContext()
	cctx.Put(slotKey, sl)
	s.c.log.Debug("request", "method", method, "url", u.String())
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	start := time.Now()
	err := col.Request(method, u.String(), rd, cctx, hdr)
	if k == kindProbe && errors.Is(err, colly.ErrAbortedAfterHeaders) && sl.res != nil {
		err = nil // the probe stopped reading after the headers, as it asked
	}
	if sl.res != nil {
		s.c.metrics.request(k, time.Since(start), len(sl.res.Body))
	} else {
		s.c.metrics.request(k, time.Since(start), 0)
	}
	switch {
	case sl.tooLarge:
		return nil, fmt.Errorf("%w (limit %d bytes)", ErrTooLarge, limit)
	case err != nil:
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	case sl.res == nil:
		return nil, errors.New("no response")
	}
	return sl.res, nil
}

// parseHTTPURL accepts absolute http and https URLs and drops the fragment.
func parseHTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrInvalidURL, raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q", ErrInvalidURL, raw)
	}
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}

// maxAge reads the max-age directive of a Cache-Control header.
func maxAge(h http.Header) time.Duration {
	for _, part := range strings.Split(h.Get("Cache-Control"), ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok && strings.EqualFold(k, "max-age") {
			if n, err := strconv.Atoi(strings.Trim(v, `"`)); err == nil && n > 0 {
				return time.Duration(n) * time.Second
			}
		}
	}
	return 0
}
