package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is clockwork's fake clock (its After channels fire only when
// the clock is advanced past them) that can also be set to a time.
type fakeClock struct{ *clockwork.FakeClock }

func newFakeClock() fakeClock {
	return fakeClock{clockwork.NewFakeClockAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
}

// Set moves the clock to t, firing every After channel due by then.
func (c fakeClock) Set(t time.Time) { c.Advance(t.Sub(c.Now())) }

// fakeCrawler answers from a per-seed function and records calls and the
// peak number of concurrent runs, per seed and overall.
type fakeCrawler struct {
	mu         sync.Mutex
	answer     func(seed string) (Result, error)
	block      chan struct{} // when non-nil, each crawl waits for a receive-able value or ctx
	started    chan string   // when non-nil, receives each started seed
	calls      map[string]int
	active     map[string]int
	peakSeed   int
	active0    int
	peakActive int
}

func newFakeCrawler(answer func(string) (Result, error)) *fakeCrawler {
	if answer == nil {
		answer = func(string) (Result, error) { return Result{Catalogs: 1, Succeeded: 1, Records: 3}, nil }
	}
	return &fakeCrawler{answer: answer, calls: map[string]int{}, active: map[string]int{}}
}

func (f *fakeCrawler) Crawl(ctx context.Context, seed string) (Result, error) {
	f.mu.Lock()
	f.calls[seed]++
	f.active[seed]++
	f.active0++
	f.peakSeed = max(f.peakSeed, f.active[seed])
	f.peakActive = max(f.peakActive, f.active0)
	block, started := f.block, f.started
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.active[seed]--
		f.active0--
		f.mu.Unlock()
	}()
	if started != nil {
		started <- seed
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
	return f.answer(seed)
}

func (f *fakeCrawler) count(seed string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[seed]
}

func newTest(t *testing.T, cfg Config, c Crawler) (*Scheduler, fakeClock) {
	t.Helper()
	clk := newFakeClock()
	cfg.Clock = clk
	s, err := New(cfg, c)
	if err != nil {
		t.Fatal(err)
	}
	return s, clk
}

// runDue starts the due seeds and waits for their runs to finish.
func runDue(t *testing.T, s *Scheduler) []string {
	t.Helper()
	started := s.startDue(t.Context())
	s.wg.Wait()
	return started
}

func state(t *testing.T, s *Scheduler, name string) SeedState {
	t.Helper()
	for _, st := range s.Status().Seeds {
		if st.Seed == name {
			return st.SeedState
		}
	}
	t.Fatalf("seed %s not in status", name)
	return SeedState{}
}

func TestFirstRunRightAwayThenOnSchedule(t *testing.T) {
	fc := newFakeCrawler(nil)
	s, clk := newTest(t, Config{Schedule: "@every 1h"}, fc)
	s.SetSeeds([]string{"a.test"})
	if got := runDue(t, s); !reflect.DeepEqual(got, []string{"a.test"}) {
		t.Fatalf("first run started %v, want [a.test]", got)
	}
	st := state(t, s, "a.test")
	if st.Outcome != OutcomeOK || st.Runs != 1 || st.Records != 3 {
		t.Fatalf("state after first run = %+v", st)
	}
	j := s.jitter("a.test")
	if want := clk.Now().Add(time.Hour + j); !st.Next.Equal(want) {
		t.Fatalf("next = %v, want schedule + jitter = %v", st.Next, want)
	}
	clk.Set(st.Next.Add(-time.Second))
	if got := runDue(t, s); len(got) != 0 {
		t.Fatalf("ran %v before it was due", got)
	}
	clk.Set(st.Next)
	if got := runDue(t, s); len(got) != 1 {
		t.Fatalf("did not run when due: %v", got)
	}
	if fc.count("a.test") != 2 {
		t.Fatalf("crawls = %d, want 2", fc.count("a.test"))
	}
}

func TestJitterSpreadsSeeds(t *testing.T) {
	s, _ := newTest(t, Config{Schedule: "@every 1h", Jitter: 0.1}, newFakeCrawler(nil))
	window := 6 * time.Minute
	const n, buckets = 2000, 10
	var count [buckets]int
	for i := range n {
		j := s.jitter(fmt.Sprintf("seed-%d.example", i))
		if j < 0 || j >= window {
			t.Fatalf("jitter %v outside [0, %v)", j, window)
		}
		count[int(j*buckets/window)]++
	}
	for b, c := range count {
		// Uniform would be 200 per bucket; a hash that clumps fails this.
		if c < n/buckets/2 || c > n/buckets*2 {
			t.Fatalf("bucket %d holds %d of %d seeds: jitter does not spread (%v)", b, c, n, count)
		}
	}
	if s.jitter("a.test") != s.jitter("a.test") {
		t.Fatal("jitter is not stable")
	}
	// MaxJitter caps the window.
	capped, _ := newTest(t, Config{Schedule: "@every 24h", MaxJitter: time.Minute}, newFakeCrawler(nil))
	for i := range 100 {
		if j := capped.jitter(fmt.Sprint(i)); j >= time.Minute {
			t.Fatalf("jitter %v above MaxJitter", j)
		}
	}
}

func TestBackoffDoublesAndResets(t *testing.T) {
	fail := true
	fc := newFakeCrawler(func(string) (Result, error) {
		if fail {
			return Result{Catalogs: 2, Succeeded: 0}, nil
		}
		return Result{Catalogs: 2, Succeeded: 2, Records: 5}, nil
	})
	s, clk := newTest(t, Config{Schedule: "@every 1h", BackoffBase: time.Minute, MaxBackoff: 10 * time.Hour}, fc)
	s.SetSeeds([]string{"down.test"})
	j := s.jitter("down.test")
	wants := []time.Duration{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 600, 600} // minutes, capped at 10h
	for i, w := range wants {
		runDue(t, s)
		st := state(t, s, "down.test")
		if st.Outcome != OutcomeFailed || st.Failures != i+1 {
			t.Fatalf("run %d: outcome %s failures %d", i+1, st.Outcome, st.Failures)
		}
		if got := st.Next.Sub(st.LastFinish) - j; got != w*time.Minute {
			t.Fatalf("failure %d: backoff %v, want %v", i+1, got, w*time.Minute)
		}
		clk.Set(st.Next)
	}
	fail = false
	runDue(t, s)
	st := state(t, s, "down.test")
	if st.Outcome != OutcomeOK || st.Failures != 0 || st.Records != 5 {
		t.Fatalf("after recovery: %+v", st)
	}
	if want := s.sched.Next(st.LastStart).Add(j); !st.Next.Equal(want) {
		t.Fatalf("after recovery next %v, want the schedule %v", st.Next, want)
	}
}

func TestOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		res     Result
		err     error
		want    string
		failing bool
	}{
		{"all ok", Result{Catalogs: 3, Succeeded: 3}, nil, OutcomeOK, false},
		{"some failed", Result{Catalogs: 3, Succeeded: 1}, nil, OutcomePartial, false},
		{"all failed", Result{Catalogs: 3}, nil, OutcomeFailed, true},
		{"nothing found", Result{}, nil, OutcomeEmpty, true},
		{"crawler error", Result{}, errors.New("boom"), OutcomeError, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTest(t, Config{}, newFakeCrawler(func(string) (Result, error) { return tc.res, tc.err }))
			s.SetSeeds([]string{"x.test"})
			runDue(t, s)
			st := state(t, s, "x.test")
			if st.Outcome != tc.want || (st.Failures == 1) != tc.failing {
				t.Fatalf("outcome %s failures %d, want %s failing=%v", st.Outcome, st.Failures, tc.want, tc.failing)
			}
			if tc.err != nil && st.Error != tc.err.Error() {
				t.Fatalf("error = %q", st.Error)
			}
		})
	}
}

