// Package crawlertest gives tests the fixture web and the crawler settings
// that reach it. Only tests import it: it imports testing.
package crawlertest

import (
	"context"
	"strconv"
	"testing"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/fixtures"
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
