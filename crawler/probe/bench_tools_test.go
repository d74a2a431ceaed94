package probe_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

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

// BenchmarkProbeTools probes and lists the tools of about 2,000 generated
// MCP servers (real SDK servers, stateless: server/discover, then
// tools/list) in one round, and, as the baseline in the same run, the
// politeness floor: the same requests (each host's robots.txt, then per
// server its discover and tools/list) sent by a bare HTTP client under the
// same limits (16 in flight, 2 per host), with nothing the prober adds
// (colly, the network guard, reading the answers as MCP). It prints the
// ratio of the round's time to the floor's.
func BenchmarkProbeTools(b *testing.B) {
	gen := fixtures.Generate(125, 40, 11)
	web, err := fixtures.Start(context.Background(), fixtures.Options{Generated: gen, NoWorld: true})
	if err != nil {
		b.Fatal(err)
	}
	defer web.Close()
	cfg := crawlertest.Config(web)
	cfg.Concurrency, cfg.PerHostConcurrency, cfg.MaxAttempts, cfg.DisableDNS = 16, 2, 1, true
	sink := &crawlertest.Collector{}
	c, err := crawler.New(cfg, sink, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Crawl(context.Background(), gen.Seeds()); err != nil {
		b.Fatal(err)
	}
	var targets []probe.Target
	for _, r := range sink.Results() {
		for _, rec := range r.Records {
			if ts, _ := probe.Targets(rec); len(ts) == 1 && ts[0].Kind == probe.KindMCP {
				targets = append(targets, ts[0])
			}
		}
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var probeTime, floorTime time.Duration
	var listed, roundRequests int
	for b.Loop() {
		kept := toolsKept{n: make(chan int, len(targets)+1)}
		p, err := probe.New(probe.Config{Concurrency: 16, Now: func() time.Time { return now }}, c, kept)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range sink.Results() {
			p.Observe(r.Catalog, r.Records)
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
		start = time.Now()
		if err := politenessFloor(web, gen.Seeds(), targets); err != nil {
			b.Fatal(err)
		}
		floorTime += time.Since(start)
	}
	if listed != len(targets) || len(targets) < 1900 {
		b.Fatalf("listed the tools of %d of %d MCP servers (%d generated): want every one, about 2,000", listed, len(targets), gen.MCPServers())
	}
	b.ReportMetric(float64(listed), "servers_listed")
	b.ReportMetric(probeTime.Seconds()/floorTime.Seconds(), "ratio_time_probe_floor")
	fmt.Printf("probe+tools/list of %d MCP servers (%d requests): %v a round, the politeness floor %v: ratio %.2f\n",
		listed, roundRequests, probeTime/time.Duration(b.N), floorTime/time.Duration(b.N), probeTime.Seconds()/floorTime.Seconds())
}

// politenessFloor sends the requests a probe round needs at the least
// (robots.txt per host, then server/discover and tools/list per server)
// under the prober's limits: 16 in flight, 2 per host.
func politenessFloor(web *fixtures.Web, hosts []string, targets []probe.Target) error {
	client := web.HTTPClient()
	do := func(method, u string, body []byte, hdr map[string]string) error {
		req, err := http.NewRequest(method, u, bytes.NewReader(body))
		if err != nil {
			return err
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return err
	}
	var g errgroup.Group
	g.SetLimit(16)
	for _, h := range hosts {
		g.Go(func() error { return do(http.MethodGet, "https://"+h+"/robots.txt", nil, nil) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	// Hosts take turns, so a worker seldom waits on a busy host while
	// another host has room: the floor is the limits' and nothing else's.
	perHost := map[string]chan struct{}{}
	byHost := map[string][]probe.Target{}
	var order []string
	for _, t := range targets {
		u, _ := url.Parse(t.URL)
		if perHost[u.Host] == nil {
			perHost[u.Host] = make(chan struct{}, 2)
			order = append(order, u.Host)
		}
		byHost[u.Host] = append(byHost[u.Host], t)
	}
	targets = targets[:0:0]
	for more := true; more; {
		more = false
		for _, h := range order {
			if ts := byHost[h]; len(ts) > 0 {
				targets, byHost[h], more = append(targets, ts[0]), ts[1:], true
			}
		}
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"AgentFinderBot","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	for _, t := range targets {
		u, _ := url.Parse(t.URL)
		slot := perHost[u.Host]
		g.Go(func() error {
			slot <- struct{}{}
			defer func() { <-slot }()
			for _, m := range []string{"server/discover", "tools/list"} {
				hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
					"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": m}
				if err := do(http.MethodPost, t.URL, []byte(`{"jsonrpc":"2.0","id":1,"method":"`+m+`","params":{`+meta+`}}`), hdr); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}
