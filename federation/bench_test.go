package federation

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkAutoLatency measures auto mode with three healthy upstreams
// (answering after 2, 5 and 10 ms) against the slowest upstream alone, in
// the same run, alternating the two. It reports both p50s and their
// difference; the target is a difference of at most 10 ms. ns/op covers
// 25 pairs of searches.
func BenchmarkAutoLatency(b *testing.B) {
	var entries []map[string]any
	for i := range 20 {
		entries = append(entries, entry(fmt.Sprintf("urn:ai:bench.example:agent:a%d", i), fmt.Sprintf("a%d", i)))
	}
	delays := []time.Duration{2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond}
	var urls []string
	for _, d := range delays {
		urls = append(urls, newSwapServer(b, listHandler(entries, d)).URL)
	}
	three := newFederator(b, Config{Upstreams: urls})
	slowest := newFederator(b, Config{Upstreams: urls[2:]})
	var local []Hit
	for i := range 20 {
		local = append(local, localHit(fmt.Sprintf("urn:ai:local.example:agent:l%d", i), float64(90-i), false))
	}
	q := Query{Text: "bench", PageSize: 20}
	run := func(f *Federator) time.Duration {
		start := time.Now()
		resp, err := f.Search(b.Context(), ModeAuto, q, "", nil, localOf(local))
		d := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range resp.Upstreams {
			if o.Status != StatusOK {
				b.Fatalf("upstream %+v", o)
			}
		}
		return d
	}
	run(three) // warm connections
	run(slowest)
	var t3, t1 []time.Duration
	b.ResetTimer()
	// Each iteration takes several samples, so that `make bench` (-benchtime 1x)
	// still reports a meaningful median.
	const samples = 25
	for b.Loop() {
		for range samples {
			t3 = append(t3, run(three))
			t1 = append(t1, run(slowest))
		}
	}
	p3, p1 := p50(t3), p50(t1)
	b.ReportMetric(ms(p3), "p50-three-ms")
	b.ReportMetric(ms(p1), "p50-slowest-ms")
	b.ReportMetric(ms(p3-p1), "p50-overhead-ms")
}

func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
