package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfinder/agentfinder/normalize"
)

// Tools over the older HTTP+SSE transport. Its answers come on the event
// stream a GET holds open while requests are POSTed elsewhere, which the
// Visitor's request-and-answer exchanges cannot hold, so the official SDK's
// client speaks it, over the crawler's HTTP client (the network guard on
// every dial, its timeout on every request), within the same bounds as a
// streamable-HTTP list: tools kept, bytes read, pages followed.

// errToolBytes ends a conversation whose answers reached the byte bound.
var errToolBytes = errors.New("tool list byte bound reached")

// sseSlots are the requests an SSE conversation has in flight at most:
// its event stream, held open, and one message POSTed at a time.
const sseSlots = 2

// holder takes slots of a host's per-host limit for requests sent outside
// the Visitor (crawler.Visitor.Hold).
type holder interface {
	Hold(ctx context.Context, raw string, n int) (release func(), err error)
}

// listToolsSSE reads the tools of the SSE remote t (initialize, then
// tools/list page by page) with client, within lim. Only t's own host is
// ever requested, and the conversation counts against its per-host limit
// like every other probe request: it holds sseSlots of the host's slots
// from h for its whole life (both at once, so conversations never wait on
// each other's half) and never has more requests in flight. A host
// limited to one request at a time cannot carry it (crawler.ErrHostLimit).
// A bound reached keeps what was read and says which in Truncated; an
// error means no list was read at all.
func listToolsSSE(ctx context.Context, h holder, client *http.Client, t Target, lim *toolLimits) (*normalize.ToolSet, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, err
	}
	release, err := h.Hold(ctx, t.URL, sseSlots)
	if err != nil {
		return nil, fmt.Errorf("over sse: %w", err)
	}
	defer release()
	if client.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, client.Timeout)
		defer cancel()
	}
	rt := client.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	budget := &byteBudget{}
	budget.left.Store(lim.maxBytes + 1) // spent: more than maxBytes read
	st := &sseTransport{rt: rt, host: u.Host, budget: budget, slots: make(chan struct{}, sseSlots)}
	hc := &http.Client{Transport: st, Timeout: client.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	transport := &mcp.SSEClientTransport{Endpoint: t.URL, HTTPClient: hc, MaxEventSize: int(min(lim.maxBytes, mcp.DefaultMaxEventSize))}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: clientInfo["name"], Version: clientInfo["version"]}, nil).Connect(ctx, transport, nil)
	if err != nil {
		return nil, sseError(err, budget)
	}
	defer cs.Close()
	return readSSEPages(ctx, cs, lim, budget)
}

// readSSEPages follows tools/list's pages on an open session.
func readSSEPages(ctx context.Context, cs *mcp.ClientSession, lim *toolLimits, budget *byteBudget) (*normalize.ToolSet, error) {
	ts := lim.now()
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == lim.maxPages {
			ts.Truncated = normalize.TruncatedPages
			break
		}
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			if budget.spent() {
				ts.Truncated = normalize.TruncatedBytes
				break
			}
			return nil, sseError(err, budget)
		}
		raw := make([]json.RawMessage, 0, len(res.Tools))
		for _, tool := range res.Tools {
			b, err := json.Marshal(tool)
			if err != nil {
				return nil, fmt.Errorf("tool %q: %w", tool.Name, err)
			}
			raw = append(raw, b)
		}
		if full := add(&ts, raw, lim.maxTools); full {
			ts.Truncated = normalize.TruncatedTools
			break
		}
		if res.NextCursor == "" || seen[res.NextCursor] {
			break
		}
		if budget.spent() {
			ts.Truncated = normalize.TruncatedBytes
			break
		}
		seen[res.NextCursor], cursor = true, res.NextCursor
	}
	return finish(&ts), nil
}

// sseError says why a conversation failed, the byte bound first.
func sseError(err error, budget *byteBudget) error {
	if budget.spent() {
		return errToolBytes
	}
	return fmt.Errorf("over sse: %w", err)
}

// byteBudget is what a conversation's answers may still read.
type byteBudget struct{ left atomic.Int64 }

// spent reports whether the answers reached the bound.
func (b *byteBudget) spent() bool { return b.left.Load() <= 0 }

// sseTransport sends a conversation's requests: to its own host only (the
// event stream names where requests go; another host is refused), at most
// cap(slots) in flight (a request holds its slot until its answer's body
// is closed), each answer read within the shared budget.
type sseTransport struct {
	rt     http.RoundTripper
	host   string
	budget *byteBudget
	slots  chan struct{}
}

func (s *sseTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := s.refuse(req); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	select {
	case s.slots <- struct{}{}:
	case <-req.Context().Done():
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, req.Context().Err()
	}
	var once sync.Once
	release := func() { once.Do(func() { <-s.slots }) }
	resp, err := s.rt.RoundTrip(req)
	if err != nil {
		release()
		return nil, err
	}
	resp.Body = &budgetBody{rc: resp.Body, budget: s.budget, release: release}
	return resp, nil
}

// refuse says why req is not sent: another host, or the budget spent.
func (s *sseTransport) refuse(req *http.Request) error {
	if !strings.EqualFold(req.URL.Host, s.host) {
		return fmt.Errorf("the event stream sends requests to %s, not to %s", req.URL.Host, s.host)
	}
	if s.budget.spent() {
		return errToolBytes
	}
	return nil
}

// budgetBody reads a body until the conversation's budget is spent; Close
// gives its request's slot back.
type budgetBody struct {
	rc      io.ReadCloser
	budget  *byteBudget
	release func()
}

func (b *budgetBody) Read(p []byte) (int, error) {
	left := b.budget.left.Load()
	if left <= 0 {
		return 0, errToolBytes
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.rc.Read(p)
	b.budget.left.Add(-int64(n))
	return n, err
}

func (b *budgetBody) Close() error {
	defer b.release()
	return b.rc.Close()
}
