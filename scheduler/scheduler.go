// Package scheduler decides when each seed is crawled: the seed list (flags
// and a seeds file, re-read on demand), a cron schedule (robfig/cron/v3
// syntax) spread with per-seed jitter, exponential backoff for seeds that
// keep failing, sooner refreshes when catalogs ask for them (never more often
// than a floor), bounded concurrency with at most one run per seed, and a
// small state file that survives restarts.
//
// It calls the crawler through the Crawler interface it declares and knows
// nothing of Meilisearch or HTTP; cmd/agentfinder adapts the real crawler.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"
)

// Crawler crawls one seed. It must honour ctx: on cancel it returns promptly
// (the run is then recorded as abandoned, not failed).
type Crawler interface {
	Crawl(ctx context.Context, seed string) (Result, error)
}

// CrawlerFunc adapts a function to Crawler.
type CrawlerFunc func(ctx context.Context, seed string) (Result, error)

// Crawl calls f.
func (f CrawlerFunc) Crawl(ctx context.Context, seed string) (Result, error) { return f(ctx, seed) }

// Result summarises one seed's crawl for scheduling decisions.
type Result struct {
	// Catalogs is how many catalogs the crawl fetched or tried (any status).
	Catalogs int `json:"catalogs"`
	// Succeeded counts catalogs fetched ok or not modified. A crawl with none
	// is a failure for backoff purposes (nothing found, or everything broken).
	Succeeded int `json:"succeeded"`
	// NotModified counts the succeeded catalogs that answered 304.
	NotModified int `json:"notModified,omitempty"`
	// Records is how many records the catalogs fetched ok held. When every
	// catalog that succeeded was not modified, the seed keeps its count.
	Records int `json:"records"`
	// Refresh is the soonest refresh any catalog asked for (Cache-Control
	// max-age, ADP ttl, the nearest expiresAt), 0 when none did.
	Refresh time.Duration `json:"refresh,omitempty"`
	// Report is the crawler's own report, shown by Status (not persisted).
	Report any `json:"-"`
}

// Run outcomes as recorded in SeedState.Outcome.
const (
	OutcomeOK        = "ok"        // every catalog fetched (ok or not modified)
	OutcomePartial   = "partial"   // some catalogs failed, some succeeded
	OutcomeFailed    = "failed"    // catalogs found, none usable
	OutcomeEmpty     = "empty"     // no catalog found for the seed
	OutcomeError     = "error"     // the crawler returned an error
	OutcomeAbandoned = "abandoned" // shutdown cancelled the run; retried at next start
)

// failure reports whether an outcome counts towards backoff.
func failure(outcome string) bool {
	return outcome == OutcomeFailed || outcome == OutcomeEmpty || outcome == OutcomeError
}

// SeedState is what the scheduler knows about one seed. It is persisted.
type SeedState struct {
	Seed       string        `json:"seed"`
	LastStart  time.Time     `json:"lastStart,omitzero"`
	LastFinish time.Time     `json:"lastFinish,omitzero"`
	Outcome    string        `json:"outcome,omitempty"`
	Error      string        `json:"error,omitempty"`
	Failures   int           `json:"failures"` // consecutive
	Runs       int           `json:"runs"`
	Next       time.Time     `json:"next,omitzero"` // zero: due now
	Catalogs   int           `json:"catalogs"`
	Succeeded  int           `json:"succeeded"`
	Records    int           `json:"records"`
	Refresh    time.Duration `json:"refreshNs,omitempty"`
}

// SeedStatus is a seed's state plus what is only known in memory.
type SeedStatus struct {
	SeedState
	Running bool `json:"running"`
	Report  any  `json:"report,omitempty"`
}

// Status is a snapshot for GET /admin/status.
type Status struct {
	Schedule    string       `json:"schedule"`
	Concurrency int          `json:"concurrency"`
	Running     int          `json:"running"`
	Now         time.Time    `json:"now"`
	Seeds       []SeedStatus `json:"seeds"`
}

type seed struct {
	SeedState
	manual bool // triggered by Trigger: runs now regardless of backoff
	report any
}

