package probe_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/crawler/probe"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

// toolsKept counts the tool lists a round hands on.
type toolsKept struct {
	discard
	n chan int
}

func (k toolsKept) SetTools(_ context.Context, _, _ string, ts *normalize.ToolSet) (bool, error) {
	if ts != nil {
		k.n <- len(ts.Items)
	}
	return true, nil
}

// Politeness limits of BenchmarkProbeTools: probe workers, requests in
// flight per host, the pause between one host's requests, and each
// generated MCP server's own latency (fixtures.Options.MCPLatency).
const (
	benchWorkers                  = 16
	benchPerHost                  = 2
	benchHostDelay  time.Duration = 0
	benchMCPLatency               = 100 * time.Millisecond
	// benchRequestsPerServer is what one of these servers costs a round at
	// the least: server/discover, then one page of tools/list.
	benchRequestsPerServer = 2
)

// BenchmarkProbeTools probes and lists the tools of about 2,000 generated
// MCP servers (real SDK servers without sessions, each answer after
// benchMCPLatency) in one round, and prints the ratio of the round's time
// to the politeness floor: the least time any prober needs under the same
// limits (politenessFloor). The target is at most 1.2.
func BenchmarkProbeTools(b *testing.B) {
	gen := fixtures.Generate(125, 40, 11)
	web, err := fixtures.Start(context.Background(), fixtures.Options{Generated: gen, NoWorld: true, MCPLatency: benchMCPLatency})
	if err != nil {
		b.Fatal(err)
	}
	defer web.Close()
	cfg := crawlertest.Config(web)
	cfg.Concurrency, cfg.PerHostConcurrency, cfg.Delay, cfg.MaxAttempts, cfg.DisableDNS = benchWorkers, benchPerHost, benchHostDelay, 1, true
	sink := &crawlertest.Collector{}
	c, err := crawler.New(cfg, sink, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Crawl(context.Background(), gen.Seeds()); err != nil {
		b.Fatal(err)
	}
	// The round probes the MCP servers alone (the generated web's A2A
	// agents are BenchmarkProbeRound's).
	var targets []probe.Target
	servers := map[string][]normalize.Record{}
	for _, r := range sink.Results() {
		for _, rec := range r.Records {
			if ts, _ := probe.Targets(rec); len(ts) == 1 && ts[0].Kind == probe.KindMCP {
				targets = append(targets, ts[0])
				servers[r.Catalog] = append(servers[r.Catalog], rec)
			}
		}
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var probeTime time.Duration
	var listed, roundRequests int
	for b.Loop() {
		kept := toolsKept{n: make(chan int, len(targets)+1)}
		p, err := probe.New(probe.Config{Concurrency: benchWorkers, Now: func() time.Time { return now }}, c, kept)
		if err != nil {
			b.Fatal(err)
		}
		for catalog, recs := range servers {
			p.Observe(catalog, recs)
		}
		web.ResetRequests()
		start := time.Now()
		p.RunDue(context.Background())
		probeTime += time.Since(start)
		roundRequests = len(web.Requests())
		close(kept.n)
		listed = 0
		for range kept.n {
			listed++
		}
	}
	if listed != len(targets) || len(targets) < 1900 {
		b.Fatalf("listed the tools of %d of %d MCP servers (%d generated): want every one, about 2,000", listed, len(targets), gen.MCPServers())
	}
	floor := politenessFloor(serversByHost(targets), benchRequestsPerServer)
	round := probeTime / time.Duration(b.N)
	b.ReportMetric(float64(listed), "servers_listed")
	b.ReportMetric(round.Seconds()/floor.Seconds(), "ratio_time_probe_floor")
	fmt.Printf("probe+tools/list of %d MCP servers on %d hosts (%d requests): %v a round; the politeness floor (%d workers, %d per host, delay %v, server latency %v, %d requests a server) %v: ratio %.2f\n",
		listed, len(serversByHost(targets)), roundRequests, round, benchWorkers, benchPerHost, benchHostDelay, benchMCPLatency,
		benchRequestsPerServer, floor, round.Seconds()/floor.Seconds())
}

// serversByHost counts the targets of each host.
func serversByHost(targets []probe.Target) map[string]int {
	out := map[string]int{}
	for _, t := range targets {
		u, _ := url.Parse(t.URL)
		out[u.Hostname()]++
	}
	return out
}

// politenessFloor is the least time a round can take under the bench's
// limits, whatever the prober: each MCP request holds a worker and one of
// its host's slots for at least the server's latency plus the host's delay
// (colly keeps the slot through the pause; a delay leaves one slot per
// host), and one server's perServer requests run one after the other on one
// worker. So the round takes at least the longer of
//   - the workers' share: ceil(servers / workers) servers one after the
//     other, perServer requests each;
//   - the busiest host's: its robots.txt (answered at once, then the delay)
//     and its servers' requests, slots at a time.
func politenessFloor(byHost map[string]int, perServer int) time.Duration {
	slot := benchMCPLatency + benchHostDelay
	slots := benchPerHost
	if benchHostDelay > 0 {
		slots = 1
	}
	servers := 0
	var hostBound time.Duration
	for _, n := range byHost {
		servers += n
		hostBound = max(hostBound, benchHostDelay+time.Duration(ceilDiv(n*perServer, slots))*slot)
	}
	workerBound := time.Duration(ceilDiv(servers, benchWorkers)*perServer) * slot
	return max(workerBound, hostBound)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
