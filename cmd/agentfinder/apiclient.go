package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// apiAnswer is an Agent Finder server's answer to one request of a CLI
// command.
type apiAnswer struct {
	code   int    // HTTP status code
	status string // e.g. "429 Too Many Requests"
	header http.Header
	body   []byte // at most the limit postAPI was given
}

// errBuildRequest wraps a request that could not be built (a bad --server):
// a usage error.
type errBuildRequest struct{ err error }

func (e errBuildRequest) Error() string { return e.err.Error() }

// exitCodeOf is the exit status of a command whose request failed with
// err: 2 for a request that could not be built, else 1.
func exitCodeOf(err error) int {
	if errors.As(err, new(errBuildRequest)) {
		return 2
	}
	return 1
}

// apiKeyEnv is the environment variable of --api-key, the credential every
// client command sends.
const apiKeyEnv = envPrefix + "API_KEY"

// apiKeyFlag adds --api-key (env AGENTFINDER_API_KEY) to a client command:
// the API key or OIDC token it sends to a registry that runs with --auth.
func (c *cli) apiKeyFlag(dst *string) {
	c.fs.StringVar(dst, "api-key", "", "API `key` or OIDC access token sent as \"Authorization: Bearer\" to the registry (one running with --auth);\n"+
		"prefer the environment variable: a flag shows in process listings")
	c.setEnv("api-key", apiKeyEnv)
}

// apiClient is the HTTP client of a client command: it gives up after
// timeout and, when apiKey is set, sends it as a bearer credential on every
// request to server's host (and to no other host, even on a redirect).
func apiClient(server, apiKey string, timeout time.Duration) *http.Client {
	c := &http.Client{Timeout: timeout}
	if u, err := url.Parse(strings.TrimSpace(server)); err == nil && apiKey != "" {
		c.Transport = bearerTransport{host: u.Host, token: apiKey, next: http.DefaultTransport}
	}
	return c
}

// bearerTransport adds "Authorization: Bearer token" to requests for host.
type bearerTransport struct {
	host, token string
	next        http.RoundTripper
}

// RoundTrip implements http.RoundTripper on a copy of r (a RoundTripper
// must not change its request).
func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.EqualFold(r.URL.Host, b.host) || r.Header.Get("Authorization") != "" {
		return b.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// postAPI sends body as JSON to path of the server at base (a CLI flag, a
// trailing slash allowed) with a client of its own that gives up after
// timeout and sends apiKey (when set), and reads at most limit bytes of
// the answer. A request that cannot be built is an errBuildRequest; one
// that cannot be sent or read names the endpoint.
func postAPI(ctx context.Context, base, apiKey, path string, body []byte, timeout time.Duration, limit int64) (apiAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	endpoint := strings.TrimRight(base, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return apiAnswer{}, errBuildRequest{err}
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "agentfinder-cli/"+version)
	resp, err := apiClient(base, apiKey, timeout).Do(req)
	if err != nil {
		return apiAnswer{}, fmt.Errorf("POST %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return apiAnswer{}, fmt.Errorf("read the answer of POST %s: %w", endpoint, err)
	}
	return apiAnswer{code: resp.StatusCode, status: resp.Status, header: resp.Header, body: raw}, nil
}

// errorText says what an error answer says: its error object's message,
// code and correlation id when it has one, else the start of the body;
// then when to retry if the server said.
func (a apiAnswer) errorText() string {
	var e struct {
		Error struct{ Code, Message, CorrelationID string } `json:"error"`
	}
	msg := truncate(string(a.body), 300)
	if json.Unmarshal(a.body, &e) == nil && e.Error.Code != "" {
		msg = fmt.Sprintf("%s (%s, correlation id %s)", e.Error.Message, e.Error.Code, e.Error.CorrelationID)
	}
	if ra := a.header.Get("Retry-After"); ra != "" {
		msg += " (retry after " + ra + "s)"
	}
	return a.status + ": " + msg
}
