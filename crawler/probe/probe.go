// Package probe owns endpoint liveness: it checks the endpoints of indexed
// records (an A2A agent's card and interface, an MCP server's
// streamable-HTTP remote) soon after they are first seen and then on a
// jittered schedule of their own, and hands each record's health to a Sink.
// Records with nothing it can probe (stdio-only packages, no endpoint) stay
// unknown and are never probed.
//
// Requests go through crawler.Visitor, so the crawl's network guard,
// robots.txt handling, host patterns, per-host limit and timeouts apply
// unchanged. A record turns down only after Config.DownAfter consecutive
// failed probes; until then its status stays what it was. The state (health,
// failures, next due time) is bounded by Config.MaxRecords and persisted in
// one file, so a restart neither forgets it nor probes everything at once.
//
// probe imports crawler and normalize; never ingest or Meilisearch.
package probe

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/statefile"
	"github.com/agentfinder/agentfinder/normalize"
)

// Sink receives each probe's verdict on the endpoints catalog lists for
// identifier, and the tools read from them. Its methods are called from
// several goroutines at once. held false says the sink holds no record
// with that identifier from that catalog (it was deleted, or another
// catalog's claim won): the prober forgets that claim. An error leaves the
// prober's state as it is; the next probe sends the health again.
type Sink interface {
	SetHealth(ctx context.Context, identifier, catalog string, h normalize.Health) (held bool, err error)
	// SetTools is called when the tools read from a record's endpoint
	// changed; nil takes them away (the endpoint is no open MCP server
	// any more). It comes before the SetHealth of the same probe.
	SetTools(ctx context.Context, identifier, catalog string, tools *normalize.ToolSet) (held bool, err error)
}

// Config tunes a Prober. The zero value probes daily with the defaults below.
type Config struct {
	// Interval between probes of one record; each is jittered by ±10%.
	// Default 24h.
	Interval time.Duration
	// RetryAfter is the wait before probing a failing record again,
	// doubled per consecutive failure and capped at Interval, so a record
	// turns down within hours, not days, and a down record that comes
	// back is seen within hours too. Default 10m.
	RetryAfter time.Duration
	// DownAfter is how many consecutive failed probes make a record down.
	// Default 3.
	DownAfter int
	// Slow is the latency budget: an endpoint answering slower is still up,
	// with its latency recorded and a "slow" detail. Requests that take
	// longer than the crawler's Timeout fail. Default 2s.
	Slow time.Duration
	// Concurrency bounds probes in flight (per-host limits are the
	// crawler's PerHostConcurrency). Default 8.
	Concurrency int
	// Tick is how often Run looks for records due. Default 10s.
	Tick time.Duration
	// MaxRecords bounds the records tracked; records seen beyond it stay
	// unknown. Default 200000.
	MaxRecords int
	// Spread is how widely records overdue at start are scattered, so a
	// restart does not probe them all at once. Default 10m.
	Spread time.Duration
	// StatePath is the state file; empty keeps state in memory only.
	StatePath string
	// State, when set, keeps the state instead of StatePath (a cluster
	// keeps it in its shared state, statefile/kvstate).
	State statefile.Doc
	// SaveEvery bounds how often Run writes the state file. Default 1m.
	SaveEvery time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger; nil discards.
	Logger *slog.Logger
	// ToolsInterval is how often the tools of an open MCP endpoint are
	// read again (tools/list, on the probe that falls due after it).
	// Default 7 days.
	ToolsInterval time.Duration
	// MaxTools, MaxToolBytes and MaxToolPages bound one server's tool
	// list: tools kept, bytes of tools/list answers read, pages followed.
	// A list cut short keeps what was read and says why. Defaults 500,
	// 1 MiB and 50. NoTools turns tool listing off.
	MaxTools     int
	MaxToolBytes int64
	MaxToolPages int
	NoTools      bool
	// Metrics, when set, receives agentfinder_probes_total{outcome},
	// agentfinder_probe_latency_seconds and agentfinder_probe_records{status}.
	Metrics prometheus.Registerer
}

