// Package meili builds meilisearch-go clients the way this project needs them.
// It owns only client construction (transport, timeouts, key); what is written
// to or read from an index belongs to ingest and searchapi.
package meili

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/meilisearch/meilisearch-go"
)

// NewHTTPClient returns the HTTP client every Meilisearch client of ours uses.
//
// Compression is disabled on purpose: with Go's default transport the client
// asks for gzip, and Meilisearch 1.21 then stalls about 40 ms on every request
// over a reused connection. Loopback and LAN traffic gains nothing from gzip.
func NewHTTPClient(timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: (&net.Dialer{
			Timeout:   5 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		DisableCompression:    true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     false,
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}

// Client is a meilisearch-go client that can also send the requests
// meilisearch-go has no method for (Do): Meilisearch 1.21's experimental
// features and index settings newer than the library.
type Client struct {
	meilisearch.ServiceManager
	url, key string
	hc       *http.Client
}

// New returns a client for the server at url with the given API key (empty
// for none), using NewHTTPClient. It does not contact the server.
func New(url, apiKey string) *Client {
	return NewWithHTTP(url, apiKey, NewHTTPClient(0))
}

// NewWithHTTP returns a client for url that sends every request, Do's
// included, with hc: a cluster's client, whose transport sends reads to the
// replicas and writes to the index write log (ingest/replica), is one. hc
// should not ask for compression (see NewHTTPClient).
func NewWithHTTP(url, apiKey string, hc *http.Client) *Client {
	opts := []meilisearch.Option{meilisearch.WithCustomClient(hc)}
	if apiKey != "" {
		opts = append(opts, meilisearch.WithAPIKey(apiKey))
	}
	return &Client{ServiceManager: meilisearch.New(url, opts...), url: strings.TrimRight(url, "/"), key: apiKey, hc: hc}
}

// ErrStatus is an answer of Meilisearch with a status of 300 or more to
// Client.Do; the *StatusError carrying it has Meilisearch's error code.
var ErrStatus = errors.New("meilisearch answered with an error status")

// StatusError is Meilisearch's error answer to a Client.Do request.
type StatusError struct {
	Method, Path string
	Status       int
	Code         string
	Message      string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("meilisearch %s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
}

// Unwrap makes errors.Is(err, ErrStatus) hold.
func (e *StatusError) Unwrap() error { return ErrStatus }

// Do sends one request to Meilisearch's HTTP API: body (nil: none) as
// JSON, the answer decoded into out (nil: read and dropped). An error
// status is a *StatusError.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader = http.NoBody
	if body != nil {
		buf, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("meilisearch %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("meilisearch %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("meilisearch %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		se := &StatusError{Method: method, Path: path, Status: resp.StatusCode}
		var e struct{ Code, Message string }
		if json.Unmarshal(data, &e) == nil {
			se.Code, se.Message = e.Code, e.Message
		}
		return se
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("meilisearch %s %s: %w", method, path, err)
	}
	return nil
}

// maxAnswer bounds the answer Do reads: settings and features, not
// documents.
const maxAnswer = 4 << 20