// Scheduler runs crawls of its seeds on schedule. Create it with New, start
// it with Start and stop it with Stop.
type Scheduler struct {
	cfg      Config
	sched    cron.Schedule
	interval time.Duration
	crawler  Crawler
	clock    Clock
	log      *slog.Logger

	mu       sync.Mutex
	seeds    map[string]*seed
	running  int             // len(inflight)
	inflight map[string]bool // seeds being crawled, even if removed meanwhile
	once     map[string]bool // on-demand targets that are not seeds, waiting to run
	wg       sync.WaitGroup  // in-flight runs
	wake     chan struct{}
	saveMu   sync.Mutex // serialises state file writes

	persistMu sync.Mutex // guards lastSave, pending, stopped
	lastSave  time.Time
	pending   *time.Timer
	stopped   bool

	loopCancel context.CancelFunc
	loopDone   chan struct{}

	runs *prometheus.CounterVec // finished runs by outcome; nil: no metrics
}

// New checks cfg and returns a stopped Scheduler. It loads the state file if
// one exists (a missing file is a fresh start; a corrupt one is moved aside
// with a warning, and the seeds start fresh).
func New(cfg Config, c Crawler) (*Scheduler, error) {
	if c == nil {
		return nil, errors.New("scheduler: nil crawler")
	}
	if cfg.Schedule == "" {
		cfg.Schedule = "@every 1h"
	}
	sched, err := cron.ParseStandard(cfg.Schedule)
	if err != nil {
		return nil, fmt.Errorf("scheduler: parse schedule %q: %w", cfg.Schedule, err)
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Jitter <= 0 {
		cfg.Jitter = 0.1
	}
	if cfg.MaxJitter <= 0 {
		cfg.MaxJitter = 10 * time.Minute
	}
	if cfg.MinRefresh <= 0 {
		cfg.MinRefresh = time.Minute
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 2
	}
	if cfg.SaveInterval == 0 {
		cfg.SaveInterval = 2 * time.Second
	}
	s := &Scheduler{
		cfg:      cfg,
		sched:    sched,
		crawler:  c,
		clock:    cfg.Clock,
		log:      cfg.Logger.With("component", "scheduler"),
		seeds:    map[string]*seed{},
		inflight: map[string]bool{},
		once:     map[string]bool{},
		wake:     make(chan struct{}, 1),
	}
	s.interval = intervalOf(sched, cfg.Clock.Now())
	if s.cfg.BackoffBase <= 0 {
		s.cfg.BackoffBase = s.interval
	}
	if s.cfg.MaxBackoff <= 0 {
		s.cfg.MaxBackoff = 24 * time.Hour
	}
	s.cfg.MaxBackoff = max(s.cfg.MaxBackoff, s.interval)
	if err := s.load(); err != nil {
		return nil, err
	}
	if err := s.registerMetrics(cfg.Metrics); err != nil {
		return nil, err
	}
	return s, nil
}

// intervalOf estimates a schedule's period from two consecutive activations.
func intervalOf(sched cron.Schedule, now time.Time) time.Duration {
	a := sched.Next(now)
	b := sched.Next(a)
	if d := b.Sub(a); d > 0 {
		return d
	}
	return time.Hour
}

// jitter is the seed's stable offset within its jitter window.
func (s *Scheduler) jitter(name string) time.Duration {
	window := min(time.Duration(float64(s.interval)*s.cfg.Jitter), s.cfg.MaxJitter)
	if window <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return time.Duration(h.Sum64() % uint64(window))
}

// next computes when a seed runs again after a run that started at start and
// finished at finish with the state already updated.
func (s *Scheduler) next(st *SeedState, start, finish time.Time) time.Time {
	j := s.jitter(st.Seed)
	if st.Outcome == OutcomeAbandoned {
		return time.Time{} // due at the next start
	}
	if failure(st.Outcome) {
		d := s.cfg.BackoffBase
		for i := 1; i < st.Failures && d < s.cfg.MaxBackoff; i++ {
			d *= 2
		}
		return finish.Add(min(d, s.cfg.MaxBackoff) + j)
	}
	// The cron activation after the run started; a run that overran it
	// moves to the following one rather than running back to back.
	base := s.sched.Next(start)
	if !base.After(finish) {
		base = s.sched.Next(finish)
	}
	n := base.Add(j)
	if st.Refresh > 0 {
		if r := finish.Add(max(st.Refresh, s.cfg.MinRefresh)); r.Before(n) {
			n = r
		}
	}
	return n
}

// SetSeeds replaces the seed list: new seeds are due now, known seeds keep
// their state, and seeds no longer listed are forgotten (a run in flight
// finishes and is then dropped).
func (s *Scheduler) SetSeeds(list []string) {
	want := map[string]bool{}
	for _, name := range list {
		if name != "" {
			want[name] = true
		}
	}
	s.mu.Lock()
	added, removed := 0, 0
	for name := range want {
		if _, ok := s.seeds[name]; !ok {
			s.seeds[name] = &seed{SeedState: SeedState{Seed: name}}
			added++
		}
	}
	for name := range s.seeds {
		if !want[name] {
			delete(s.seeds, name)
			removed++
		}
	}
	total := len(s.seeds)
	s.mu.Unlock()
	s.log.Info("seeds set", "seeds", total, "added", added, "removed", removed)
	s.poke()
	s.persist()
}

// Reload re-reads the seed list with Config.Seeds (the SIGHUP and
// POST /admin/crawl path). On error the current list stays.
func (s *Scheduler) Reload() error {
	if s.cfg.Seeds == nil {
		return nil
	}
	list, err := s.cfg.Seeds()
	if err != nil {
		return fmt.Errorf("scheduler: load seeds: %w", err)
	}
	s.SetSeeds(list)
	return nil
}

func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Start loads the seeds (Config.Seeds, if set) and starts the scheduling
// loop; seeds never crawled, or due, run right away. Crawls run with a
// context derived from ctx: cancelling ctx abandons them. Call Stop to end.
func (s *Scheduler) Start(ctx context.Context) error {
	if err := s.Reload(); err != nil {
		return err
	}
	loopCtx, cancel := context.WithCancel(ctx)
	s.loopCancel = cancel
	s.loopDone = make(chan struct{})
	go s.loop(loopCtx, ctx)
	s.log.Info("scheduler started", "schedule", s.cfg.Schedule, "concurrency", s.cfg.Concurrency)
	return nil
}

// Stop stops starting new runs and returns a context that is done when the
// runs in flight have finished and the state is saved. To abandon them
// instead, cancel the context given to Start.
func (s *Scheduler) Stop() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	final := func() {
		s.wg.Wait()
		s.persistMu.Lock()
		s.stopped = true
		if s.pending != nil {
			s.pending.Stop()
			s.pending = nil
		}
		s.persistMu.Unlock()
		s.saveOrLog()
		cancel()
	}
	if s.loopCancel == nil { // never started: runs started by hand, pending writes
		final()
		return ctx
	}
	s.loopCancel()
	go func() {
		<-s.loopDone
		final()
	}()
	return ctx
}

