package embed

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

const (
	benchQuery = "book a flight to Tokyo" // 7 tokens
	benchDesc  = "Summarizes GitHub pull requests, reviews code changes for bugs and style problems, " +
		"and posts inline comments so that maintainers can merge contributions faster."
)

// BenchmarkQuery is one short query, single-threaded, cache bypassed.
func BenchmarkQuery(b *testing.B) {
	m := modelForTest(b)
	ids := m.Tokens(benchQuery)
	b.ReportMetric(float64(len(ids)), "tokens")
	for b.Loop() {
		m.w.forward(m.w.tokenize.encode(benchQuery))
	}
}

// BenchmarkDescription is one ~40-token description, single-threaded,
// cache bypassed; it reports its cost relative to BenchmarkQuery's shape.
func BenchmarkDescription(b *testing.B) {
	m := modelForTest(b)
	ids := m.Tokens(benchDesc)
	b.ReportMetric(float64(len(ids)), "tokens")
	for b.Loop() {
		m.w.forward(m.w.tokenize.encode(benchDesc))
	}
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
	for b.Loop() {
		m.SetCacheSize(0)
		if _, err := m.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
	perEntry := b.Elapsed().Seconds() / float64(b.N*n)
	b.ReportMetric(1/perEntry, "entries/s")
	b.ReportMetric(perEntry*10000, "s/10k-entries")
	m.SetCacheSize(DefaultCacheSize)
}
