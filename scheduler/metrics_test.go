package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, clk := newTest(t, Config{Schedule: "@every 1h", Metrics: reg}, newFakeCrawler(func(seed string) (Result, error) {
		if seed == "bad.test" {
			return Result{Catalogs: 2}, nil
		}
		return Result{Catalogs: 1, Succeeded: 1}, nil
	}))
	s.SetSeeds([]string{"a.test", "bad.test", "c.test"})
	// Before any run: every seed pending, nothing overdue (due now is not late).
	want := `
# HELP agentfinder_scheduler_seeds Seeds by the outcome of their last run (pending: never run).
# TYPE agentfinder_scheduler_seeds gauge
agentfinder_scheduler_seeds{outcome="abandoned"} 0
agentfinder_scheduler_seeds{outcome="empty"} 0
agentfinder_scheduler_seeds{outcome="error"} 0
agentfinder_scheduler_seeds{outcome="failed"} 0
agentfinder_scheduler_seeds{outcome="ok"} 0
agentfinder_scheduler_seeds{outcome="partial"} 0
agentfinder_scheduler_seeds{outcome="pending"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "agentfinder_scheduler_seeds"); err != nil {
		t.Fatal(err)
	}
	runDue(t, s)
	want = `
# HELP agentfinder_scheduler_runs_total Seed crawls finished, by outcome.
# TYPE agentfinder_scheduler_runs_total counter
agentfinder_scheduler_runs_total{outcome="abandoned"} 0
agentfinder_scheduler_runs_total{outcome="empty"} 0
agentfinder_scheduler_runs_total{outcome="error"} 0
agentfinder_scheduler_runs_total{outcome="failed"} 1
agentfinder_scheduler_runs_total{outcome="ok"} 1
agentfinder_scheduler_runs_total{outcome="partial"} 0
# HELP agentfinder_scheduler_seeds Seeds by the outcome of their last run (pending: never run).
# TYPE agentfinder_scheduler_seeds gauge
agentfinder_scheduler_seeds{outcome="abandoned"} 0
agentfinder_scheduler_seeds{outcome="empty"} 0
agentfinder_scheduler_seeds{outcome="error"} 0
agentfinder_scheduler_seeds{outcome="failed"} 1
agentfinder_scheduler_seeds{outcome="ok"} 1
agentfinder_scheduler_seeds{outcome="partial"} 0
agentfinder_scheduler_seeds{outcome="pending"} 1
`
	// Concurrency 2: two of the three seeds ran.
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "agentfinder_scheduler_runs_total", "agentfinder_scheduler_seeds"); err != nil {
		t.Fatal(err)
	}
	// An hour and a half later the seeds that ran are overdue (nobody
	// started them); the lag is the oldest one's.
	var latest time.Time
	for _, st := range s.Status().Seeds {
		if !st.Next.IsZero() && st.Next.After(latest) {
			latest = st.Next
		}
	}
	var first time.Time
	for _, st := range s.Status().Seeds {
		if !st.Next.IsZero() && (first.IsZero() || st.Next.Before(first)) {
			first = st.Next
		}
	}
	clk.Set(latest.Add(time.Minute))
	lag := testutil.ToFloat64(lagGauge{s})
	if want := clk.Now().Sub(first).Seconds(); lag != want {
		t.Fatalf("next-run lag = %v s, want %v s", lag, want)
	}
}

// lagGauge narrows the scheduler's collector to the lag metric for
// testutil.ToFloat64, which takes a collector of exactly one metric.
type lagGauge struct{ s *Scheduler }

func (g lagGauge) Describe(ch chan<- *prometheus.Desc) { ch <- lagDesc }

func (g lagGauge) Collect(ch chan<- prometheus.Metric) {
	all := make(chan prometheus.Metric, 64)
	c := &collector{s: g.s, runs: g.s.runs}
	go func() { c.Collect(all); close(all) }()
	for m := range all {
		if m.Desc() == lagDesc {
			ch <- m
		}
	}
}

func TestMetricsNamesTaken(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := New(Config{Metrics: reg}, newFakeCrawler(nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Metrics: reg}, newFakeCrawler(nil)); err == nil {
		t.Fatal("a second scheduler on the same registry registered its metrics")
	}
}
