package probe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/normalize"
)

// Outcomes of one probe (the outcome label of agentfinder_probes_total).
const (
	OutcomeUp           = "up"            // every target answered
	OutcomeSlow         = "slow"          // answered, but above the latency budget: still up
	OutcomeAuthRequired = "auth_required" // a target answered 401 or 403
	OutcomeFailed       = "failed"        // timeout, refused, 5xx, 404/410: counts toward down
	OutcomeSkipped      = "skipped"       // could not be probed (robots.txt, network guard, host patterns): unknown
	OutcomeNotMCP       = "not_mcp"       // answered HTTP, but not MCP (an HTML page, a JSON API)
	OutcomeTemplate     = "template"      // the endpoint URL is a template: nothing requested
)

// visitor is what a check needs of crawler.Visitor.
type visitor interface {
	Visit(ctx context.Context, method, raw string, header http.Header, body []byte) (*crawler.VisitResponse, error)
	Exchange(ctx context.Context, method, raw string, header http.Header, body []byte, limit int64) (*crawler.VisitResponse, error)
	holder
}

// result is what one probe of a record saw.
type result struct {
	outcome string
	latency time.Duration // the slowest target's
	detail  string

	// What an MCP endpoint said of itself.
	protocol  string
	transport string
	version   string
	server    serverInfo
	auth      *normalize.AuthChallenge
	// tools is the tool list read, when toolsRead.
	tools     *normalize.ToolSet
	toolsRead bool
}

// health is the health r reports (Status and CheckedAt are the caller's).
func (r result) health() normalize.Health {
	return normalize.Health{Detail: r.detail, Protocol: r.protocol, Transport: r.transport, ProtocolVersion: r.version,
		ServerName: r.server.Name, ServerVersion: r.server.Version, Auth: r.auth}
}

// Requests the prober sends. The A2A request asks for a task that cannot
// exist (tasks/get is read-only); the MCP one is the protocol's first
// message. Neither changes anything on the server.
var (
	a2aProbeBody = []byte(`{"jsonrpc":"2.0","id":"agentfinder-probe","method":"tasks/get","params":{"id":"agentfinder-probe"}}`)
)

// check probes targets in order and stops at the first that is not up.
// An MCP target holds a conversation of its own (checkMCP), listing tools
// when tools is set.
func check(ctx context.Context, v visitor, targets []Target, slow time.Duration, tools *toolLimits) result {
	var r result
	for _, t := range targets {
		switch t.Kind {
		case KindTemplate:
			return result{outcome: OutcomeTemplate, detail: "the endpoint URL is a template: " + t.URL}
		case KindMCP, KindMCPSSE:
			if t.Kind == KindMCP {
				r = checkMCP(ctx, v, t, tools)
			} else {
				r = checkSSE(ctx, v, t, tools)
			}
			if r.outcome == OutcomeUp {
				slowDown(&r, slow)
			}
			return r
		}
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
	r.protocol = "a2a" // the targets left are an A2A card and interface
	slowDown(&r, slow)
	return r
}

// slowDown turns an up result slower than the budget into a slow one.
func slowDown(r *result, slow time.Duration) {
	if slow > 0 && r.latency > slow {
		r.outcome = OutcomeSlow
		r.detail = joinDetail(fmt.Sprintf("slow: %dms over the %dms budget", r.latency.Milliseconds(), slow.Milliseconds()), r.detail)
	}
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
	}
	if t.Transport == "" || isJSONRPC(t.Transport) {
		h.Set("Accept", "application/json")
		h.Set("Content-Type", "application/json")
		return v.Visit(ctx, http.MethodPost, t.URL, h, a2aProbeBody)
	}
	h.Set("Accept", "application/json")
	return v.Visit(ctx, http.MethodGet, t.URL, h, nil)
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
