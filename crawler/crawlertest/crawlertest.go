// Package crawlertest gives tests the fixture web, the crawler settings
// that reach it and a sink that keeps what a crawl found. Only tests import it: it imports testing.
package crawlertest

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

// Web starts the fixture web with opts for the test and closes it when the
// test ends.
func Web(t testing.TB, opts fixtures.Options) *fixtures.Web {
	t.Helper()
	w, err := fixtures.Start(context.Background(), opts) // Close stops it, after the test

	if err != nil {
		t.Fatalf("crawlertest: start the fixture web: %v", err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// Config returns the crawler settings that reach w: its DNS server, its CA,
// its HTTPS and HTTP ports in place of 443 and 80, and private (loopback)
// addresses allowed. The rest is left zero for the test to set (timeouts,
// retries, enrichment).
func Config(w *fixtures.Web) crawler.Config {
	return crawler.Config{
		DNSServer:    w.DNSAddr,
		CAFile:       w.CAFile,
		PortMap:      map[string]string{"443": strconv.Itoa(w.HTTPSPort), "80": strconv.Itoa(w.HTTPPort)},
		AllowPrivate: true,
	}
}

// Collector is a crawler.Sink that keeps every result. The zero value is
// ready to use.
type Collector struct {
	mu  sync.Mutex
	got []normalize.CatalogResult
}

// Put keeps r.
func (c *Collector) Put(_ context.Context, r normalize.CatalogResult) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, r)
	return nil
}

// Results returns the results kept so far, in the order they came.
func (c *Collector) Results() []normalize.CatalogResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.got)
}
