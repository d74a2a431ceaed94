package crawler_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/sigcheck"
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
//
// Beside them it prints the floor: the CPU that checking every catalog's
// signature cannot do without (signatureFloor, on the catalogs the web
// serves, in the same run), added to the off crawl's CPU:
// ratio_cpu_floor_es256 counts the ES256 verifications alone,
// ratio_cpu_floor_signature also the JCS form and the hash they verify.
// No verifier can do better than these without dropping a check.
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
	var on, off, onCPU, offCPU, onAgain, offAgain, floorES256, floorSig time.Duration
	var floorCatalogs int
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
		// After the crawls, so that the catalogs read for it are not in
		// the heap while they run.
		var served []servedCatalog
		srv.call(b, "catalogs", &served)
		floor := prepareFloor(b, served)
		es256, sig := floor.measure(b)
		floorES256, floorSig, floorCatalogs = floorES256+es256, floorSig+sig, len(floor)
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
	offPerCrawl := offCPU.Seconds() / n
	b.ReportMetric(float64(floorCatalogs), "floor_catalogs")
	b.ReportMetric(floorES256.Seconds()/float64(b.N), "floor_es256_cpu_s")
	b.ReportMetric(floorSig.Seconds()/float64(b.N), "floor_signature_cpu_s")
	b.ReportMetric((offPerCrawl+floorES256.Seconds()/float64(b.N))/offPerCrawl, "ratio_cpu_floor_es256")
	b.ReportMetric((offPerCrawl+floorSig.Seconds()/float64(b.N))/offPerCrawl, "ratio_cpu_floor_signature")
}

// floorCatalog is one served catalog ready for its signature check: its
// signer's key (from the fixture's key, as its DID document lists it), the
// JWS's protected header and R and S, and the hash of its signing input.
type floorCatalog struct {
	body   []byte
	key    *ecdsa.PublicKey
	header string
	r, s   *big.Int
	hash   []byte
}

// floorCatalogs are the catalogs signatureFloor checks.
type floorCatalogs []floorCatalog

// prepareFloor reads the whole-catalog signature of each served catalog.
func prepareFloor(b *testing.B, served []servedCatalog) floorCatalogs {
	keys := map[string]*ecdsa.PublicKey{}
	var out floorCatalogs
	for _, c := range served {
		if keys[c.Host] == nil {
			keys[c.Host] = &fixtures.SigningKey(c.Host).PublicKey
		}
		var doc struct {
			Signature string `json:"signature"`
		}
		if err := json.Unmarshal(c.Body, &doc); err != nil {
			b.Fatalf("catalog of %s: %v", c.Host, err)
		}
		header, enc, _ := strings.Cut(doc.Signature, "..")
		rs, err := base64.RawURLEncoding.DecodeString(enc)
		if err != nil || len(rs) != 64 {
			b.Fatalf("catalog of %s: signature %q is not a detached ES256 JWS", c.Host, doc.Signature)
		}
		fc := floorCatalog{body: c.Body, key: keys[c.Host], header: header, r: new(big.Int).SetBytes(rs[:32]), s: new(big.Int).SetBytes(rs[32:])}
		fc.hash = fc.signingHash(b)
		out = append(out, fc)
	}
	if len(out) == 0 {
		b.Fatal("the fixture web serves no catalogs")
	}
	return out
}

// signingHash is the SHA-256 of the catalog's JWS signing input: the
// protected header, a dot and the base64url of the JCS form of the catalog
// without its signature.
func (fc *floorCatalog) signingHash(b *testing.B) []byte {
	payload, err := sigcheck.SignedPayload(fc.body, false)
	if err != nil {
		b.Fatal(err)
	}
	h := sha256.New()
	_, _ = io.WriteString(h, fc.header+".")
	enc := base64.NewEncoder(base64.RawURLEncoding, h)
	_, _ = enc.Write(payload)
	_ = enc.Close()
	return h.Sum(nil)
}

// measure is the floor of checking the catalogs' signatures, in CPU time
// on one goroutine: es256 is one crypto/ecdsa.Verify per catalog over its
// signing input's hash; sig also makes that hash from the catalog as
// served (JCS form, signature cut out, base64url, SHA-256). Fetching and
// reading the signers' DID documents is not counted. Every signature must
// verify.
func (fcs floorCatalogs) measure(b *testing.B) (es256, sig time.Duration) {
	verify := func(fc *floorCatalog, hash []byte) {
		if !ecdsa.Verify(fc.key, hash, fc.r, fc.s) {
			b.Fatal("a served catalog's signature does not verify")
		}
	}
	runtime.GC()
	cpu0 := cpuTime()
	for i := range fcs {
		verify(&fcs[i], fcs[i].hash)
	}
	es256 = cpuTime() - cpu0
	runtime.GC()
	cpu0 = cpuTime()
	for i := range fcs {
		verify(&fcs[i], fcs[i].signingHash(b))
	}
	return es256, cpuTime() - cpu0
}

// benchPairs is how many on/off pairs of crawls one iteration runs.
const benchPairs = 3

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
