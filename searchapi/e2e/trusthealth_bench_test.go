package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi"
)

// BenchmarkSearchTrustFilter measures POST /search p50 with the trust and
// health filters against the same queries without them, over one index
// and query mix, interleaved in short alternating segments in the same
// run. A third of the records carry no trust or health (an index from
// before they existed), so the filters take their slowest path: the
// stored value OR the rule for a record without it. Sides: none,
// signedOnly + liveOnly, trust.level domain (verified publishers without a
// verdict count). Records: AGENTFINDER_BENCH_RECORDS (default 20000);
// requests per side: AGENTFINDER_BENCH_OPS (default 600). Run once:
// go test -run '^$' -bench SearchTrustFilter -benchtime 1x ./searchapi/e2e/.
func BenchmarkSearchTrustFilter(b *testing.B) {
	n := envInt("AGENTFINDER_BENCH_RECORDS", 20000)
	ops := envInt("AGENTFINDER_BENCH_OPS", 600)
	levels := []string{normalize.TrustSigned, normalize.TrustDomain, normalize.TrustNone}
	statuses := []string{normalize.HealthUp, normalize.HealthDown, normalize.HealthAuthRequired, normalize.HealthUnknown}
	ms, name, rng := benchIndex(b, "benchtrust", n, 1, func(j int, d *normalize.Document) {
		d.Trust, d.Health = nil, nil
		if j%3 != 0 {
			d.Trust = &normalize.Trust{Level: levels[(j/3)%len(levels)]}
			d.Health = &normalize.Health{Status: statuses[(j/3)%len(statuses)]}
		}
	})
	_, hs := benchServer(b, ms, name, func(c *searchapi.Config) { c.MinScore = new(int) })
	client := meili.NewHTTPClient(10 * time.Second)
	sides := []struct {
		name string
		opts map[string]any
	}{
		{"none", nil},
		{"signedOnly+liveOnly", map[string]any{"signedOnly": true, "liveOnly": true}},
		{"trust.level=domain", map[string]any{"filter": map[string]any{"trust.level": "domain"}}},
	}
	bodies := make([][][]byte, len(sides))
	for range 64 {
		text := benchWords[rng.IntN(len(benchWords))] + " " + benchWords[rng.IntN(len(benchWords))]
		for s, side := range sides {
			q := map[string]any{"text": text, "federation": "none"}
			for k, v := range side.opts {
				q[k] = v
			}
			body, _ := json.Marshal(map[string]any{"query": q, "pageSize": 10})
			bodies[s] = append(bodies[s], body)
		}
	}
	call := func(body []byte) error { return postSearch(context.Background(), client, hs.URL, "", body) }
	for s := range sides { // warm up
		for _, body := range bodies[s] {
			if err := call(body); err != nil {
				b.Fatal(err)
			}
		}
	}
	const rounds = 10
	per := max(1, ops/rounds)
	for b.Loop() {
		lat, errs := alternate(len(sides), rounds, per, func(side, i int) error {
			return call(bodies[side][i%len(bodies[side])])
		})
		base := pct(lat[0], 50)
		msg := fmt.Sprintf("%d records (a third without trust or health), %d requests per side: %s p50 %.2f ms", n, len(lat[0]), sides[0].name, ms2(base))
		for s := 1; s < len(sides); s++ {
			p := pct(lat[s], 50)
			b.ReportMetric(float64(p)/float64(base), "p50_ratio_"+fmt.Sprint(s))
			msg += fmt.Sprintf(" | %s p50 %.2f ms (p99 %.2f), ratio %.3f", sides[s].name, ms2(p), ms2(pct(lat[s], 99)), float64(p)/float64(base))
		}
		b.ReportMetric(ms2(base), "none_p50_ms")
		b.ReportMetric(float64(errs), "errors")
		b.Logf("%s; errors %d", msg, errs)
	}
}