func TestMaxAgeRefreshWithFloor(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refresh time.Duration
		want    time.Duration // from finish, before jitter
		jitter  bool
	}{
		{"max-age sooner than schedule", 10 * time.Minute, 10 * time.Minute, false},
		{"max-age below floor waits the floor", 5 * time.Second, 2 * time.Minute, false},
		{"max-age later than schedule keeps the schedule", 3 * time.Hour, time.Hour, true},
		{"no max-age", 0, time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTest(t, Config{Schedule: "@every 1h", MinRefresh: 2 * time.Minute},
				newFakeCrawler(func(string) (Result, error) {
					return Result{Catalogs: 1, Succeeded: 1, Refresh: tc.refresh}, nil
				}))
			s.SetSeeds([]string{"fresh.test"})
			runDue(t, s)
			st := state(t, s, "fresh.test")
			want := tc.want
			if tc.jitter {
				want += s.jitter("fresh.test")
			}
			if got := st.Next.Sub(st.LastFinish); got != want {
				t.Fatalf("next in %v, want %v", got, want)
			}
			if st.Refresh != tc.refresh {
				t.Fatalf("refresh recorded %v", st.Refresh)
			}
		})
	}
}

func TestNoDoubleRunsAndConcurrencyBound(t *testing.T) {
	fc := newFakeCrawler(nil)
	fc.block = make(chan struct{})
	s, _ := newTest(t, Config{Concurrency: 2}, fc)
	seeds := []string{"a.test", "b.test", "c.test", "d.test", "e.test"}
	s.SetSeeds(seeds)
	first := s.startDue(t.Context())
	if len(first) != 2 {
		t.Fatalf("started %v with concurrency 2", first)
	}
	// Everything is still due, but nothing more may start: slots are full and
	// running seeds are never started twice, even when triggered.
	if got := s.startDue(t.Context()); len(got) != 0 {
		t.Fatalf("second pass started %v while full", got)
	}
	s.Trigger(first...)
	if got := s.startDue(t.Context()); len(got) != 0 {
		t.Fatalf("trigger started %v again while running", got)
	}
	if st := s.Status(); st.Running != 2 {
		t.Fatalf("status running = %d", st.Running)
	}
	close(fc.block)
	s.wg.Wait()
	// The seeds triggered while running run again; the rest run in turn.
	for range 4 {
		runDue(t, s)
	}
	if fc.peakSeed != 1 {
		t.Fatalf("a seed ran %d times concurrently", fc.peakSeed)
	}
	if fc.peakActive > 2 {
		t.Fatalf("%d crawls ran at once with concurrency 2", fc.peakActive)
	}
	for _, sd := range seeds {
		want := 1
		if sd == first[0] || sd == first[1] {
			want = 2
		}
		if got := fc.count(sd); got != want {
			t.Fatalf("%s crawled %d times, want %d", sd, got, want)
		}
	}
}

func TestStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "scheduler.json")
	extra := &memExtra{data: `{"https://a.test/.well-known/ai-catalog.json":{"etag":"\"v1\""}}`}
	fc := newFakeCrawler(func(seed string) (Result, error) {
		if seed == "bad.test" {
			return Result{}, errors.New("dns_error")
		}
		return Result{Catalogs: 2, Succeeded: 2, Records: 7, Refresh: 10 * time.Minute}, nil
	})
	s, clk := newTest(t, Config{StatePath: path, Extra: extra, SaveInterval: -1}, fc)
	s.SetSeeds([]string{"a.test", "bad.test"})
	runDue(t, s)
	before := s.Status()

	extra2 := &memExtra{}
	s2, err := New(Config{StatePath: path, Extra: extra2, Clock: clk, SaveInterval: -1}, fc)
	if err != nil {
		t.Fatal(err)
	}
	s2.SetSeeds([]string{"a.test", "bad.test", "new.test"})
	after := s2.Status()
	if len(after.Seeds) != 3 {
		t.Fatalf("after restart: %d seeds", len(after.Seeds))
	}
	for i, want := range before.Seeds {
		got := after.Seeds[i].SeedState
		if !reflect.DeepEqual(got, want.SeedState) {
			t.Fatalf("seed %s after restart:\n got %+v\nwant %+v", want.Seed, got, want.SeedState)
		}
	}
	if extra2.data != extra.data {
		t.Fatalf("extra state after restart = %q", extra2.data)
	}
	// Only the new seed is due right after the restart.
	if got := s2.startDue(t.Context()); !reflect.DeepEqual(got, []string{"new.test"}) {
		t.Fatalf("after restart started %v, want only the new seed", got)
	}
	s2.wg.Wait()
	// No temporary files left behind.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("state dir holds %d files", len(entries))
	}
}

// TestCorruptStateMovedAside: a state file that does not parse is moved
// aside with a warning naming it, and the scheduler starts from empty state
// (every seed due) instead of refusing to start.
func TestCorruptStateMovedAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scheduler.json")
	if err := os.WriteFile(path, []byte(`{"version": 1, "seeds": [{"seed": "a.te`), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	fc := newFakeCrawler(nil)
	s, _ := newTest(t, Config{StatePath: path, SaveInterval: -1, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, fc)
	s.SetSeeds([]string{"a.test"})
	if got := runDue(t, s); !reflect.DeepEqual(got, []string{"a.test"}) {
		t.Errorf("after a corrupt state file started %v, want the seed", got)
	}
	aside, _ := filepath.Glob(path + ".corrupt-*")
	if len(aside) != 1 {
		t.Fatalf("corrupt file not kept aside: %v", aside)
	}
	if b, _ := os.ReadFile(aside[0]); !strings.HasPrefix(string(b), `{"version": 1, "seeds": [{"seed": "a.te`) {
		t.Errorf("the file kept aside holds %q", b)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), aside[0]) {
		t.Errorf("no warning naming the file kept aside:\n%s", logs.String())
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("state not written again after the fresh start: %v", err)
	}
}

