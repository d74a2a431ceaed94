package indexnow

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the endpoint's instruments; without a registry they count
// into nothing registered.
type metrics struct {
	received     prometheus.Counter
	verified     prometheus.Counter
	rejected     *prometheus.CounterVec
	rateLimited  prometheus.Counter
	toSearchable prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		received: prometheus.NewCounter(prometheus.CounterOpts{Name: "agentfinder_indexnow_pings_total",
			Help: "IndexNow pings received (GET and POST /indexnow)."}),
		verified: prometheus.NewCounter(prometheus.CounterOpts{Name: "agentfinder_indexnow_verified_total",
			Help: "IndexNow pings whose key verified (from the key file or the cache)."}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agentfinder_indexnow_rejected_total",
			Help: "IndexNow pings refused, by reason (bad_request, key_format, url_not_on_host, unknown_host, key_not_found, key_mismatch, key_redirect_other_host, rate_limited, crawl_unavailable)."},
			[]string{"reason"}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{Name: "agentfinder_indexnow_rate_limited_total",
			Help: "IndexNow pings refused with 429 because their host's crawl or key-fetch budget was spent."}),
		toSearchable: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "agentfinder_indexnow_ping_to_searchable_seconds",
			Help:    "Time from an accepted IndexNow ping to ingest having written a catalog of its host (searchable).",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60}}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.received, m.verified, m.rejected, m.rateLimited, m.toSearchable} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("indexnow: register metrics: %w", err)
		}
	}
	return m, nil
}
