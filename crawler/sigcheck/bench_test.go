package sigcheck_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler/sigcheck"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

// BenchmarkVerifyCatalog checks the signatures and digests of the catalogs
// of a signed generated web (50 hosts x 20 entries: every catalog signed,
// every entry with a digest; DID documents cached after the first) and, in
// the same run, only normalizes them as a baseline: ratio_verify_normalize
// is what checking costs next to parsing, in time on one goroutine.
func BenchmarkVerifyCatalog(b *testing.B) {
	w, err := fixtures.Start(context.Background(), fixtures.Options{Generated: fixtures.GenerateSigned(50, 20, 1), NoWorld: true})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	f := &docs{m: map[string][]byte{}}
	var bodies [][]byte
	var origins []string
	for _, h := range w.Hosts() {
		f.m["https://"+h+"/.well-known/did.json"] = fixtures.DIDDocument(h)
		body, _ := w.File(h, fixtures.PathWellKnown)
		bodies, origins = append(bodies, body), append(origins, "https://"+h+fixtures.PathWellKnown)
		var cat struct {
			Collections []struct{ URL string } `json:"collections"`
		}
		_ = json.Unmarshal(body, &cat)
		for _, c := range cat.Collections {
			if u, err := url.Parse(c.URL); err == nil {
				if sub, ok := w.File(h, u.Path); ok {
					bodies, origins = append(bodies, sub), append(origins, c.URL)
				}
			}
		}
	}
	v := sigcheck.New(sigcheck.Config{})
	now := time.Now()
	var verify, parse time.Duration
	for b.Loop() {
		start := time.Now()
		for _, body := range bodies {
			if tv := v.Catalog(b.Context(), f, body, now); tv == nil || tv.Catalog == nil || !tv.Catalog.Valid() {
				b.Fatalf("verdicts %+v", tv)
			}
		}
		verify += time.Since(start)
		start = time.Now()
		for i, body := range bodies {
			normalize.Catalog(body, normalize.Options{Origin: origins[i]})
		}
		parse += time.Since(start)
	}
	n := float64(b.N) * float64(len(bodies))
	b.ReportMetric(float64(len(bodies)), "catalogs")
	b.ReportMetric(float64(verify.Microseconds())/n, "verify_us/catalog")
	b.ReportMetric(float64(parse.Microseconds())/n, "normalize_us/catalog")
	b.ReportMetric(verify.Seconds()/parse.Seconds(), "ratio_verify_normalize")
}
