package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/federation"
)

// maxAnswerBytes bounds an answer read from a registry.
const maxAnswerBytes = 8 << 20

// Remote is a Backend that asks an Agent Finder registry over its HTTP API
// (for `agentfinder mcp --server URL`).
type Remote struct {
	base   string
	client *http.Client
}

// NewRemote returns a Remote for the registry at base (its public URL, e.g.
// https://finder.example.com). client nil means a client with a 30 s
// timeout.
func NewRemote(base string, client *http.Client) (*Remote, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("registry URL %q is not an absolute http(s) URL", base)
	}
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	return &Remote{base: strings.TrimSuffix(u.String(), "/"), client: client}, nil
}

var _ Backend = (*Remote)(nil)

// Search implements Backend with POST /search; the search text reads the
// answer's body.
func (r *Remote) Search(ctx context.Context, request []byte) (json.RawMessage, *federation.ShownAnswer, error) {
	body, err := r.do(ctx, http.MethodPost, "/search", request)
	return body, nil, err
}

// Agent implements Backend with GET /agents/{identifier}.
func (r *Remote) Agent(ctx context.Context, identifier string) (json.RawMessage, error) {
	return r.do(ctx, http.MethodGet, "/agents/"+url.PathEscape(identifier), nil)
}

// Explore implements Backend with POST /explore.
func (r *Remote) Explore(ctx context.Context, request []byte) (json.RawMessage, error) {
	return r.do(ctx, http.MethodPost, "/explore", request)
}

// Tools implements Backend with GET /tools.
func (r *Remote) Tools(ctx context.Context, text string, limit int) (json.RawMessage, error) {
	q := url.Values{"q": {text}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return r.do(ctx, http.MethodGet, "/tools?"+q.Encode(), nil)
}

// do sends one request; an error answer of the API becomes *Error, a
// registry that cannot be reached or does not speak the API becomes an
// unavailable *Error naming the problem.
func (r *Remote) do(ctx context.Context, method, path string, body []byte) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &Error{Code: "unavailable", Message: "the registry " + r.base + " could not be reached"}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return nil, &Error{Code: "unavailable", Message: "reading the registry's answer failed"}
	}
	if len(raw) > maxAnswerBytes {
		return nil, &Error{Code: "unavailable", Message: "the registry's answer is too large"}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if !json.Valid(raw) {
			return nil, &Error{Code: "unavailable", Message: "the registry answered with something other than JSON"}
		}
		return json.RawMessage(raw), nil
	}
	var eb struct {
		Error *Error `json:"error"`
	}
	if json.Unmarshal(raw, &eb) == nil && eb.Error != nil && eb.Error.Code != "" {
		return nil, eb.Error
	}
	return nil, &Error{Code: codeOfStatus(resp.StatusCode), Message: fmt.Sprintf("the registry answered HTTP %d", resp.StatusCode)}
}

// codeOfStatus names the API error code of an HTTP status for answers
// without an error body.
func codeOfStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusTooManyRequests:
		return "rate_limited"
	}
	return "unavailable"
}
