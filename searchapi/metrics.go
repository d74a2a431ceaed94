package searchapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/searchapi/door"
)

// metrics are the server's Prometheus instruments. A nil *metrics records
// nothing (Config.Metrics unset).
type metrics struct {
	requests   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	upstreams  *prometheus.CounterVec
	results    prometheus.Histogram
	embeddings prometheus.Gauge
	refusals   *prometheus.CounterVec
	toolCalls  *prometheus.CounterVec
	toolTime   *prometheus.HistogramVec
}

// Reasons of agentfinder_http_refused_total.
const (
	refusedRateLimited = "rate_limited" // the client is over its rate
	refusedBusy        = "busy"         // every request slot is taken
	refusedClientBusy  = "client_busy"  // the client has its share of slots
	refusedSlowBody    = "slow_body"    // the body did not arrive in time
)

// newMetrics registers the server's instruments with reg; nil reg gives nil.
func newMetrics(reg prometheus.Registerer, embeddings bool) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentfinder_http_requests_total",
			Help: "HTTP requests served by the search API, by route pattern and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentfinder_http_request_duration_seconds",
			Help:    "Time to serve a search API request, by route pattern.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"}),
		upstreams: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentfinder_federation_upstream_outcomes_total",
			Help: "Outcomes of upstream registry calls in federated searches, by status (ok, timeout, error, skipped).",
		}, []string{"status"}),
		results: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "agentfinder_search_results",
			Help:    "Results returned per successful POST /search response.",
			Buckets: []float64{0, 1, 5, 10, 20, 50, 100},
		}),
		embeddings: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentfinder_embeddings_enabled",
			Help: "1 when hybrid (semantic) search is on, 0 for keyword search only.",
		}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentfinder_mcp_tool_calls_total",
			Help: "MCP tool calls served on /mcp, by tool and outcome (ok or the API error code).",
		}, []string{"tool", "code"}),
		toolTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentfinder_mcp_tool_call_duration_seconds",
			Help:    "Time to answer an MCP tool call, by tool.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"tool"}),
	}
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentfinder_http_refused_total",
		Help: "API requests refused before they were served, by reason (rate_limited: the client is over its rate; busy: every request slot is taken; client_busy: the client has its share of slots in flight; slow_body: the body did not arrive in time).",
	}, []string{"reason"})
	for _, r := range []string{refusedRateLimited, refusedBusy, refusedClientBusy, refusedSlowBody} {
		m.refusals.WithLabelValues(r) // present at 0 before the first refusal
	}
	if embeddings {
		m.embeddings.Set(1)
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.upstreams, m.results, m.embeddings, m.refusals, m.toolCalls, m.toolTime} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("searchapi: register metrics: %w", err)
		}
	}
	return m, nil
}

// observeRequest counts one request; pattern is the mux pattern that
// matched ("" or "/" for none), which keeps the route label bounded.
func (m *metrics) observeRequest(pattern string, status int, d time.Duration) {
	if m == nil {
		return
	}
	route := pattern
	if route == "" || route == "/" {
		route = "unmatched"
	}
	if status == 0 {
		status = http.StatusOK
	}
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route).Observe(d.Seconds())
}

// refused counts one request refused for reason.
func (m *metrics) refused(reason string) {
	if m == nil {
		return
	}
	m.refusals.WithLabelValues(reason).Inc()
}

// observeSearch records one search response: its result count and the
// outcome of each upstream asked.
func (m *metrics) observeSearch(results int, ups []federation.Outcome) {
	if m == nil {
		return
	}
	m.results.Observe(float64(results))
	for _, u := range ups {
		st := u.Status
		if st == "" {
			st = "unknown"
		}
		m.upstreams.WithLabelValues(st).Inc()
	}
}

// observeToolCall counts one MCP tool call; tool is one of the server's
// tool names and code "ok" or an API error code, which keeps labels bounded.
func (m *metrics) observeToolCall(tool, code string, d time.Duration) {
	if m == nil {
		return
	}
	m.toolCalls.WithLabelValues(tool, code).Inc()
	m.toolTime.WithLabelValues(tool).Observe(d.Seconds())
}

// observeToolCall records one MCP tool call in the metrics and the debug log.
func (s *Server) observeToolCall(ctx context.Context, tool, code string, d time.Duration) {
	s.metrics.observeToolCall(tool, code, d)
	if s.log.Enabled(ctx, slog.LevelDebug) {
		s.log.Debug("mcp tool call", "correlationId", door.CorrelationID(ctx), "tool", tool, "code", code, "duration", d)
	}
}
