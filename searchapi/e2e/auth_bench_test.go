package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi"
	"github.com/agentfinder/agentfinder/searchapi/authn"
)

// BenchmarkSearchAuth measures POST /search p50 with auth on (optional
// mode, a valid API key whose group sees a tenth of the records) against
// auth off (anonymous), over the same index and query mix, interleaved in
// short alternating segments in the same run. Records:
// AGENTFINDER_BENCH_RECORDS (default 20000); requests per side:
// AGENTFINDER_BENCH_OPS (default 1000). Run once: go test -run '^$' -bench
// SearchAuth -benchtime 1x ./searchapi/e2e/. Target: p50 rises by at most 0.5 ms.
func BenchmarkSearchAuth(b *testing.B) {
	n := envInt("AGENTFINDER_BENCH_RECORDS", 20000)
	ops := envInt("AGENTFINDER_BENCH_OPS", 1000)
	ms, name, rng := benchIndex(b, "benchauth", n, 1, func(j int, d *normalize.Document) {
		if j%10 == 0 {
			d.Visibility = []string{"hr"}
		}
	})
	keysPath := filepath.Join(b.TempDir(), "keys.json")
	writeBenchKeys(b, keysPath)
	keys, err := authn.LoadKeys(keysPath)
	if err != nil {
		b.Fatal(err)
	}
	serve := func(mode searchapi.AuthMode, v []searchapi.Verifier) *httptest.Server {
		_, hs := benchServer(b, ms, name, func(c *searchapi.Config) { c.Auth, c.Verifiers = mode, v })
		return hs
	}
	off, on := serve(searchapi.AuthOff, nil), serve(searchapi.AuthOptional, []searchapi.Verifier{keys})
	client := meili.NewHTTPClient(10 * time.Second)
	var bodies [][]byte
	for i := range 64 {
		q := map[string]any{"text": benchWords[rng.IntN(len(benchWords))] + " " + benchWords[rng.IntN(len(benchWords))], "federation": "none"}
		if i%3 == 0 {
			q["type"] = benchTypes[i%len(benchTypes)]
		}
		body, _ := json.Marshal(map[string]any{"query": q, "pageSize": 10})
		bodies = append(bodies, body)
	}
	sides := []struct{ url, auth string }{{off.URL, ""}, {on.URL, "Bearer bench-hr-key"}}
	for _, body := range bodies { // warm up both
		for _, s := range sides {
			if err := postSearch(context.Background(), client, s.url, s.auth, body); err != nil {
				b.Fatal(err)
			}
		}
	}
	const rounds = 10
	per := max(1, ops/rounds)
	for b.Loop() {
		lat, errs := alternate(len(sides), rounds, per, func(side, i int) error {
			return postSearch(context.Background(), client, sides[side].url, sides[side].auth, bodies[i%len(bodies)])
		})
		offP50, onP50 := pct(lat[0], 50), pct(lat[1], 50)
		b.ReportMetric(ms2(offP50), "off_p50_ms")
		b.ReportMetric(ms2(onP50), "on_p50_ms")
		b.ReportMetric(ms2(onP50-offP50), "p50_diff_ms")
		b.ReportMetric(float64(onP50)/float64(offP50), "p50_ratio")
		b.ReportMetric(float64(errs), "errors")
		b.Logf("%d records, %d requests per side: auth off p50 %.2f ms (p99 %.2f) | auth optional + key p50 %.2f ms (p99 %.2f) | diff %+.2f ms, ratio %.3f (target diff <= 0.5 ms), errors %d",
			n, len(lat[0]), ms2(offP50), ms2(pct(lat[0], 99)), ms2(onP50), ms2(pct(lat[1], 99)), ms2(onP50-offP50), float64(onP50)/float64(offP50), errs)
	}
}

// writeBenchKeys writes a keys file with one hr key among 20 others, so the
// check compares against a realistic number of hashes.
func writeBenchKeys(b *testing.B, path string) {
	b.Helper()
	keys := []map[string]any{{"name": "hr", "sha256": authn.HashKey("bench-hr-key"), "groups": []string{"hr"}}}
	for i := range 20 {
		keys = append(keys, map[string]any{"name": fmt.Sprintf("k%d", i), "sha256": authn.HashKey(fmt.Sprintf("other-%d", i)), "groups": []string{"g"}})
	}
	body, _ := json.Marshal(map[string]any{"keys": keys})
	if err := os.WriteFile(path, body, 0o600); err != nil {
		b.Fatal(err)
	}
}
