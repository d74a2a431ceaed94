package searchtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Client sends a test's requests to a server and reads its JSON answers.
type Client struct {
	T    testing.TB
	HTTP *http.Client
	Base string // the server's URL, without a trailing slash
	// Check, when set, sees every answer (the OpenAPI conformance check).
	Check func(t testing.TB, method, path string, status int, body []byte)
}

// Do sends a request (body: nil, a string, bytes, or a value sent as
// JSON) and decodes the JSON answer into out (if non-nil).
func (c *Client) Do(method, path string, body any, hdr map[string]string, out any) *http.Response {
	c.T.Helper()
	rd := c.body(body)
	req, err := http.NewRequestWithContext(context.Background(), method, c.Base+path, rd)
	if err != nil {
		c.T.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.T.Fatal(err)
	}
	if c.Check != nil {
		c.Check(c.T, method, path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.T.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return resp
}

// body is a request body as Do takes it.
func (c *Client) body(body any) io.Reader {
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return strings.NewReader(b)
	case []byte:
		return bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.T.Fatal(err)
		}
		return bytes.NewReader(j)
	}
}
