package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/searchapi"
)

// BenchmarkSlowBodyAbuse runs 32 well-behaved clients (each from its own
// loopback address, 5 searches per second, under the per-client limit)
// against POST /search on the server serve builds (NewHTTPServer, the
// connection cap, default slots, body timeout and rate limit) for
// AGENTFINDER_BENCH_ABUSE_SECONDS (default 20) per phase, in four
// interleaved rounds:
//   - baseline: nobody else;
//   - abused: one more client, from one address, keeps 300 connections
//     each trickling a request body one byte a second (after a refusal it
//     waits a second and comes back);
//   - abused, rate limit off: the same, with only the slots and the body
//     timeout to hold.
//
// It prints the well-behaved clients' requests, error rate (must stay 0)
// and p50/p99 latency side by side, and each p99 against the baseline's
// (goal: at most 2x). Run: go test -run '^$' -bench SlowBodyAbuse -benchtime 1x ./searchapi/e2e/
func BenchmarkSlowBodyAbuse(b *testing.B) {
	phase := time.Duration(envInt("AGENTFINDER_BENCH_ABUSE_SECONDS", 20)) * time.Second
	ms, name, _ := benchIndex(b, "abuse", 200, 3, nil)
	type result struct {
		name     string
		lat      []time.Duration
		errors   int
		firstErr string
	}
	run := func(res *result, abusers int, limit searchapi.RateLimit, phase time.Duration) {
		srv, err := searchapi.New(searchapi.Config{Index: name, Meili: ms.Client, PublicURL: "http://bench.example", RateLimit: limit}, nil)
		if err != nil {
			b.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		hcfg := searchapi.HTTPConfig{}
		hs := searchapi.NewHTTPServer(srv.Handler(), hcfg, nil)
		go func() { _ = hs.Serve(hcfg.Listener(ln)) }()
		defer hs.Close()
		addr := ln.Addr().String()

		ctx, cancel := context.WithTimeout(context.Background(), phase)
		defer cancel()
		var wg sync.WaitGroup
		for range abusers {
			wg.Go(func() { trickle(ctx, addr, "127.0.1.1") })
		}
		var mu sync.Mutex
		var clients sync.WaitGroup
		for i := range 32 {
			clients.Go(func() {
				lat, errs, first := politeClient(ctx, addr, "127.0.0."+strconv.Itoa(10+i), 5)
				mu.Lock()
				defer mu.Unlock()
				res.lat = append(res.lat, lat...)
				res.errors += errs
				if res.firstErr == "" {
					res.firstErr = first
				}
			})
		}
		clients.Wait()
		cancel()
		wg.Wait()
	}
	def := searchapi.RateLimit{PerSecond: searchapi.DefaultRatePerSecond, Burst: searchapi.DefaultRateBurst}
	for range b.N {
		run(&result{}, 0, def, phase/10) // warm-up: Meilisearch's caches
		results := []result{{name: "baseline"}, {name: "300 slow bodies"}, {name: "300 slow, no rate limit"}}
		// Phases interleave in rounds, so load from elsewhere on the
		// machine falls on all three alike.
		const rounds = 4
		for range rounds {
			run(&results[0], 0, def, phase/rounds)
			run(&results[1], 300, def, phase/rounds)
			run(&results[2], 300, searchapi.RateLimit{}, phase/rounds)
		}
		base := pct(results[0].lat, 99)
		var out strings.Builder
		fmt.Fprintf(&out, "\n%-26s %10s %10s %10s %10s %10s\n", "phase (32 clients)", "requests", "errors", "p50", "p99", "p99/base")
		for _, r := range results {
			p99 := pct(r.lat, 99)
			ratio := float64(p99) / float64(max(base, 1))
			fmt.Fprintf(&out, "%-26s %10d %9.2f%% %10s %10s %9.2fx\n", r.name, len(r.lat)+r.errors,
				100*float64(r.errors)/float64(max(1, len(r.lat)+r.errors)),
				pct(r.lat, 50).Round(10*time.Microsecond), p99.Round(10*time.Microsecond), ratio)
			if r.errors > 0 {
				b.Errorf("%s: %d well-behaved requests failed (first: %s)", r.name, r.errors, r.firstErr)
			}
		}
		fmt.Fprintf(&out, "goal: 0 errors, p99 at most 2x the baseline's\n")
		b.Log(out.String())
		b.ReportMetric(float64(pct(results[1].lat, 99))/float64(max(base, 1)), "p99-ratio-abused")
	}
}

// politeClient searches perSecond times a second from local address ip
// until ctx ends, over one keep-alive connection, and returns the latencies
// of the answers that succeeded, the count of those that did not and the
// first failure.
func politeClient(ctx context.Context, addr, ip string, perSecond int) ([]time.Duration, int, string) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	texts := []string{"weather forecast", "invoices", "translate documents", "book a flight", "general assistant"}
	tick := time.NewTicker(time.Second / time.Duration(perSecond))
	defer tick.Stop()
	var lat []time.Duration
	errs, first := 0, ""
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return lat, errs, first
		case <-tick.C:
		}
		body := `{"query":{"text":"` + texts[i%len(texts)] + `","federation":"none"}}`
		start := time.Now()
		resp, err := client.Post("http://"+addr+"/search", "application/json", strings.NewReader(body))
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
		}
		if err != nil {
			if ctx.Err() != nil { // the phase ended mid-request
				return lat, errs, first
			}
			errs++
			if first == "" {
				first = err.Error()
			}
			continue
		}
		lat = append(lat, time.Since(start))
	}
}

// trickle is one abusive connection slot: it sends a search's headers and
// then its body one byte a second, over and over, until ctx ends; after
// the server answers or closes it waits a second and starts again.
func trickle(ctx context.Context, addr, ip string) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	for ctx.Err() == nil {
		trickleOnce(ctx, d, addr)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func trickleOnce(ctx context.Context, d *net.Dialer, addr string) {
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return
	}
	defer c.Close()
	if _, err := io.WriteString(c, "POST /search HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n"); err != nil {
		return
	}
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		var buf [512]byte
		_, _ = c.Read(buf[:]) // any answer (408, 429) or the close ends the slot
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			c.Close()
			<-answered
			return
		case <-answered:
			return
		case <-tick.C:
			if _, err := c.Write([]byte{' '}); err != nil {
				c.Close()
				<-answered
				return
			}
		}
	}
}
