package crawler

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfinder/agentfinder/normalize"
)

// metrics are the crawler's Prometheus instruments. A nil *metrics records
// nothing (Config.Metrics unset).
type metrics struct {
	catalogs   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	bytes      *prometheus.CounterVec
	robots     prometheus.Counter
	perCrawl   prometheus.Histogram
	sinkErrors prometheus.Counter
	sigChecks  *prometheus.CounterVec
}

// newMetrics registers the crawler's instruments with reg; nil reg gives nil.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		catalogs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentfinder_crawler_fetches_total",
			Help: "Catalogs fetched (as handed to the sink), by discovery via, fetch status (ok, not_modified, failed) and failure reason.",
		}, []string{"via", "status", "reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentfinder_crawler_fetch_duration_seconds",
			Help:    "Time of one HTTP request of the crawler (retries are separate requests), by what it fetched.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"kind"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentfinder_crawler_fetched_bytes_total",
			Help: "Response body bytes received by the crawler, by what it fetched.",
		}, []string{"kind"}),
		robots: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentfinder_crawler_robots_disallowed_total",
			Help: "URLs not fetched because robots.txt disallows them to our agent.",
		}),
		perCrawl: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "agentfinder_crawler_catalogs_per_crawl",
			Help:    "Catalogs reported by one Crawl call.",
			Buckets: []float64{0, 1, 2, 5, 10, 25, 50, 100, 250, 1000},
		}),
		sinkErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentfinder_crawler_sink_errors_total",
			Help: "Catalog results the sink refused.",
		}),
		sigChecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentfinder_crawler_trust_checks_total",
			Help: "Signatures and digests checked, by outcome: valid, or the problem code that failed it (bad_signature, wrong_signer, digest_mismatch, ...).",
		}, []string{"outcome"}),
	}
	for _, c := range []prometheus.Collector{m.catalogs, m.duration, m.bytes, m.robots, m.perCrawl, m.sinkErrors, m.sigChecks} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("crawler: register metrics: %w", err)
		}
	}
	return m, nil
}

func (k kind) String() string {
	switch k {
	case kindCatalog:
		return "catalog"
	case kindArtifact:
		return "artifact"
	case kindRobots:
		return "robots"
	case kindHome:
		return "home"
	case kindOwnership:
		return "ownership"
	case kindDID:
		return "did"
	case kindAttest:
		return "attestation"
	case kindProbe:
		return "probe"
	case kindRegistry:
		return "registry"
	case kindExchange:
		return "exchange"
	}
	return "other"
}

// catalog counts one catalog result handed on.
func (m *metrics) catalog(cr *normalize.CatalogResult) {
	if m == nil {
		return
	}
	m.catalogs.WithLabelValues(cr.Via, string(cr.Status), cr.Reason).Inc()
}

// request records one HTTP request: its time and, when it got a
// response, the body size.
func (m *metrics) request(k kind, d time.Duration, body int) {
	if m == nil {
		return
	}
	m.duration.WithLabelValues(k.String()).Observe(d.Seconds())
	if body > 0 {
		m.bytes.WithLabelValues(k.String()).Add(float64(body))
	}
}

func (m *metrics) robotsDisallowed() {
	if m == nil {
		return
	}
	m.robots.Inc()
}

func (m *metrics) sinkError() {
	if m == nil {
		return
	}
	m.sinkErrors.Inc()
}

// crawl records one finished crawl.
func (m *metrics) crawl(rep *Report) {
	if m == nil {
		return
	}
	m.perCrawl.Observe(float64(rep.Totals.Catalogs))
}

// trustCheck counts one checked signature or digest: "valid", or each
// problem code that failed it.
func (m *metrics) trustCheck(problems []normalize.Problem) {
	if m == nil {
		return
	}
	if len(problems) == 0 {
		m.sigChecks.WithLabelValues("valid").Inc()
		return
	}
	seen := map[string]bool{}
	for _, p := range problems {
		if !seen[p.Code] {
			seen[p.Code] = true
			m.sigChecks.WithLabelValues(p.Code).Inc()
		}
	}
}
