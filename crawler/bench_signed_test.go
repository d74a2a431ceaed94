package crawler_test

import (
	"context"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

// trustSink counts records, and the signed ones.
type trustSink struct {
	countSink
	signed atomic.Int64
}

func (s *trustSink) Put(ctx context.Context, r normalize.CatalogResult) error {
	for _, rec := range r.Records {
		if rec.Trust != nil && rec.Trust.Level == normalize.TrustSigned {
			s.signed.Add(1)
		}
	}
	return s.countSink.Put(ctx, r)
}

// BenchmarkCrawlSigned crawls the generated 10,000-manifest web in which
// every catalog and every entry's trust manifest is signed (each host
// serving its DID document), as BenchmarkCrawlGenerated crawls the
// unsigned one, twice per iteration: with verification on (signatures, the
// DID documents fetched through the crawler with a cold cache, artifact
// digests) and off, in alternating order. It prints both rates and the
// ratios: verification should cost at most 10% of the crawl
// (ratio_time_verify_on_off <= 1.10). Each crawler then crawls again,
// warm: ratio_recrawl_time_verify_on_off compares those second crawls (a
// signed catalog answers 304 while its verdict holds). The web runs in a
// child process.
func BenchmarkCrawlSigned(b *testing.B) {
	srv := startFixtureServer(b, true)
	seeds := fixtures.Generate(benchHosts, benchPerHost, benchSeed).Seeds()
	base := srv.crawlConfig()
	// run crawls the web with a fresh crawler, then again with the same
	// one (its conditional GET state and DID cache warm), and returns the
	// first crawl's time and CPU, the second's time, the records found and
	// the signed ones.
	run := func(verify bool) (d, cpu, again time.Duration, got, signed int64) {
		b.Helper()
		cfg := base
		cfg.DisableVerification = !verify
		sink := &trustSink{}
		c, err := crawler.New(cfg, sink, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		runtime.GC()
		start, cpu0 := time.Now(), cpuTime()
		rep, err := c.Crawl(context.Background(), seeds)
		d, cpu = time.Since(start), cpuTime()-cpu0
		if err != nil {
			b.Fatal(err)
		}
		got, signed = sink.records.Load(), sink.signed.Load()
		if got < benchHosts*benchPerHost*9/10 || rep.Totals.Failed != 0 {
			b.Fatalf("verify=%v: crawl found %d records, %d failed catalogs: %v", verify, got, rep.Totals.Failed, rep.Totals.Reasons)
		}
		start = time.Now()
		if _, err := c.Crawl(context.Background(), seeds); err != nil {
			b.Fatal(err)
		}
		return d, cpu, time.Since(start), got, signed
	}
	// The machine is shared and a crawl of loopback hosts is CPU bound, so
	// one pair of crawls is noisy: each iteration runs benchPairs pairs in
	// alternating order; the ratios are of the totals, and the medians of
	// the pairs' ratios are printed beside them.
	var on, off, onCPU, offCPU, onAgain, offAgain time.Duration
	var timeRatios, cpuRatios []float64
	var manifests, signed int64
	for b.Loop() {
		for pair := range benchPairs {
			var d, cpu, again [2]time.Duration // [off, on]
			for k := range 2 {
				verify := (k+pair)%2 == 0
				var dd, cc, aa time.Duration
				var got, s int64
				// Labelled so that a -cpuprofile splits by verify=on/off
				// (go tool pprof -tagfocus verify=on).
				pprof.Do(context.Background(), pprof.Labels("verify", strconv.FormatBool(verify)), func(context.Context) {
					dd, cc, aa, got, s = run(verify)
				})
				i := 0
				if verify {
					i, signed = 1, s
				}
				d[i], cpu[i], again[i], manifests = dd, cc, aa, got
			}
			off, on, offCPU, onCPU = off+d[0], on+d[1], offCPU+cpu[0], onCPU+cpu[1]
			offAgain, onAgain = offAgain+again[0], onAgain+again[1]
			timeRatios = append(timeRatios, d[1].Seconds()/d[0].Seconds())
			cpuRatios = append(cpuRatios, cpu[1].Seconds()/cpu[0].Seconds())
		}
	}
	// Every entry is covered by its catalog's signature and ends signed; a
	// broken fixture or verifier shows here, not as a fast crawl.
	if signed < manifests*9/10 {
		b.Fatalf("only %d of %d records signed with verification on", signed, manifests)
	}
	n := float64(b.N * benchPairs)
	b.ReportMetric(float64(manifests), "manifests")
	b.ReportMetric(float64(signed), "signed_records")
	b.ReportMetric(float64(manifests)*n/on.Seconds(), "verify_on_manifests/s")
	b.ReportMetric(float64(manifests)*n/off.Seconds(), "verify_off_manifests/s")
	b.ReportMetric(on.Seconds()/off.Seconds(), "ratio_time_verify_on_off")
	b.ReportMetric(median(timeRatios), "ratio_time_median_pair")
	b.ReportMetric(onCPU.Seconds()/n, "verify_on_cpu_s")
	b.ReportMetric(offCPU.Seconds()/n, "verify_off_cpu_s")
	b.ReportMetric(onCPU.Seconds()/offCPU.Seconds(), "ratio_cpu_verify_on_off")
	b.ReportMetric(median(cpuRatios), "ratio_cpu_median_pair")
	b.ReportMetric(onAgain.Seconds()/offAgain.Seconds(), "ratio_recrawl_time_verify_on_off")
}

// benchPairs is how many on/off pairs of crawls one iteration runs.
const benchPairs = 3

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
