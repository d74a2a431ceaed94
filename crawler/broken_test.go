package crawler_test

import (
	"bytes"
	"compress/gzip"
	"runtime"
	"testing"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

func TestBrokenCasesEndWithTheirReasonAndTheRestCompletes(t *testing.T) {
	web := startWeb(t)
	seeds := append(web.HostileSeeds(), fixtures.HostBroken, fixtures.HostCatchAll, fixtures.HostAcme,
		web.URL(fixtures.HostBroken, fixtures.PathTrickle)) // a URL seed: the broken catalog does not link it
	sink := &crawlertest.Collector{}
	cfg := webConfig(web)
	// The huge bodies (5 MiB) only need to pass the limit: a 512 KiB limit
	// gets there within the 2 s fetch timeout even on a loaded machine under
	// -race, where streaming the default 4 MiB did not always.
	cfg.MaxBodySize = 512 << 10
	c := newCrawler(t, cfg, sink)
	rep := crawl(t, c, seeds...)

	broken := func(p string) string { return web.URL(fixtures.HostBroken, p) }
	wk := func(host string) string { return "https://" + host + fixtures.PathWellKnown }
	cases := []struct {
		name   string
		url    string
		status normalize.FetchStatus
		reason string
		code   string // a problem code the result must carry
	}{
		{"invalid json", broken(fixtures.PathInvalidJSON), normalize.StatusFailed, crawler.ReasonInvalidJSON, normalize.CodeInvalidJSON},
		{"huge body", broken(fixtures.PathHuge), normalize.StatusFailed, crawler.ReasonTooLarge, ""},
		{"trickle", broken(fixtures.PathTrickle), normalize.StatusFailed, crawler.ReasonTimeout, ""},
		{"redirect loop", broken(fixtures.PathRedirectLoop), normalize.StatusFailed, crawler.ReasonRedirectLoop, ""},
		{"404", broken(fixtures.PathNotFound), normalize.StatusFailed, crawler.ReasonHTTPStatus, ""},
		{"500", broken(fixtures.PathServerError), normalize.StatusFailed, crawler.ReasonHTTPStatus, ""},
		{"503", broken(fixtures.PathUnavailable), normalize.StatusFailed, crawler.ReasonHTTPStatus, ""},
		{"429", broken(fixtures.PathRateLimited), normalize.StatusFailed, crawler.ReasonHTTPStatus, ""},
		{"html error page", broken(fixtures.PathNotJSON), normalize.StatusFailed, crawler.ReasonNotJSON, ""},
		{"empty body", broken(fixtures.PathEmpty), normalize.StatusFailed, crawler.ReasonNotJSON, ""},
		{"json served as html", broken(fixtures.PathJSONAsHTML), normalize.StatusOK, "", normalize.CodeUnexpectedMediaType},
		{"gzip", broken(fixtures.PathGzip), normalize.StatusOK, "", ""},
		{"catch-all html host", wk(fixtures.HostCatchAll), normalize.StatusFailed, crawler.ReasonNotJSON, ""},
		{"slow host", wk(fixtures.HostSlow), normalize.StatusFailed, crawler.ReasonTimeout, ""},
		{"huge host", wk(fixtures.HostHuge), normalize.StatusFailed, crawler.ReasonTooLarge, ""},
		{"loop host", wk(fixtures.HostLoop), normalize.StatusFailed, crawler.ReasonRedirectLoop, ""},
		// These hosts answer robots.txt with 429/5xx too: RFC 9309 says
		// complete disallow, so their catalogs are not even requested.
		{"rate-limited host", wk(fixtures.HostRateLimited), normalize.StatusFailed, crawler.ReasonRobotsUnavailable, ""},
		{"unavailable host", wk(fixtures.HostUnavailable), normalize.StatusFailed, crawler.ReasonRobotsUnavailable, ""},
		{"error host", wk(fixtures.HostError), normalize.StatusFailed, crawler.ReasonRobotsUnavailable, ""},
		{"good host", wk(fixtures.HostAcme), normalize.StatusOK, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := find(rep, tc.url)
			if !ok {
				t.Fatalf("%s not in the report", tc.url)
			}
			if got.Status != tc.status || got.Reason != tc.reason {
				t.Fatalf("%s: status %s reason %q (%s), want %s %q", tc.url, got.Status, got.Reason, got.Error, tc.status, tc.reason)
			}
			if tc.status == normalize.StatusOK && got.Records == 0 {
				t.Errorf("%s: ok without records", tc.url)
			}
			if tc.code != "" && !hasProblem(got.Problems, tc.code) {
				t.Errorf("%s: problems %+v lack %s", tc.url, got.Problems, tc.code)
			}
		})
	}
	// A failed fetch reaches the sink as failed, with no records, so ingest
	// keeps what it has.
	for _, r := range sink.Results() {
		if r.Status == normalize.StatusFailed && (len(r.Records) > 0 || r.Reason == "") {
			t.Errorf("failed result %s carries %d records, reason %q", r.Catalog, len(r.Records), r.Reason)
		}
	}
	// Retries are bounded: the 500 path was asked MaxAttempts times, no more.
	n := 0
	for _, r := range web.RequestsFor(fixtures.HostBroken) {
		if r.Path == fixtures.PathServerError {
			n++
		}
	}
	if want := webConfig(web).MaxAttempts; n != want {
		t.Errorf("%s requested %d times, want %d attempts", fixtures.PathServerError, n, want)
	}
}

