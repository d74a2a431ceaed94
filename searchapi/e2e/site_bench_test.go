package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/searchapi"
	"github.com/agentfinder/agentfinder/searchapi/web"
)

// BenchmarkSitePage measures the search page (GET /?q=...) against the
// search it shows (POST /search with the same text, page size and
// evidence), side by side over loopback HTTP in alternating segments, one
// client. Records: AGENTFINDER_BENCH_RECORDS (default 10000); requests per
// side: AGENTFINDER_BENCH_OPS (default 400). Target: the page adds at most
// 2 ms to the p50 of the search. Run once:
// go test -run '^$' -bench SitePage -benchtime 1x ./searchapi/e2e/
func BenchmarkSitePage(b *testing.B) {
	n := envInt("AGENTFINDER_BENCH_RECORDS", 10000)
	ops := envInt("AGENTFINDER_BENCH_OPS", 400)
	ms, name, rng := benchIndex(b, "benchsite", n, 3, nil)
	_, hs := benchServer(b, ms, name, func(c *searchapi.Config) {
		c.Now = func() time.Time { return time.Date(2026, 6, 1, 1, 0, 0, 0, time.UTC) }
	})
	client := meili.NewHTTPClient(10 * time.Second)

	type pair struct {
		page string
		body []byte
	}
	var pairs []pair
	for i := range 32 {
		var words []string
		for range 1 + i%3 {
			words = append(words, benchWords[rng.IntN(len(benchWords))])
		}
		text := strings.Join(words, " ")
		body, _ := json.Marshal(map[string]any{"query": map[string]any{"text": text, "federation": "none"}, "pageSize": web.PageSize, "includeEvidence": true})
		pairs = append(pairs, pair{page: "/?" + url.Values{"q": {text}, "federation": {"none"}}.Encode(), body: body})
	}
	do := func(p pair, page bool) error {
		var req *http.Request
		if page {
			req, _ = http.NewRequestWithContext(context.Background(), http.MethodGet, hs.URL+p.page, nil)
			req.Header.Set("Accept", "text/html")
		} else {
			req, _ = http.NewRequestWithContext(context.Background(), http.MethodPost, hs.URL+"/search", bytes.NewReader(p.body))
			req.Header.Set("Content-Type", "application/json")
		}
		return readThrough(client, req)
	}
	for _, p := range pairs { // warm both paths
		if err := do(p, false); err != nil {
			b.Fatal(err)
		}
		if err := do(p, true); err != nil {
			b.Fatal(err)
		}
	}
	// The load on a shared machine changes by the second: requests
	// alternate (page, search, search, page, ...) so both sides see the
	// same conditions, and each page is paired with the search next to it.
	for b.Loop() {
		var api, page, added []time.Duration
		for i := range ops {
			p := pairs[i%len(pairs)]
			var d [2]time.Duration
			for k, asPage := range []bool{i%2 == 0, i%2 == 1} {
				s := time.Now()
				if err := do(p, asPage); err != nil {
					b.Fatal(err)
				}
				d[k] = time.Since(s)
				if asPage {
					page = append(page, d[k])
				} else {
					api = append(api, d[k])
				}
			}
			if i%2 == 0 {
				added = append(added, d[0]-d[1])
			} else {
				added = append(added, d[1]-d[0])
			}
		}
		ap50, pp50, add50 := pct(api, 50), pct(page, 50), pct(added, 50)
		b.ReportMetric(ms2(ap50), "search_p50_ms")
		b.ReportMetric(ms2(pp50), "page_p50_ms")
		b.ReportMetric(ms2(pp50-ap50), "page_added_p50_ms")
		b.ReportMetric(ms2(add50), "page_added_paired_p50_ms")
		b.ReportMetric(float64(pp50)/float64(ap50), "page_ratio_p50")
		b.Logf("%d records, %d requests each: POST /search p50 %.2f ms p99 %.2f ms | page p50 %.2f ms p99 %.2f ms | page adds %.2f ms at p50 (median of paired differences %.2f ms; ratio %.2f; target <= 2 ms)",
			n, len(api), ms2(ap50), ms2(pct(api, 99)), ms2(pp50), ms2(pct(page, 99)), ms2(pp50-ap50), ms2(add50), float64(pp50)/float64(ap50))
	}
}
