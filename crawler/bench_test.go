package crawler_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

// The benchmark's generated web: 500 publishers x 20 entries = 10,000
// manifests in about 1,500 catalog documents.
const (
	benchHosts   = 500
	benchPerHost = 20
	benchWorkers = 16
	benchSeed    = 1
)

// fixtureServerEnv makes the test binary a fixture web server (see
// runFixtureServer): the benchmark runs the web in a child process so the
// memory it measures is the crawler's alone.
const fixtureServerEnv = "AGENTFINDER_BENCH_FIXTURE_SERVER"

// fixtureServerSigned as fixtureServerEnv's value serves the signed web
// (fixtures.GenerateSigned) instead.
const fixtureServerSigned = "signed"

// serverInfo is what the child process prints once its web is up.
type serverInfo struct {
	HTTPSPort, HTTPPort int
	DNSAddr, CAFile     string
}

type loggedRequest struct{ Scheme, Host, Path string }

// runFixtureServer serves the generated web (every catalog signed when
// signed) and answers commands on stdin, one per line: "log" prints the
// request log as one JSON line, "reset" empties it, "catalogs" prints the
// catalog documents it serves (servedCatalog) as one JSON line; end of
// input stops the server.
func runFixtureServer(signed bool) int {
	gen := fixtures.Generate(benchHosts, benchPerHost, benchSeed)
	if signed {
		gen = fixtures.GenerateSigned(benchHosts, benchPerHost, benchSeed)
	}
	web, err := fixtures.Start(context.Background(), fixtures.Options{Generated: gen, NoWorld: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer web.Close()
	out := json.NewEncoder(os.Stdout)
	_ = out.Encode(serverInfo{web.HTTPSPort, web.HTTPPort, web.DNSAddr, web.CAFile})
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		switch sc.Text() {
		case "reset":
			web.ResetRequests()
			_ = out.Encode("ok")
		case "log":
			var log []loggedRequest
			for _, r := range web.Requests() {
				log = append(log, loggedRequest{r.Scheme, r.Host, r.Path})
			}
			_ = out.Encode(log)
		case "catalogs":
			_ = out.Encode(servedCatalogs(web))
		}
	}
	return 0
}

// servedCatalog is one catalog document the fixture web serves, as served.
type servedCatalog struct {
	Host string
	Body []byte
}

// servedCatalogs returns the catalogs each host of web serves: its
// well-known catalog and the collections it links.
func servedCatalogs(web *fixtures.Web) []servedCatalog {
	var out []servedCatalog
	for _, h := range web.Hosts() {
		body, ok := web.File(h, fixtures.PathWellKnown)
		if !ok {
			continue
		}
		out = append(out, servedCatalog{h, body})
		var cat struct {
			Collections []struct{ URL string } `json:"collections"`
		}
		_ = json.Unmarshal(body, &cat)
		for _, c := range cat.Collections {
			if u, err := url.Parse(c.URL); err == nil {
				if sub, ok := web.File(h, u.Path); ok {
					out = append(out, servedCatalog{h, sub})
				}
			}
		}
	}
	return out
}

// fixtureServer is the parent's handle on the child process.
type fixtureServer struct {
	info serverInfo
	in   io.WriteCloser
	out  *json.Decoder
	cmd  *exec.Cmd
}

func startFixtureServer(b *testing.B, signed bool) *fixtureServer {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	mode := "1"
	if signed {
		mode = fixtureServerSigned
	}
	cmd.Env = append(os.Environ(), fixtureServerEnv+"="+mode)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	s := &fixtureServer{in: in, out: json.NewDecoder(outPipe), cmd: cmd}
	b.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	if err := s.out.Decode(&s.info); err != nil {
		b.Fatalf("fixture server: %v", err)
	}
	return s
}

// crawlConfig is the benchmarks' crawler configuration for the web s
// serves: its DNS, CA and ports, benchWorkers workers, no per-host limit.
func (s *fixtureServer) crawlConfig() crawler.Config {
	return crawler.Config{
		DNSServer:          s.info.DNSAddr,
		CAFile:             s.info.CAFile,
		PortMap:            map[string]string{"443": strconv.Itoa(s.info.HTTPSPort), "80": strconv.Itoa(s.info.HTTPPort)},
		AllowPrivate:       true,
		Concurrency:        benchWorkers,
		PerHostConcurrency: -1,
		MaxCatalogsPerSeed: 100,
	}
}

func (s *fixtureServer) call(b *testing.B, command string, v any) {
	b.Helper()
	if _, err := fmt.Fprintln(s.in, command); err != nil {
		b.Fatal(err)
	}
	if err := s.out.Decode(v); err != nil {
		b.Fatalf("fixture server %s: %v", command, err)
	}
}

// countSink counts what a crawl hands over.
type countSink struct{ catalogs, records atomic.Int64 }

func (s *countSink) Put(_ context.Context, r normalize.CatalogResult) error {
	s.catalogs.Add(1)
	s.records.Add(int64(len(r.Records)))
	return nil
}

// memPeak samples HeapInuse until the returned stop is called, which
// returns the peak HeapInuse and Sys.
func memPeak() (stop func() (peakHeap, sys uint64)) {
	done := make(chan struct{})
	var peak uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() (uint64, uint64) {
		close(done)
		wg.Wait()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return peak, ms.Sys
	}
}

// BenchmarkCrawlGenerated crawls the generated 10,000-manifest web from its
// seed domains with full discovery (well-known, robots.txt, home page, DNS),
// robots.txt and politeness on and per-host limits off; then, in the same
// run, fetches with a plain net/http worker pool of the same size, first
// every URL the crawler requested (robots.txt, probes, home pages, catalogs,
// as the fixture web logged them), then only the catalog documents. Rates
// are manifests (leaf entries found by the crawl) per second. The web runs
// in a child process, so the memory figures are the crawler's.
func BenchmarkCrawlGenerated(b *testing.B) {
	srv := startFixtureServer(b, false)
	info := srv.info
	seeds := fixtures.Generate(benchHosts, benchPerHost, benchSeed).Seeds()
	cfg := srv.crawlConfig()
	pem, err := os.ReadFile(info.CAFile)
	if err != nil {
		b.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)

	var crawlDur, allDur, catDur time.Duration
	var crawlCPU, allCPU time.Duration
	var peak, sys uint64
	var manifests float64
	var requests int64
	var logged int
	for b.Loop() {
		var ok string
		srv.call(b, "reset", &ok)
		runtime.GC()
		sink := &countSink{}
		c, err := crawler.New(cfg, sink, nil)
		if err != nil {
			b.Fatal(err)
		}
		stop := memPeak()
		start, cpu0 := time.Now(), cpuTime()
		rep, err := c.Crawl(context.Background(), seeds)
		crawlDur += time.Since(start)
		crawlCPU += cpuTime() - cpu0
		p, s := stop()
		peak, sys = max(peak, p), max(sys, s)
		c.Close()
		if err != nil {
			b.Fatal(err)
		}
		// Generate may give two collections of a host one path (two
		// departments with one slug), so fewer than 10,000 entries can be
		// served; the rate counts what the crawl found.
		got := sink.records.Load()
		if got < benchHosts*benchPerHost*9/10 || rep.Totals.Failed != 0 {
			b.Fatalf("crawl found %d records, %d failed catalogs: %v", got, rep.Totals.Failed, rep.Totals.Reasons)
		}
		manifests = float64(got)
		requests = rep.Totals.Requests

		var log []loggedRequest
		srv.call(b, "log", &log)
		logged = len(log)
		var all, cats []string
		for _, r := range log {
			// Discovery URLs carry no port (the dialer maps 443), the
			// others the real port, as in the crawl: same connections.
			switch r.Path {
			case "/robots.txt", "/", "/.well-known/ai-catalog.json", "/.well-known/ard.json":
				all = append(all, fmt.Sprintf("%s://%s%s", r.Scheme, r.Host, r.Path))
			default:
				port := info.HTTPSPort
				if r.Scheme == "http" {
					port = info.HTTPPort
				}
				all = append(all, fmt.Sprintf("%s://%s:%d%s", r.Scheme, r.Host, port, r.Path))
			}
		}
		for _, cr := range rep.Catalogs {
			cats = append(cats, cr.URL)
		}
		cpu0 = cpuTime()
		allDur += fetchAll(b, info, pool, all)
		allCPU += cpuTime() - cpu0
		catDur += fetchAll(b, info, pool, cats)
	}
	n := float64(b.N)
	crawlRate := manifests * n / crawlDur.Seconds()
	allRate := manifests * n / allDur.Seconds()
	catRate := manifests * n / catDur.Seconds()
	b.ReportMetric(manifests, "manifests")
	b.ReportMetric(float64(requests), "crawler_requests")
	b.ReportMetric(float64(logged), "logged_requests")
	b.ReportMetric(crawlRate, "crawler_manifests/s")
	b.ReportMetric(allRate, "nethttp_same_requests_manifests/s")
	b.ReportMetric(crawlRate/allRate, "ratio_same_requests")
	b.ReportMetric(catRate, "nethttp_catalogs_only_manifests/s")
	b.ReportMetric(crawlRate/catRate, "ratio_catalogs_only")
	b.ReportMetric(crawlCPU.Seconds()/n, "crawler_cpu_s")
	b.ReportMetric(allCPU.Seconds()/n, "nethttp_same_requests_cpu_s")
	b.ReportMetric(float64(peak)/(1<<20), "crawler_peak_heap_MB")
	b.ReportMetric(float64(sys)/(1<<20), "crawler_sys_MB")
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fetchAll GETs every URL with a plain net/http worker pool of benchWorkers
// goroutines (every fixture host dialled on 127.0.0.1) and reads the
// bodies; it returns the elapsed time.
func fetchAll(b *testing.B, info serverInfo, pool *x509.CertPool, urls []string) time.Duration {
	var d net.Dialer
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			_, port, _ := net.SplitHostPort(addr)
			switch port {
			case "443":
				port = strconv.Itoa(info.HTTPSPort)
			case "80":
				port = strconv.Itoa(info.HTTPPort)
			}
			return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
		},
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        4 * benchWorkers,
		MaxIdleConnsPerHost: benchWorkers,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 15 * time.Second}
	jobs := make(chan string)
	var wg sync.WaitGroup
	var failed atomic.Int64
	start := time.Now()
	for range benchWorkers {
		wg.Go(func() {
			for u := range jobs {
				resp, err := client.Get(u)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<20))
				resp.Body.Close()
			}
		})
	}
	for _, u := range urls {
		jobs <- u
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(start)
	if n := failed.Load(); n > 0 {
		b.Fatalf("net/http pool: %d of %d requests failed", n, len(urls))
	}
	return elapsed
}