func (c *Config) defaults() {
	if c.Interval <= 0 {
		c.Interval = 24 * time.Hour
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = 10 * time.Minute
	}
	if c.DownAfter <= 0 {
		c.DownAfter = 3
	}
	if c.Slow <= 0 {
		c.Slow = 2 * time.Second
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 8
	}
	if c.Tick <= 0 {
		c.Tick = 10 * time.Second
	}
	if c.MaxRecords <= 0 {
		c.MaxRecords = 200000
	}
	if c.Spread <= 0 {
		c.Spread = 10 * time.Minute
	}
	if c.SaveEvery <= 0 {
		c.SaveEvery = time.Minute
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.ToolsInterval <= 0 {
		c.ToolsInterval = 7 * 24 * time.Hour
	}
	if c.MaxTools <= 0 {
		c.MaxTools = 500
	}
	if c.MaxToolBytes <= 0 {
		c.MaxToolBytes = 1 << 20
	}
	if c.MaxToolPages <= 0 {
		c.MaxToolPages = 50
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Prober keeps the health of records and probes them when due. Observe
// feeds it records; Run (or RunDue, for a caller with its own clock)
// probes. It is safe for concurrent use.
type Prober struct {
	cfg     Config
	cr      *crawler.Crawler
	sse     *http.Client // the crawler's, for SSE conversations
	sink    Sink
	log     *slog.Logger
	metrics *metrics

	mu    sync.Mutex
	recs  map[string]*entry
	dirty bool // changed since the last save
	full  bool // MaxRecords was reached (logged once)
}

// New returns a Prober sending requests through cr's Visitors and health to
// sink, with the state loaded from Config.StatePath.
func New(cfg Config, cr *crawler.Crawler, sink Sink) (*Prober, error) {
	cfg.defaults()
	p := &Prober{cfg: cfg, cr: cr, sink: sink, log: cfg.Logger.With("component", "probe"), recs: map[string]*entry{}}
	if cr != nil {
		p.sse = cr.HTTPClient()
	}
	if doc := cfg.stateDoc(); doc != nil {
		recs, err := loadState(doc, p.log)
		if err != nil {
			return nil, err
		}
		p.restore(recs)
	}
	var err error
	if p.metrics, err = newMetrics(cfg.Metrics, p); err != nil {
		return nil, err
	}
	return p, nil
}

// restore takes loaded state, scattering what is overdue: records never
// probed within a minute, the others within Spread. A due time further
// ahead than the longest wait the prober sets (Interval plus its jitter) was
// written under a clock that was wrong: it counts as overdue.
func (p *Prober) restore(recs []*entry) {
	now := p.cfg.Now()
	latest := now.Add(p.cfg.Interval + p.cfg.Interval/10)
	for _, e := range recs {
		if e == nil || e.Identifier == "" || len(p.recs) >= p.cfg.MaxRecords {
			continue
		}
		if e.NextDue.Before(now) || e.NextDue.After(latest) {
			spread := p.cfg.Spread
			if e.Health.CheckedAt.IsZero() {
				spread = min(spread, time.Minute)
			}
			e.NextDue = now.Add(rand.N(spread))
		}
		p.recs[e.key()] = e
	}
}

// Len returns how many records the prober keeps state for.
func (p *Prober) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.recs)
}

// Stats is what the prober holds: records tracked, by health status, and
// how many are failing but not down yet.
type Stats struct {
	Records  int            `json:"records"`
	ByStatus map[string]int `json:"byStatus"`
	Failing  int            `json:"failing"`
}

// Stats counts the records the prober tracks.
func (p *Prober) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Stats{Records: len(p.recs), ByStatus: map[string]int{}}
	for _, e := range p.recs {
		st.ByStatus[e.Health.Status]++
		if e.Failures > 0 && e.Health.Status != normalize.HealthDown {
			st.Failing++
		}
	}
	return st
}

// Health returns the last health of the record with identifier as catalog
// lists it, and whether the prober tracks it (a record it cannot probe is
// not tracked: its health is unknown).
func (p *Prober) Health(identifier, catalog string) (normalize.Health, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.recs[key(identifier, catalog)]
	if e == nil {
		return normalize.Health{}, false
	}
	return e.Health, true
}

