package embed

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

const (
	benchQuery = "book a flight to Tokyo" // 7 tokens
	benchDesc  = "Summarizes GitHub pull requests, reviews code changes for bugs and style problems, " +
		"and posts inline comments so that maintainers can merge contributions faster."
)

// BenchmarkQuery is one short query, single-threaded, cache bypassed.
func BenchmarkQuery(b *testing.B) { benchForward(b, benchQuery) }

// BenchmarkDescription is one ~40-token description, single-threaded,
// cache bypassed.
func BenchmarkDescription(b *testing.B) { benchForward(b, benchDesc) }

// benchForward tokenizes and embeds text on one goroutine, bypassing the
// cache, and reports CPU time and the token count.
func benchForward(b *testing.B, text string) {
	m := modelForTest(b)
	c0 := cpuTime()
	for b.Loop() {
		m.w.forward(m.w.tokenize.encode(text))
	}
	reportCPU(b, c0)
	b.ReportMetric(float64(len(m.Tokens(text))), "tokens")
}

// BenchmarkEmbedEntries embeds 1,000 distinct entry texts through Embed
// (all cores, empty cache) and reports entries per second and the
// extrapolated seconds for 10,000 entries.
func BenchmarkEmbedEntries(b *testing.B) {
	m := modelForTest(b)
	const n = 1000
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("Agent %d. %s Tags: %s.", i, benchDesc, strings.Repeat("code ", i%5+1))
	}
	c0 := cpuTime()
	for b.Loop() {
		m.SetCacheSize(0)
		if _, err := m.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
	if c := cpuTime() - c0; c > 0 {
		b.ReportMetric(float64(c.Milliseconds())/float64(b.N*n), "cpu-ms/entry")
	}
	perEntry := b.Elapsed().Seconds() / float64(b.N*n)
	b.ReportMetric(1/perEntry, "entries/s")
	b.ReportMetric(perEntry*10000, "s/10k-entries")
	m.SetCacheSize(DefaultCacheSize)
}

// reportCPU reports CPU milliseconds per op since c0: on a shared machine
// this is the cost, while ns/op also counts time waiting for a core.
func reportCPU(b *testing.B, c0 time.Duration) {
	if c := cpuTime() - c0; c > 0 {
		b.ReportMetric(float64(c.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}

// BenchmarkMatmul compares the register-tiled kernel with the axpy loop on
// the largest layer shape (FFN 512→1536) for a 12-token input, and reports
// the ratio (axpy time / tiled time) measured in the same run.
func BenchmarkMatmul(b *testing.B) {
	const L, in, out = 12, 512, 1536
	x := make([]float32, L*in)
	w := make([]float32, in*out)
	dst := make([]float32, L*out)
	for i := range x {
		x[i] = float32(i%7) * 0.01
	}
	for i := range w {
		w[i] = float32(i%5) * 0.01
	}
	var base, tiled float64
	b.Run("axpy-baseline", func(b *testing.B) {
		for b.Loop() {
			matmulAccGo(dst, x, w, L, in, out)
		}
		base = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	m := newMatrix(w, in, out)
	bias := make([]float32, out)
	b.Run("tiled", func(b *testing.B) {
		for b.Loop() {
			m.mul(dst, x, bias, L)
		}
		tiled = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		if tiled > 0 && base > 0 {
			b.ReportMetric(base/tiled, "x-vs-axpy")
		}
	})
}
