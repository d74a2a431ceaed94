package probe_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/crawler/probe"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

// discard takes verdicts and drops them, as if ingest held every record.
type discard struct{}

func (discard) SetHealth(context.Context, string, string, normalize.Health) (bool, error) {
	return true, nil
}

func (discard) SetTools(context.Context, string, string, *normalize.ToolSet) (bool, error) {
	return true, nil
}

// BenchmarkProbeRound probes every record of a generated web (100 hosts, 10
// entries each: A2A agents, a card and a JSON-RPC endpoint each, and MCP
// servers, one initialize each) in one round, and crawls the same web with
// the same crawler and concurrency, in the same run, as the baseline. It
// prints probes per second and the ratio of a probe round's time to the
// crawl's: how long keeping every record's health takes next to indexing
// it.
func BenchmarkProbeRound(b *testing.B) {
	gen := fixtures.Generate(100, 10, 7)
	web, err := fixtures.Start(context.Background(), fixtures.Options{Generated: gen})
	if err != nil {
		b.Fatal(err)
	}
	defer web.Close()
	cfg := crawlertest.Config(web)
	cfg.Concurrency, cfg.MaxAttempts, cfg.DisableDNS = 16, 1, true
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var crawlTime, probeTime time.Duration
	var probed, tracked int
	for b.Loop() {
		sink := &crawlertest.Collector{}
		c, err := crawler.New(cfg, sink, nil)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if _, err := c.Crawl(context.Background(), gen.Seeds()); err != nil {
			b.Fatal(err)
		}
		crawlTime += time.Since(start)

		p, err := probe.New(probe.Config{Concurrency: 16, Now: func() time.Time { return now }}, c, discard{})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range sink.Results() {
			p.Observe(r.Catalog, r.Records)
		}
		tracked = p.Len()
		start = time.Now()
		probed = p.RunDue(context.Background())
		probeTime += time.Since(start)
		c.Close()
	}
	if probed < gen.Entries()/2 || probed != tracked {
		b.Fatalf("probed %d of %d tracked records (%d entries): the generated web's agents should all have endpoints", probed, tracked, gen.Entries())
	}
	n := float64(b.N)
	b.ReportMetric(float64(probed), "records_probed")
	b.ReportMetric(float64(probed)*n/probeTime.Seconds(), "probes/s")
	b.ReportMetric(probeTime.Seconds()/crawlTime.Seconds(), "ratio_time_probe_crawl")
}
