package scheduler

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestRunNowCrawlsOnceAndFoldsRequests(t *testing.T) {
	fc := newFakeCrawler(nil)
	s, _ := newTest(t, Config{Schedule: "@every 1h"}, fc)
	s.SetSeeds([]string{"a.test"})
	runDue(t, s) // the first scheduled run: a.test is now due in an hour

	const cat = "https://a.test/catalog.json"
	if !s.RunNow(cat) {
		t.Fatal("RunNow of a new target did not queue it")
	}
	if s.RunNow(cat) {
		t.Fatal("RunNow queued a target already waiting")
	}
	if !s.RunNow("a.test") || s.RunNow("a.test") {
		t.Fatal("RunNow of a seed: want queued once")
	}
	got := runDue(t, s)
	if want := []string{cat, "a.test"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("started %v, want on-demand first: %v", got, want)
	}
	if fc.count(cat) != 1 || fc.count("a.test") != 2 {
		t.Fatalf("crawls: %s %d, a.test %d; want 1 and 2", cat, fc.count(cat), fc.count("a.test"))
	}
	if s.Has(cat) || !s.Has("a.test") {
		t.Fatalf("Has: on-demand target %v, seed %v; want false, true", s.Has(cat), s.Has("a.test"))
	}
	if got := runDue(t, s); len(got) != 0 {
		t.Fatalf("ran %v again without a request", got)
	}
}

func TestRunNowDuringRunRunsOnceMore(t *testing.T) {
	fc := newFakeCrawler(nil)
	fc.block = make(chan struct{})
	fc.started = make(chan string, 4)
	s, _ := newTest(t, Config{Schedule: "@every 1h"}, fc)
	const cat = "https://b.test/catalog.json"
	s.RunNow(cat)
	if got := s.startDue(t.Context()); len(got) != 1 {
		t.Fatalf("started %v", got)
	}
	<-fc.started
	// Asked three times while running: one more run after this one.
	if !s.RunNow(cat) || s.RunNow(cat) || s.RunNow(cat) {
		t.Fatal("requests during a run: want the first queued, the rest folded")
	}
	if got := s.startDue(t.Context()); len(got) != 0 {
		t.Fatalf("started %v while the target was running", got)
	}
	fc.block <- struct{}{}
	s.wg.Wait()
	if got := s.startDue(t.Context()); !reflect.DeepEqual(got, []string{cat}) {
		t.Fatalf("after the run started %v, want the folded rerun", got)
	}
	<-fc.started
	fc.block <- struct{}{}
	s.wg.Wait()
	if fc.count(cat) != 2 {
		t.Fatalf("crawls = %d, want 2", fc.count(cat))
	}
}

// An on-demand crawl queued, or running, when the process stops is run by
// the next scheduler on the same state (a restart, or a new crawl leader
// reading the cluster's state); a seed asked for is due now in its state.
func TestRunNowSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	fc := newFakeCrawler(nil)
	fc.block = make(chan struct{})
	fc.started = make(chan string, 4)
	cfg := Config{Schedule: "@every 1h", StatePath: path, SaveInterval: time.Hour, Concurrency: 4}
	s, clk := newTest(t, cfg, fc)
	s.SetSeeds([]string{"a.test"})
	go func() { fc.block <- struct{}{} }()
	runDue(t, s) // a.test ran: due again in an hour
	const running, waiting = "https://r.test/catalog.json", "https://w.test/catalog.json"
	s.RunNow(running)
	if got := s.startDue(t.Context()); !reflect.DeepEqual(got, []string{running}) {
		t.Fatalf("started %v, want %s", got, running)
	}
	<-fc.started
	s.RunNow(waiting)
	s.Trigger("a.test")
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}

	next := newFakeCrawler(nil)
	cfg.Clock = clk
	s2, err := New(cfg, next)
	if err != nil {
		t.Fatal(err)
	}
	s2.SetSeeds([]string{"a.test"})
	got := runDue(t, s2)
	slices.Sort(got)
	if want := []string{"a.test", running, waiting}; !reflect.DeepEqual(got, want) {
		t.Fatalf("the next scheduler started %v, want %v", got, want)
	}
	if got := runDue(t, s2); len(got) != 0 {
		t.Fatalf("then started %v again", got)
	}
	fc.block <- struct{}{}
	s.wg.Wait()
}
