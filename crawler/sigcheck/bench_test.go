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
// every entry with a digest) with a fresh Verifier, then the same bytes
// again (again_us: the kept verdicts), and, in the same run, only
// normalizes them as a baseline: ratio_verify_normalize is what a first
// check costs next to parsing, in time on one goroutine.
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
	now := time.Now()
	check := func(v *sigcheck.Verifier) time.Duration {
		start := time.Now()
		for _, body := range bodies {
			if tv := v.Catalog(b.Context(), f, body, now); tv == nil || tv.Catalog == nil || !tv.Catalog.Valid() {
				b.Fatalf("verdicts %+v", tv)
			}
		}
		return time.Since(start)
	}
	var verify, cached, parse time.Duration
	for b.Loop() {
		v := sigcheck.New(sigcheck.Config{}) // cold: every DID document and signature checked
		verify += check(v)
		cached += check(v) // the same bytes again: the verdicts are kept
		start := time.Now()
		for i, body := range bodies {
			normalize.Catalog(body, normalize.Options{Origin: origins[i]})
		}
		parse += time.Since(start)
	}
	n := float64(b.N) * float64(len(bodies))
	b.ReportMetric(float64(len(bodies)), "catalogs")
	b.ReportMetric(float64(verify.Microseconds())/n, "verify_us/catalog")
	b.ReportMetric(float64(parse.Microseconds())/n, "normalize_us/catalog")
	b.ReportMetric(float64(cached.Microseconds())/n, "again_us/catalog")
	b.ReportMetric(verify.Seconds()/parse.Seconds(), "ratio_verify_normalize")
}