// Observe takes the records of one catalog (the result's final URL) as a
// crawl handed them on: a new record with an endpoint is due at once; a
// record whose endpoints changed is due again (its failures forgotten); a
// record that no longer has one is dropped.
func (p *Prober) Observe(catalog string, recs []normalize.Record) {
	now := p.cfg.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range recs {
		ident := recs[i].Identifier
		if ident == "" {
			continue
		}
		id := key(ident, catalog)
		ts, _ := Targets(recs[i])
		e := p.recs[id]
		switch {
		case len(ts) == 0:
			if e != nil {
				delete(p.recs, id)
				p.dirty = true
			}
		case e == nil:
			if len(p.recs) >= p.cfg.MaxRecords {
				if !p.full {
					p.full = true
					p.log.Warn("probe state full: further records stay unknown", "max", p.cfg.MaxRecords)
				}
				continue
			}
			p.recs[id] = &entry{Identifier: ident, Catalog: catalog, Targets: ts, Health: normalize.Health{Status: normalize.HealthUnknown}, NextDue: now}
			p.dirty = true
		case !slices.Equal(e.Targets, ts):
			e.Targets, e.Failures, e.NextDue, e.ToolsReadAt = ts, 0, now, time.Time{}
			p.dirty = true
		}
	}
}

// due marks and returns the records due at now, earliest first, their
// hosts taking turns (hostTurns).
func (p *Prober) due(now time.Time) []entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []entry
	for _, e := range p.recs {
		if !e.probing && !e.NextDue.After(now) {
			e.probing = true
			out = append(out, *e)
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return a.NextDue.Compare(b.NextDue) })
	return hostTurns(out)
}

// hostTurns orders due records so that their endpoints' hosts take turns,
// each host's records in their order: the workers then spread over hosts
// rather than queue behind one host's per-host limit (a registry host
// serving hundreds of remotes) while others wait.
func hostTurns(due []entry) []entry {
	byHost := map[string][]entry{}
	var hosts []string
	for _, e := range due {
		h := e.host()
		if _, ok := byHost[h]; !ok {
			hosts = append(hosts, h)
		}
		byHost[h] = append(byHost[h], e)
	}
	out := make([]entry, 0, len(due))
	for len(hosts) > 0 {
		left := hosts[:0]
		for _, h := range hosts {
			q := byHost[h]
			out = append(out, q[0])
			if byHost[h] = q[1:]; len(q) > 1 {
				left = append(left, h)
			}
		}
		hosts = left
	}
	return out
}

// RunDue probes every record due now, at most Concurrency at once, hands
// each verdict to the sink, and returns how many it probed. Probes cut short
// by ctx change nothing.
func (p *Prober) RunDue(ctx context.Context) int {
	due := p.due(p.cfg.Now())
	if len(due) == 0 {
		return 0
	}
	v := p.cr.NewVisitor(ctx)
	var g errgroup.Group
	g.SetLimit(p.cfg.Concurrency)
	for _, e := range due {
		g.Go(func() error {
			p.probe(ctx, v, e) // returns at once once ctx is done
			return nil
		})
	}
	_ = g.Wait() // probe returns no error
	return len(due)
}

// probe checks one record and records the verdict.
func (p *Prober) probe(ctx context.Context, v visitor, e entry) {
	if ctx.Err() != nil {
		p.release(e.key())
		return
	}
	r := check(ctx, v, e.Targets, p.cfg.Slow, p.toolLimits(e))
	if ctx.Err() != nil {
		p.release(e.key())
		return
	}
	p.metrics.probe(r.outcome, r.latency)
	h, tools, ok := p.apply(e, r)
	if !ok {
		return
	}
	if tools != nil && !p.sendTools(ctx, e, tools.set) {
		return
	}
	// A change is news when a known status moves, or a record goes down;
	// a first verdict on a new record is not.
	was := e.Health.Status
	if h.Status != was && (h.Status == normalize.HealthDown || (was != "" && was != normalize.HealthUnknown)) {
		p.log.Info("health changed", "identifier", e.Identifier, "catalog", e.Catalog, "from", was, "to", h.Status, "detail", h.Detail)
	} else {
		p.log.Debug("probed", "identifier", e.Identifier, "outcome", r.outcome, "status", h.Status, "detail", h.Detail)
	}
	held, err := p.sink.SetHealth(ctx, e.Identifier, e.Catalog, h)
	switch {
	case err != nil && ctx.Err() == nil: // at shutdown the next probe sends it
		p.log.Warn("health not written", "identifier", e.Identifier, "err", err)
	case !held:
		p.forget(e.key())
	}
}

