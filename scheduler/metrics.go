package scheduler

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// outcomes lists every SeedState.Outcome value, "pending" for a seed never
// run, so each has a series from the start.
var outcomes = []string{"pending", OutcomeOK, OutcomePartial, OutcomeFailed, OutcomeEmpty, OutcomeError, OutcomeAbandoned}

var (
	seedsDesc = prometheus.NewDesc("agentfinder_scheduler_seeds",
		"Seeds by the outcome of their last run (pending: never run).", []string{"outcome"}, nil)
	runningDesc = prometheus.NewDesc("agentfinder_scheduler_running",
		"Seed crawls in flight.", nil, nil)
	lagDesc = prometheus.NewDesc("agentfinder_scheduler_next_run_lag_seconds",
		"How long the most overdue seed that is not running has been due (0 when none is).", nil, nil)
)

// collector reads the scheduler's seeds at scrape time; runs counts
// finished runs.
type collector struct {
	s    *Scheduler
	runs *prometheus.CounterVec
}

// registerMetrics registers s's instruments with reg; nil reg does nothing.
func (s *Scheduler) registerMetrics(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	c := &collector{s: s, runs: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentfinder_scheduler_runs_total",
		Help: "Seed crawls finished, by outcome.",
	}, []string{"outcome"})}
	for _, o := range outcomes[1:] {
		c.runs.WithLabelValues(o)
	}
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("scheduler: register metrics: %w", err)
	}
	s.runs = c.runs
	return nil
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- seedsDesc
	ch <- runningDesc
	ch <- lagDesc
	c.runs.Describe(ch)
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	now := s.clock.Now()
	counts := map[string]int{}
	var lag float64
	s.mu.Lock()
	running := s.running
	for _, sd := range s.seeds {
		o := sd.Outcome
		if o == "" {
			o = "pending"
		}
		counts[o]++
		if !s.inflight[sd.Seed] && !sd.Next.IsZero() && now.After(sd.Next) {
			lag = max(lag, now.Sub(sd.Next).Seconds())
		}
	}
	s.mu.Unlock()
	for _, o := range outcomes {
		ch <- prometheus.MustNewConstMetric(seedsDesc, prometheus.GaugeValue, float64(counts[o]), o)
	}
	ch <- prometheus.MustNewConstMetric(runningDesc, prometheus.GaugeValue, float64(running))
	ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, lag)
	c.runs.Collect(ch)
}
