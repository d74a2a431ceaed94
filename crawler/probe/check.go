package probe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
)

// Outcomes of one probe (the outcome label of agentfinder_probes_total).
const (
	OutcomeUp           = "up"            // every target answered
	OutcomeSlow         = "slow"          // answered, but above the latency budget: still up
	OutcomeAuthRequired = "auth_required" // a target answered 401 or 403
	OutcomeFailed       = "failed"        // timeout, refused, 5xx, 404/410: counts toward down
	OutcomeSkipped      = "skipped"       // could not be probed (robots.txt, network guard, host patterns): unknown
)

// visitor is what a check needs of crawler.Visitor.
type visitor interface {
	Visit(ctx context.Context, method, raw string, header http.Header, body []byte) (*crawler.VisitResponse, error)
}

// result is what one probe of a record saw.
type result struct {
	outcome string
	latency time.Duration // the slowest target's
	detail  string
}

// Requests the prober sends. The A2A request asks for a task that cannot
// exist (tasks/get is read-only); the MCP one is the protocol's first
// message. Neither changes anything on the server.
var (
	a2aProbeBody = []byte(`{"jsonrpc":"2.0","id":"agentfinder-probe","method":"tasks/get","params":{"id":"agentfinder-probe"}}`)
	mcpProbeBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
		`"capabilities":{},"clientInfo":{"name":"AgentFinderBot","version":"1"}}}`)
)

// check probes targets in order and stops at the first that is not up.
func check(ctx context.Context, v visitor, targets []Target, slow time.Duration) result {
	var r result
	for _, t := range targets {
		res, err := visit(ctx, v, t)
		if err != nil {
			return failure(t, err)
		}
		r.latency = max(r.latency, res.Elapsed)
		switch st := res.Status; {
		case st == http.StatusUnauthorized || st == http.StatusForbidden:
			return result{outcome: OutcomeAuthRequired, latency: r.latency, detail: fmt.Sprintf("%s: HTTP %d", t.Kind, st)}
		case !answered(t, st):
			return result{outcome: OutcomeFailed, latency: r.latency, detail: fmt.Sprintf("%s: HTTP %d", t.Kind, st)}
		}
	}
	r.outcome = OutcomeUp
	if slow > 0 && r.latency > slow {
		r.outcome = OutcomeSlow
		r.detail = fmt.Sprintf("slow: %dms over the %dms budget", r.latency.Milliseconds(), slow.Milliseconds())
	}
	return r
}

// answered decides whether a status shows the target is there. A card must
// be served (2xx). An interface or MCP endpoint is there when it answers
// anything but a server error or "no such resource": a 400, 405 or 429
// comes from a live server rejecting our request, while 5xx, 404 and 410
// mean the agent is not (or no longer) served at that URL. A redirect a
// POST met counts as an answer.
func answered(t Target, status int) bool {
	if t.Kind == KindCard {
		return status >= 200 && status < 300
	}
	return status < 500 && status != http.StatusNotFound && status != http.StatusGone
}

// visit sends the request that checks one target.
func visit(ctx context.Context, v visitor, t Target) (*crawler.VisitResponse, error) {
	h := http.Header{}
	switch t.Kind {
	case KindCard:
		h.Set("Accept", "application/json")
		return v.Visit(ctx, http.MethodGet, t.URL, h, nil)
	case KindMCP:
		h.Set("Accept", "application/json, text/event-stream")
		h.Set("Content-Type", "application/json")
		res, err := v.Visit(ctx, http.MethodPost, t.URL, h, mcpProbeBody)
		if err == nil {
			endSession(ctx, v, t.URL, res.Header.Get("Mcp-Session-Id"))
		}
		return res, err
	}
	if t.Transport == "" || isJSONRPC(t.Transport) {
		h.Set("Accept", "application/json")
		h.Set("Content-Type", "application/json")
		return v.Visit(ctx, http.MethodPost, t.URL, h, a2aProbeBody)
	}
	h.Set("Accept", "application/json")
	return v.Visit(ctx, http.MethodGet, t.URL, h, nil)
}

// endSession closes the MCP session an initialize opened, as the
// streamable-HTTP transport asks of clients that are done; its answer does
// not matter.
func endSession(ctx context.Context, v visitor, u, id string) {
	if id == "" {
		return
	}
	h := http.Header{}
	h.Set("Mcp-Session-Id", id)
	_, _ = v.Visit(ctx, http.MethodDelete, u, h, nil)
}

func isJSONRPC(transport string) bool {
	return strings.EqualFold(strings.ReplaceAll(strings.TrimSpace(transport), "-", ""), "jsonrpc")
}

// failure turns a request error into the probe's result: errors that say
// the target may not be probed leave it unknown; the rest are failures.
func failure(t Target, err error) result {
	reason := crawler.Reason(err)
	switch {
	case errors.Is(err, crawler.ErrRobotsDisallowed):
		return result{outcome: OutcomeSkipped, detail: t.Kind + ": robots.txt disallows probing"}
	case errors.Is(err, crawler.ErrSSRFBlocked), errors.Is(err, crawler.ErrExcluded), errors.Is(err, crawler.ErrInvalidURL):
		return result{outcome: OutcomeSkipped, detail: t.Kind + ": not probed (" + reason + ")"}
	}
	return result{outcome: OutcomeFailed, detail: t.Kind + ": " + reason}
}
