// Package meili builds meilisearch-go clients the way this project needs them.
// It owns only client construction (transport, timeouts, key); what is written
// to or read from an index belongs to ingest and searchapi.
package meili

import (
	"net"
	"net/http"
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

// New returns a meilisearch-go client for the server at url with the given API
// key (empty for none), using NewHTTPClient. It does not contact the server.
func New(url, apiKey string) meilisearch.ServiceManager {
	opts := []meilisearch.Option{meilisearch.WithCustomClient(NewHTTPClient(0))}
	if apiKey != "" {
		opts = append(opts, meilisearch.WithAPIKey(apiKey))
	}
	return meilisearch.New(url, opts...)
}