// TestStateFromClockAheadIsClamped: a state file written while the clock
// was 70 years ahead (then corrected) does not keep seeds waiting until
// then: after a restart, a seed runs again within one schedule interval
// (plus its jitter), a failing one within the backoff it earned.
func TestStateFromClockAheadIsClamped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scheduler.json")
	fc := newFakeCrawler(func(seed string) (Result, error) {
		if seed == "bad.test" {
			return Result{}, errors.New("dns_error")
		}
		return Result{Catalogs: 1, Succeeded: 1}, nil
	})
	cfg := Config{StatePath: path, SaveInterval: -1, Schedule: "@every 1h", MaxBackoff: 4 * time.Hour}
	ahead, clk := newTest(t, cfg, fc)
	right := clk.Now()
	clk.Set(right.AddDate(70, 0, 0))
	ahead.SetSeeds([]string{"a.test", "bad.test"})
	runDue(t, ahead)
	ahead.SetSeeds([]string{"a.test", "bad.test"}) // saves
	if st := state(t, ahead, "a.test"); st.Next.Year() < 2096 {
		t.Fatalf("state written ahead has next %v", st.Next)
	}

	clk.Set(right)
	cfg.Clock = clk
	s, err := New(cfg, fc)
	if err != nil {
		t.Fatal(err)
	}
	s.SetSeeds([]string{"a.test", "bad.test"})
	for seed, wait := range map[string]time.Duration{"a.test": time.Hour, "bad.test": time.Hour} {
		if st := state(t, s, seed); st.Next.After(right.Add(wait + 10*time.Minute)) {
			t.Errorf("%s after restart waits until %v (now %v)", seed, st.Next, right)
		}
	}
	clk.Set(right.Add(time.Hour + 10*time.Minute))
	if got := runDue(t, s); len(got) != 2 {
		t.Errorf("an interval and its jitter after the restart, %v ran; want both seeds", got)
	}
}

type memExtra struct {
	mu   sync.Mutex
	data string
}

func (m *memExtra) MarshalState() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.data == "" {
		return nil, nil
	}
	return []byte(m.data), nil
}

func (m *memExtra) UnmarshalState(b []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	c, _ := json.Marshal(v)
	m.data = string(c)
	return nil
}

func TestReloadAddsAndRemovesSeeds(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "seeds.txt")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# seeds\na.test\nb.test  # inline comment\n\n")
	fc := newFakeCrawler(nil)
	s, _ := newTest(t, Config{Concurrency: 5, Seeds: SeedsFrom([]string{"flag.test"}, file)}, fc)
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	runDue(t, s)
	write("a.test\nc.test\n")
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := runDue(t, s); !reflect.DeepEqual(got, []string{"c.test"}) {
		t.Fatalf("after reload started %v, want the new seed only", got)
	}
	var names []string
	for _, st := range s.Status().Seeds {
		names = append(names, st.Seed)
	}
	if want := []string{"a.test", "c.test", "flag.test"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("seeds after reload = %v, want %v", names, want)
	}
	// A broken file keeps the current list.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err == nil {
		t.Fatal("reload of a missing file did not fail")
	}
	if n := len(s.Status().Seeds); n != 3 {
		t.Fatalf("failed reload changed the list to %d seeds", n)
	}
}