func (s *Scheduler) loop(loopCtx, runCtx context.Context) {
	defer close(s.loopDone)
	for {
		s.startDue(runCtx)
		wait := s.untilNext()
		select {
		case <-loopCtx.Done():
			return
		case <-s.wake:
		case <-s.clock.After(wait):
		}
	}
}

// untilNext is how long until the next seed is due (capped, so a changed
// clock or list is noticed).
func (s *Scheduler) untilNext() time.Duration {
	now := s.clock.Now()
	wait := time.Hour
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running >= s.cfg.Concurrency {
		return wait // a finishing run wakes the loop
	}
	for t := range s.once {
		if !s.inflight[t] {
			return 0
		}
	}
	for _, sd := range s.seeds {
		if s.inflight[sd.Seed] {
			continue
		}
		wait = min(wait, sd.Next.Sub(now))
	}
	return max(wait, 0)
}

// startDue starts the due seeds, earliest first, up to the concurrency
// bound, and returns the seeds it started.
func (s *Scheduler) startDue(ctx context.Context) []string {
	if ctx.Err() != nil {
		return nil
	}
	now := s.clock.Now()
	s.mu.Lock()
	var due []*seed
	for _, sd := range s.seeds {
		if !s.inflight[sd.Seed] && !sd.Next.After(now) {
			due = append(due, sd)
		}
	}
	slices.SortFunc(due, func(a, b *seed) int {
		if c := a.Next.Compare(b.Next); c != 0 {
			return c
		}
		return strings.Compare(a.Seed, b.Seed)
	})
	var started []string
	for _, t := range s.dueOnce() {
		if s.running >= s.cfg.Concurrency {
			break
		}
		delete(s.once, t)
		s.inflight[t] = true
		s.running++
		s.wg.Add(1)
		started = append(started, t)
		go s.runSeed(ctx, t, now)
	}
	for _, sd := range due {
		if s.running >= s.cfg.Concurrency {
			break
		}
		s.inflight[sd.Seed] = true
		sd.manual = false
		s.running++
		s.wg.Add(1)
		started = append(started, sd.Seed)
		go s.runSeed(ctx, sd.Seed, now)
	}
	s.mu.Unlock()
	return started
}

