package normalize

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkCatalog measures Catalog on a real generated catalog against a
// baseline measured in the same run: decoding the same bytes into generic Go
// values with encoding/json, the least any parser must do. It reports
// ratio_to_decode (Catalog time / decode time).
func BenchmarkCatalog(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("testdata", "realworld", "github-agentfinder-catalog.EXCERPT.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	opts := Options{Origin: "https://github.com/.well-known/ai-catalog.json"}
	for b.Loop() {
		if res := Catalog(body, opts); len(res.Records) != 23 {
			b.Fatalf("records = %d", len(res.Records))
		}
	}
	b.StopTimer()
	start := time.Now()
	for range b.N {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			b.Fatal(err)
		}
	}
	if decode := time.Since(start); decode > 0 {
		b.ReportMetric(float64(b.Elapsed())/float64(decode), "ratio_to_decode")
	}
}