// toolLimits returns the bounds of the tool list a probe of e reads, or
// nil when its tools are not due (read within ToolsInterval) or listing
// is off.
func (p *Prober) toolLimits(e entry) *toolLimits {
	if p.cfg.NoTools || (!e.ToolsReadAt.IsZero() && p.cfg.Now().Sub(e.ToolsReadAt) < p.cfg.ToolsInterval) {
		return nil
	}
	return &toolLimits{maxTools: p.cfg.MaxTools, maxBytes: p.cfg.MaxToolBytes, maxPages: p.cfg.MaxToolPages, sse: p.sse,
		now: func() normalize.ToolSet {
			return normalize.ToolSet{Source: normalize.ToolsListed, ReadAt: p.cfg.Now().UTC()}
		}}
}

// sendTools hands a changed tool list to the sink; false when the sink
// no longer holds the record (the prober then forgot it).
func (p *Prober) sendTools(ctx context.Context, e entry, tools *normalize.ToolSet) bool {
	held, err := p.sink.SetTools(ctx, e.Identifier, e.Catalog, tools)
	switch {
	case err != nil && ctx.Err() == nil:
		p.log.Warn("tools not written", "identifier", e.Identifier, "err", err)
		p.mu.Lock()
		if cur := p.recs[e.key()]; cur != nil {
			cur.ToolsReadAt = time.Time{} // read and send them again next time
		}
		p.mu.Unlock()
	case err == nil && !held:
		p.forget(e.key())
		return false
	}
	return true
}

// Tools returns the tools last read from the endpoint of the record with
// identifier as catalog lists it, and whether there are any (an endpoint
// never listed, gated or not MCP has none).
func (p *Prober) Tools(identifier, catalog string) (*normalize.ToolSet, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.recs[key(identifier, catalog)]
	if e == nil || e.Tools == nil {
		return nil, false
	}
	return e.Tools, true
}

// release hands a record back unprobed.
func (p *Prober) release(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.recs[id]; e != nil {
		e.probing = false
	}
}

func (p *Prober) forget(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.recs, id)
	p.dirty = true
}

// toolsChange is a tool list to hand to the sink: set, or nil to take
// the record's tools away.
type toolsChange struct{ set *normalize.ToolSet }

// apply updates a record's state with the result of probing it as probed
// (its targets then) and returns its health, and its tools when they
// changed; false when the record was dropped meanwhile, or its endpoints
// changed (it is due again at once).
func (p *Prober) apply(probed entry, r result) (normalize.Health, *toolsChange, bool) {
	now := p.cfg.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.recs[probed.key()]
	if e == nil {
		return normalize.Health{}, nil, false
	}
	e.probing = false
	if !slices.Equal(e.Targets, probed.Targets) {
		return normalize.Health{}, nil, false
	}
	p.dirty = true
	ms := (r.latency + time.Millisecond - 1).Milliseconds() // 0.2 ms reads as 1, not as "not measured"
	next := p.jitter(p.cfg.Interval)
	h := r.health()
	h.CheckedAt = now
	switch r.outcome {
	case OutcomeUp, OutcomeSlow, OutcomeAuthRequired, OutcomeNotMCP, OutcomeTemplate, OutcomeSkipped:
		e.Failures = 0
		h.Status, h.LatencyMs = settledStatus[r.outcome], ms
		if r.outcome == OutcomeSkipped || r.outcome == OutcomeTemplate {
			h.LatencyMs = 0
		}
	default:
		e.Failures++
		h = normalize.Health{Status: normalize.HealthDown, CheckedAt: now, LatencyMs: e.Health.LatencyMs, Detail: r.detail}
		if e.Failures < p.cfg.DownAfter {
			// Not down yet: the status, and what the endpoint said of itself, stay.
			h = e.Health
			h.CheckedAt = now
			h.Detail = fmt.Sprintf("%s (failure %d of %d before down)", r.detail, e.Failures, p.cfg.DownAfter)
		}
		next = p.jitter(p.retryAfter(e.Failures))
		if h.Status == "" {
			h.Status = normalize.HealthUnknown
		}
	}
	e.Health = h
	e.NextDue = now.Add(next)
	return e.Health, p.toolsChanged(e, r, now), true
}