func (s *Scheduler) runSeed(ctx context.Context, name string, start time.Time) {
	defer s.wg.Done()
	log := s.log.With("seed", name)
	log.Info("crawl started")
	res, err := s.crawler.Crawl(ctx, name)
	finish := s.clock.Now()

	outcome := OutcomeOK
	switch {
	case ctx.Err() != nil:
		outcome = OutcomeAbandoned
	case err != nil:
		outcome = OutcomeError
	case res.Catalogs == 0:
		outcome = OutcomeEmpty
	case res.Succeeded == 0:
		outcome = OutcomeFailed
	case res.Succeeded < res.Catalogs:
		outcome = OutcomePartial
	}

	if s.runs != nil {
		s.runs.WithLabelValues(outcome).Inc()
	}

	s.mu.Lock()
	sd, ok := s.seeds[name]
	delete(s.inflight, name)
	s.running--
	if !ok { // an on-demand target, or removed while running: drop the result
		s.mu.Unlock()
		log.Info("crawl finished", "outcome", outcome, "catalogs", res.Catalogs, "succeeded", res.Succeeded,
			"records", res.Records, "took", finish.Sub(start), "err", err)
		s.poke()
		return
	}
	sd.LastStart, sd.LastFinish = start, finish
	sd.Outcome = outcome
	sd.Error = ""
	if err != nil {
		sd.Error = err.Error()
	}
	if outcome != OutcomeAbandoned {
		sd.Runs++
		records := res.Records
		if res.Succeeded > 0 && res.NotModified == res.Succeeded {
			records = sd.Records // unchanged catalogs: their records are too
		}
		sd.Catalogs, sd.Succeeded, sd.Records, sd.Refresh = res.Catalogs, res.Succeeded, records, res.Refresh
		sd.report = res.Report
		if failure(outcome) {
			sd.Failures++
		} else {
			sd.Failures = 0
		}
	}
	if !sd.manual { // a Trigger during the run keeps the seed due now
		sd.Next = s.next(&sd.SeedState, start, finish)
	}
	st := sd.SeedState
	s.mu.Unlock()

	level := slog.LevelInfo
	if failure(outcome) {
		level = slog.LevelWarn
	}
	log.Log(context.Background(), level, "crawl finished", "outcome", outcome, "catalogs", st.Catalogs,
		"succeeded", st.Succeeded, "records", st.Records, "failures", st.Failures,
		"next", st.Next, "took", finish.Sub(start), "err", err)
	s.persist()
	s.poke()
}

// persist writes the state file now, or, when the last write was less than
// SaveInterval ago, once the interval has passed (one pending write at most).
func (s *Scheduler) persist() {
	if s.cfg.StatePath == "" {
		return
	}
	s.persistMu.Lock()
	since := time.Since(s.lastSave)
	if s.cfg.SaveInterval < 0 || since >= s.cfg.SaveInterval {
		s.lastSave = time.Now()
		s.persistMu.Unlock()
		s.saveOrLog()
		return
	}
	if s.pending == nil && !s.stopped {
		s.pending = time.AfterFunc(s.cfg.SaveInterval-since, func() {
			s.persistMu.Lock()
			s.pending = nil
			s.lastSave = time.Now()
			s.persistMu.Unlock()
			s.saveOrLog()
		})
	}
	s.persistMu.Unlock()
}

func (s *Scheduler) saveOrLog() {
	if err := s.save(); err != nil {
		s.log.Error("save state failed", "err", err)
	}
}

// Status returns a snapshot of every seed, sorted by seed.
func (s *Scheduler) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{
		Schedule:    s.cfg.Schedule,
		Concurrency: s.cfg.Concurrency,
		Running:     s.running,
		Now:         s.clock.Now(),
	}
	for _, sd := range s.seeds {
		st.Seeds = append(st.Seeds, SeedStatus{SeedState: sd.SeedState, Running: s.inflight[sd.Seed], Report: sd.report})
	}
	slices.SortFunc(st.Seeds, func(a, b SeedStatus) int { return strings.Compare(a.Seed, b.Seed) })
	return st
}