func hasProblem(ps []normalize.Problem, code string) bool {
	for _, p := range ps {
		if p.Code == code {
			return true
		}
	}
	return false
}

// TestGzipBombIsBounded serves a 256 MiB-inflating gzip stream of about 250 KiB in each way a layer might inflate it
// (Content-Encoding x-gzip, gzip sent unasked or asked, a Content-Type naming
// gzip, a .gz path) against a 1 MiB body limit. Each fetch fails with a
// clear reason, and the crawl allocates a small multiple of the limit, not
// the inflated size.
func TestGzipBombIsBounded(t *testing.T) {
	const limit, inflated = 1 << 20, 256 << 20
	bomb := fixtures.GzipBomb(inflated)
	web := startWeb(t)
	cases := []struct {
		name, path string
		b          fixtures.Behavior
		reason     string
	}{
		{"content-encoding x-gzip", "/bomb-x.json", fixtures.Behavior{Body: bomb, Header: map[string]string{"Content-Encoding": "x-gzip"}}, crawler.ReasonTooLarge},
		{"content-encoding gzip", "/bomb-gzip.json", fixtures.Behavior{Body: bomb, Header: map[string]string{"Content-Encoding": "gzip"}}, crawler.ReasonTooLarge},
		{"content-encoding GZIP, spaced", "/bomb-upper.json", fixtures.Behavior{Body: bomb, Header: map[string]string{"Content-Encoding": " GZIP "}}, crawler.ReasonTooLarge},
		{"empty members over the limit", "/bomb-members.json", fixtures.Behavior{Body: emptyMembers(limit + 1), Header: map[string]string{"Content-Encoding": "x-gzip"}}, crawler.ReasonTooLarge},
		{"content-type gzip", "/bomb-type.json", fixtures.Behavior{Body: bomb, ContentType: "application/gzip"}, crawler.ReasonNotJSON},
		{"gz path", "/ai-catalog.xml.gz", fixtures.Behavior{Body: bomb, ContentType: "application/octet-stream"}, crawler.ReasonNotJSON},
	}
	cfg := webConfig(web)
	cfg.MaxBodySize = limit
	c := newCrawler(t, cfg, &crawlertest.Collector{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			web.Script(fixtures.HostBroken, tc.path, tc.b)
			u := web.URL(fixtures.HostBroken, tc.path)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			rep := crawl(t, c, u)
			runtime.ReadMemStats(&after)
			got, ok := find(rep, u)
			if !ok || got.Status != normalize.StatusFailed || got.Reason != tc.reason {
				t.Fatalf("%s: %+v, want failed %s", u, got, tc.reason)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
				t.Fatalf("fetching the bomb allocated %d MiB (limit %d MiB, inflated %d MiB)", alloc>>20, limit>>20, inflated>>20)
			}
		})
	}
}

// emptyMembers is a gzip stream of at least n bytes that inflates to nothing.
func emptyMembers(n int) []byte {
	var one bytes.Buffer
	zw := gzip.NewWriter(&one)
	zw.Close()
	return bytes.Repeat(one.Bytes(), n/one.Len()+1)
}