// settledStatus is the health status of each outcome that settles a
// record at once (the others count toward down).
var settledStatus = map[string]string{
	OutcomeUp: normalize.HealthUp, OutcomeSlow: normalize.HealthUp, OutcomeAuthRequired: normalize.HealthAuthRequired,
	OutcomeNotMCP: normalize.HealthNotMCP, OutcomeTemplate: normalize.HealthTemplate, OutcomeSkipped: normalize.HealthUnknown,
}

// toolsChanged records the tools a probe read on e and returns the change
// for the sink: a new list that differs from the last, or nil tools when an
// endpoint that had some is gated, not MCP, or a template now. A failing
// endpoint keeps its tools (stale beats nothing while it may come back).
func (p *Prober) toolsChanged(e *entry, r result, now time.Time) *toolsChange {
	switch {
	case r.toolsRead:
		e.ToolsReadAt = now
		if normalize.SameTools(e.Tools, r.tools) {
			return nil
		}
		e.Tools = r.tools
		return &toolsChange{set: r.tools}
	case e.Tools != nil && (r.outcome == OutcomeAuthRequired || r.outcome == OutcomeNotMCP || r.outcome == OutcomeTemplate):
		e.Tools, e.ToolsReadAt = nil, time.Time{}
		return &toolsChange{}
	}
	return nil
}

// retryAfter is the wait before probing a record again after its n-th
// failure in a row: RetryAfter doubled per failure, capped at Interval. A
// down record keeps backing off, so its recovery shows within hours.
func (p *Prober) retryAfter(n int) time.Duration {
	d := p.cfg.RetryAfter
	for i := 1; i < n && d < p.cfg.Interval; i++ {
		d *= 2
	}
	return min(d, p.cfg.Interval)
}

// jitter returns d moved by up to ±10%.
func (p *Prober) jitter(d time.Duration) time.Duration {
	j := d / 10
	if j <= 0 {
		return d
	}
	return d - j + rand.N(2*j+1)
}

// Save writes the state file now (when Config.StatePath is set).
func (p *Prober) Save() error {
	doc := p.cfg.stateDoc()
	if doc == nil {
		return nil
	}
	p.mu.Lock()
	recs := make([]*entry, 0, len(p.recs))
	for _, e := range p.recs {
		c := *e
		recs = append(recs, &c)
	}
	p.dirty = false
	p.mu.Unlock()
	slices.SortFunc(recs, func(a, b *entry) int { return strings.Compare(a.key(), b.key()) })
	if err := saveState(doc, recs); err != nil {
		p.mu.Lock()
		p.dirty = true
		p.mu.Unlock()
		return err
	}
	return nil
}

// Run probes what is due every Tick until ctx ends, writing the state file
// at most every SaveEvery and once more on the way out.
func (p *Prober) Run(ctx context.Context) {
	t := time.NewTicker(p.cfg.Tick)
	defer t.Stop()
	var saved time.Time
	for {
		p.RunDue(ctx)
		if time.Since(saved) >= p.cfg.SaveEvery && p.isDirty() {
			if err := p.Save(); err != nil {
				p.log.Error("probe state not saved", "err", err)
			}
			saved = time.Now()
		}
		select {
		case <-ctx.Done():
			if err := p.Save(); err != nil {
				p.log.Error("probe state not saved", "err", err)
			}
			return
		case <-t.C:
		}
	}
}

func (p *Prober) isDirty() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dirty
}