func TestParseSeeds(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"plain", "a.test\nb.test\n", []string{"a.test", "b.test"}},
		{"comments and blanks", "# header\n\n  a.test  \n#b.test\n", []string{"a.test"}},
		{"inline comment", "a.test # prod\n", []string{"a.test"}},
		{"fragment kept", "https://a.test/cat.json#x\n", []string{"https://a.test/cat.json#x"}},
		{"duplicates", "a.test\na.test\n", []string{"a.test"}},
		{"crlf", "a.test\r\nb.test\r\n", []string{"a.test", "b.test"}},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSeeds(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLoopRunsAndStopWaits(t *testing.T) {
	fc := newFakeCrawler(nil)
	fc.block = make(chan struct{})
	fc.started = make(chan string, 10)
	s, clk := newTest(t, Config{Schedule: "@every 1h", Seeds: SeedsFrom([]string{"a.test"}, "")}, fc)
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-fc.started // first crawl right away
	stopped := s.Stop()
	select {
	case <-stopped.Done():
		t.Fatal("Stop did not wait for the run in flight")
	default:
	}
	close(fc.block)
	<-stopped.Done()
	if st := state(t, s, "a.test"); st.Outcome != OutcomeOK || st.Runs != 1 {
		t.Fatalf("after stop: %+v", st)
	}
	clk.Advance(2 * time.Hour) // the loop is gone: nothing starts
	if n := fc.count("a.test"); n != 1 {
		t.Fatalf("crawled %d times after Stop", n)
	}
}

func TestLoopFollowsClock(t *testing.T) {
	fc := newFakeCrawler(nil)
	fc.started = make(chan string, 10)
	s, clk := newTest(t, Config{Schedule: "@every 1h", Seeds: SeedsFrom([]string{"a.test"}, "")}, fc)
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() { <-s.Stop().Done() }()
	<-fc.started
	// Wait for the run to be recorded, then move the clock to its next time.
	var next time.Time
	for next.IsZero() {
		s.wg.Wait()
		next = state(t, s, "a.test").Next
	}
	clk.Set(next)
	if got := <-fc.started; got != "a.test" {
		t.Fatalf("started %s", got)
	}
}

func TestAbandonedRunIsNotAFailure(t *testing.T) {
	fc := newFakeCrawler(nil)
	fc.block = make(chan struct{})
	fc.started = make(chan string, 1)
	s, _ := newTest(t, Config{Seeds: SeedsFrom([]string{"slow.test"}, "")}, fc)
	ctx, cancel := context.WithCancel(t.Context())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-fc.started
	stopped := s.Stop()
	cancel() // abandon the run in flight
	<-stopped.Done()
	st := state(t, s, "slow.test")
	if st.Outcome != OutcomeAbandoned || st.Failures != 0 || st.Runs != 0 || !st.Next.IsZero() {
		t.Fatalf("abandoned run recorded as %+v", st)
	}
}

func TestStateWritesCoalesced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, _ := newTest(t, Config{StatePath: path, SaveInterval: time.Hour}, newFakeCrawler(nil))
	runs := func() int {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f stateFile
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, st := range f.Seeds {
			n += st.Runs
		}
		return n
	}
	s.SetSeeds([]string{"a.test", "b.test"}) // first change: written at once
	runDue(t, s)                             // within the interval: deferred
	if n := runs(); n != 0 {
		t.Fatalf("state written %d runs within the save interval", n)
	}
	<-s.Stop().Done() // Stop writes what is pending
	if n := runs(); n != 2 {
		t.Fatalf("after Stop the file holds %d runs, want 2", n)
	}
}

func TestRemovedAndReaddedSeedNotRunTwice(t *testing.T) {
	fc := newFakeCrawler(nil)
	fc.block = make(chan struct{})
	s, _ := newTest(t, Config{Concurrency: 4}, fc)
	s.SetSeeds([]string{"a.test"})
	if got := s.startDue(t.Context()); len(got) != 1 {
		t.Fatalf("started %v", got)
	}
	s.SetSeeds(nil)                // removed while its crawl runs
	s.SetSeeds([]string{"a.test"}) // and listed again: due now, but still running
	if got := s.startDue(t.Context()); len(got) != 0 {
		t.Fatalf("re-added seed started again while its first crawl runs: %v", got)
	}
	close(fc.block)
	s.wg.Wait()
	// The crawl that finished is the seed's: its result is recorded.
	if st := state(t, s, "a.test"); st.Runs != 1 || st.Outcome != OutcomeOK {
		t.Fatalf("re-added seed after its crawl ended: %+v", st)
	}
	if fc.peakSeed != 1 {
		t.Fatalf("peak concurrent crawls of one seed = %d", fc.peakSeed)
	}
}

func TestNotModifiedKeepsRecordCount(t *testing.T) {
	res := Result{Catalogs: 2, Succeeded: 2, Records: 9}
	s, clk := newTest(t, Config{}, newFakeCrawler(func(string) (Result, error) { return res, nil }))
	s.SetSeeds([]string{"a.test"})
	runDue(t, s)
	res = Result{Catalogs: 2, Succeeded: 2, NotModified: 2} // both 304: no records in the report
	clk.Set(state(t, s, "a.test").Next)
	runDue(t, s)
	if st := state(t, s, "a.test"); st.Records != 9 || st.Runs != 2 {
		t.Fatalf("after an unchanged crawl: %+v, want 9 records kept", st)
	}
	res = Result{Catalogs: 2, Succeeded: 2, NotModified: 1, Records: 4} // one changed
	clk.Set(state(t, s, "a.test").Next)
	runDue(t, s)
	if st := state(t, s, "a.test"); st.Records != 4 {
		t.Fatalf("after a partly changed crawl: %d records, want the report's 4", st.Records)
	}
}
