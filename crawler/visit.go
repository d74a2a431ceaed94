package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gocolly/colly/v2"
)

// Visitor sends single requests under the crawl's rules, for callers that
// check endpoints rather than crawl catalogs (the endpoint prober): the
// network guard on every dial, host patterns and per-host headers,
// robots.txt (fetched once per host for the Visitor's life, Crawl-delay
// included), the per-host limit, and the request timeout. Unlike a crawl it
// makes one attempt per request: the caller decides what a failure means.
// It is safe for concurrent use.
type Visitor struct {
	s *session
}

// NewVisitor returns a Visitor whose requests run under ctx. Its robots.txt
// cache lives as long as the Visitor: make one per round of checks, so a
// host's robots.txt is read once per round and never grows stale.
func (c *Crawler) NewVisitor(ctx context.Context) *Visitor {
	return &Visitor{s: c.newSession(ctx)}
}

// VisitResponse is the status and headers of a Visitor's request, and the
// body when it was an Exchange.
type VisitResponse struct {
	URL     string        // final URL, after redirects a GET followed
	Status  int           // HTTP status
	Header  http.Header   // response headers
	Body    []byte        // Exchange only: the whole body (at most its limit)
	Elapsed time.Duration // request sent to headers received, summed over redirect hops (robots.txt and waits for the host's limit excluded)
}

// Visit sends one request: method to raw, with header added to the crawl's
// own (user agent, per-host headers) and body, if any. Only the status and
// headers are read; the body is abandoned unread, so a streaming answer
// (an MCP server's event stream) cannot hold the caller. A GET follows
// redirects hop by hop, each hop checked like the first; other methods
// return the redirect itself. Errors are the crawl's (see Reason):
// ErrRobotsDisallowed, ErrSSRFBlocked, ErrExcluded, timeouts, ... ctx
// bounds the wait for robots.txt and a request not yet sent; a request
// under way ends with the Visitor's context or the crawler's Timeout.
func (v *Visitor) Visit(ctx context.Context, method, raw string, header http.Header, body []byte) (*VisitResponse, error) {
	return v.request(ctx, method, raw, header, body, kindProbe, 0)
}

// Exchange sends one request like Visit and reads the answer's body too, up
// to limit bytes (at most the crawl's MaxBodySize; 0 means that): a longer
// body is ErrTooLarge, whatever it announced, and is never held whole. An
// answer that keeps streaming ends with the crawler's Timeout. It is for
// short request-and-answer exchanges (an MCP server's JSON-RPC replies).
func (v *Visitor) Exchange(ctx context.Context, method, raw string, header http.Header, body []byte, limit int64) (*VisitResponse, error) {
	return v.request(ctx, method, raw, header, body, kindExchange, limit)
}

// request sends one Visitor request of kind k.
func (v *Visitor) request(ctx context.Context, method, raw string, header http.Header, body []byte, k kind, limit int64) (*VisitResponse, error) {
	s := v.s
	var elapsed time.Duration
	res, err := s.hops(ctx, raw, k, method == http.MethodGet, func(col *colly.Collector, u *url.URL, hdr http.Header, _ int) (*fetched, error) {
		for name, vs := range header {
			hdr[http.CanonicalHeaderKey(name)] = vs
		}
		res, err := s.send(ctx, col, method, u, hdr, body, k, limit)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, u, err)
		}
		elapsed += res.Elapsed
		return res, nil
	})
	if err != nil {
		return nil, err
	}
	return &VisitResponse{URL: res.URL, Status: res.Status, Header: res.Header, Body: res.Body, Elapsed: elapsed}, nil
}

// ErrHostLimit is Visitor.Hold asked for more of a host's slots than its
// per-host limit holds (a host limited to one request at a time, asked for
// two): they can never be granted.
var ErrHostLimit = errors.New("more requests at once than the host's limit allows")

// Hold takes n of the per-host slots of raw's host for requests the caller
// sends itself, outside the Visitor: a conversation the Visitor's
// request-and-answer exchanges cannot carry, such as an MCP server's older
// HTTP+SSE transport (an event stream held open while messages are POSTed).
// raw is checked as a request to it would be (host patterns, robots.txt).
// The slots are those the Visitor's own requests to the host take, so until
// release is called the Visitor sends at most the host's limit less n
// requests there; the caller must keep to n requests at a time. n is taken
// at once, never in part, so two callers each holding some slots never wait
// for each other's. An n the limit can never grant is ErrHostLimit, at once;
// ctx bounds the wait. A host without a limit (PerHostConcurrency
// negative) holds nothing. release must be called, once or more.
func (v *Visitor) Hold(ctx context.Context, raw string, n int) (release func(), err error) {
	u, err := parseHTTPURL(raw)
	if err != nil {
		return nil, err
	}
	lim, _, err := v.s.prepare(ctx, u, kindProbe)
	if err != nil {
		return nil, err
	}
	return lim.take(ctx, int64(n))
}
