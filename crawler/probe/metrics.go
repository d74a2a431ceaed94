package probe

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfinder/agentfinder/normalize"
)

// metrics are the prober's Prometheus instruments; a nil *metrics records
// nothing.
type metrics struct {
	probes  *prometheus.CounterVec
	latency prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer, p *Prober) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentfinder_probes_total",
			Help: "Endpoint probes, by outcome: up, slow (up, above the latency budget), auth_required, failed (counts toward down), skipped (robots.txt, network guard).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "agentfinder_probe_latency_seconds",
			Help:    "Latency of the endpoints that answered a probe (the slowest request of the probe).",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2, 5, 10},
		}),
	}
	records := &recordsCollector{p: p, desc: prometheus.NewDesc("agentfinder_probe_records",
		"Records the prober keeps state for (those with an endpoint it can probe), by health status.", []string{"status"}, nil)}
	for _, c := range []prometheus.Collector{m.probes, m.latency, records} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("probe: register metrics: %w", err)
		}
	}
	for _, o := range []string{OutcomeUp, OutcomeSlow, OutcomeAuthRequired, OutcomeFailed, OutcomeSkipped} {
		m.probes.WithLabelValues(o) // every outcome shows, at 0, from the start
	}
	return m, nil
}

// recordsCollector reports the prober's records by health status at
// scrape time.
type recordsCollector struct {
	p    *Prober
	desc *prometheus.Desc
}

// Describe sends the one description (prometheus.Collector).
func (c *recordsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect sends one gauge per health status (prometheus.Collector).
func (c *recordsCollector) Collect(ch chan<- prometheus.Metric) {
	by := c.p.Stats().ByStatus
	for _, s := range normalize.HealthStatuses {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(by[s]), s)
	}
}

// probe records one probe's outcome and, when the endpoint answered, its latency.
func (m *metrics) probe(outcome string, latency time.Duration) {
	if m == nil {
		return
	}
	m.probes.WithLabelValues(outcome).Inc()
	switch outcome {
	case OutcomeUp, OutcomeSlow, OutcomeAuthRequired:
		m.latency.Observe(latency.Seconds())
	}
}
