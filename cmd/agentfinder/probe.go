package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/probe"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/normalize"
)

// probeStateFile keeps the prober's state (health, failures, next probe)
// under the data directory.
const probeStateFile = "probe.json"

// probeOptions are serve's endpoint prober flags.
type probeOptions struct {
	on        bool
	interval  time.Duration
	timeout   time.Duration
	slow      time.Duration
	workers   int
	perHost   int
	downAfter int
	// Tool listing of open MCP endpoints.
	tools         bool
	toolsInterval time.Duration
	maxTools      int
	maxToolBytes  int64
}

func (o *probeOptions) register(c *cli) {
	fs := c.fs
	fs.BoolVar(&o.on, "probe", true, "probe the endpoints of indexed agents (A2A card and interface, MCP streamable HTTP and SSE) and keep each record's health (runs where --crawl does)")
	fs.DurationVar(&o.interval, "probe-interval", 24*time.Hour, "how often each record's endpoint is probed, at least 1m (jittered by 10%); new records are probed within a minute")
	fs.DurationVar(&o.timeout, "probe-timeout", 10*time.Second, "timeout of one probe request: slower is a failed probe")
	fs.DurationVar(&o.slow, "probe-slow", 2*time.Second, "latency budget, below --probe-timeout: an endpoint answering slower is up, marked slow")
	fs.IntVar(&o.downAfter, "probe-down-after", 3, "consecutive failed probes before a record is down (failing and down records are probed again after 10m, 20m, 40m, ... up to --probe-interval)")
	fs.IntVar(&o.workers, "probe-workers", 8, "probes in flight at most")
	fs.IntVar(&o.perHost, "probe-per-host", 2, "probe requests in flight per host")
	fs.BoolVar(&o.tools, "probe-tools", true, "read the tools (tools/list) of MCP endpoints that are up without authentication, for the tool index")
	fs.DurationVar(&o.toolsInterval, "probe-tools-interval", 7*24*time.Hour, "how often an open MCP endpoint's tools are read again (on the probe due after it)")
	fs.IntVar(&o.maxTools, "probe-max-tools", 500, "tools kept per server at most (a longer list is cut and marked truncated)")
	fs.Int64Var(&o.maxToolBytes, "probe-max-tool-bytes", 1<<20, "bytes of tools/list answers read per server at most")
}

// check refuses settings that would hammer endpoints or never decide.
func (o *probeOptions) check() error {
	switch {
	case !o.on:
		return nil
	case o.interval < time.Minute:
		return fmt.Errorf("--probe-interval %v: want at least 1m", o.interval)
	case o.timeout <= 0:
		return fmt.Errorf("--probe-timeout %v: want a positive duration", o.timeout)
	case o.slow <= 0 || o.slow >= o.timeout:
		return fmt.Errorf("--probe-slow %v: want a positive duration below --probe-timeout (%v)", o.slow, o.timeout)
	case o.downAfter < 1:
		return fmt.Errorf("--probe-down-after %d: want at least 1", o.downAfter)
	case o.workers < 1 || o.perHost < 1:
		return fmt.Errorf("--probe-workers %d, --probe-per-host %d: want at least 1 each", o.workers, o.perHost)
	case o.tools && (o.toolsInterval < time.Minute || o.maxTools < 1 || o.maxToolBytes < 1<<10):
		return fmt.Errorf("--probe-tools-interval %v, --probe-max-tools %d, --probe-max-tool-bytes %d: want at least 1m, 1 and 1024", o.toolsInterval, o.maxTools, o.maxToolBytes)
	}
	return nil
}

// healthSink hands the prober's verdicts to ingest, which is built after
// the prober (ingest reads the prober's state for every record it writes):
// a late hook (lateHooks.health), connected by the ingest step before the
// prober runs.
type healthSink struct{ ix *ingest.Indexer }

// SetHealth hands a verdict to ingest (probe.Sink).
func (h *healthSink) SetHealth(ctx context.Context, id, catalog string, hl normalize.Health) (bool, error) {
	return h.ix.SetHealth(ctx, id, catalog, hl)
}

// SetTools hands the tools read from an endpoint to ingest (probe.Sink).
func (h *healthSink) SetTools(ctx context.Context, id, catalog string, ts *normalize.ToolSet) (bool, error) {
	return h.ix.SetTools(ctx, id, catalog, ts)
}

// probedSink is the crawler's sink when the prober runs: ingest first, then
// the prober learns the records written, so a new record is probed soon
// after it is indexed.
// The index hears of each crawl's start (claims its catalogs no longer
// reach yield, see ingest.Indexer.CrawlStarted), through probedSink too.
var _ crawler.Starter = probedSink{}

type probedSink struct {
	*ingest.Indexer // Put is overridden; Holds and the rest are ingest's
	prober          *probe.Prober
}

// Put queues res in ingest and hands its records to the prober.
func (s probedSink) Put(ctx context.Context, res normalize.CatalogResult) error {
	if err := s.Indexer.Put(ctx, res); err != nil {
		return err
	}
	s.prober.Observe(res.Catalog, res.Records)
	return nil
}

// PutAll queues results in ingest together and hands their records to
// the prober.
func (s probedSink) PutAll(ctx context.Context, results []normalize.CatalogResult) error {
	if err := s.Indexer.PutAll(ctx, results); err != nil {
		return err
	}
	for _, res := range results {
		s.prober.Observe(res.Catalog, res.Records)
	}
	return nil
}

var (
	_ crawler.BatchSink = probedSink{}
	_ crawler.Sink      = probedSink{}
	_ crawler.Holder    = probedSink{}
	_ probe.Sink        = (*healthSink)(nil)
)

// buildProber makes the prober (unless --probe=false or --crawl=false) over
// a crawler of its own: the crawl's network settings, guard and robots
// rules, with the probe's timeout and per-host limit.
func (s *server) buildProber(context.Context) error {
	o, ccfg := s.opts.probe, s.crawlCfg
	if !o.on || !s.opts.crawl {
		return nil
	}
	ccfg.UserAgent = fmt.Sprintf("%s/%s (+%s)", crawler.RobotsAgent, version, s.publicURL)
	ccfg.Timeout, ccfg.PerHostConcurrency, ccfg.MaxAttempts = o.timeout, o.perHost, 1
	ccfg.Metrics = nil // the crawl's instruments are registered once; the prober has its own
	cr, err := crawler.New(ccfg, nil, s.log)
	if err != nil {
		return fmt.Errorf("prober: %w", err)
	}
	s.onClose(func() { cr.Close() })
	s.prober, err = probe.New(probe.Config{
		Interval:      o.interval,
		Slow:          o.slow,
		DownAfter:     o.downAfter,
		Concurrency:   o.workers,
		NoTools:       !o.tools,
		ToolsInterval: o.toolsInterval,
		MaxTools:      o.maxTools,
		MaxToolBytes:  o.maxToolBytes,
		StatePath:     filepath.Join(s.opts.dataDir, probeStateFile),
		State:         s.hooks.probeState,
		Logger:        s.log,
		Metrics:       s.metrics,
	}, cr, &s.late.health)
	return err
}

// startProber runs the prober until the returned stop is called; stop
// waits for the probes in flight to end and the state to be saved.
func (s *server) startProber() (stop func()) {
	if s.prober == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.prober.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}
