package main

import (
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/agentfinder/agentfinder/searchapi"
)

// metricSum sums the samples of family name in s's registry whose labels
// include want (counters, gauges, and the sample count of histograms).
func metricSum(t *testing.T, s *server, name string, want map[string]string) (float64, bool) {
	t.Helper()
	fams, err := s.metrics.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var sum float64
	found := false
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue metric
				}
			}
			found = true
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				sum += m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				sum += m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum, found
}

// TestServeMetrics runs two serves side by side (A federates to B), drives
// a crawl and a federated search, and checks GET /metrics and the values
// behind it: each serve has its own registry.
func TestServeMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	a, b := startFederatedPair(t)

	// Before anything ran: no search yet, embeddings off (--no-embeddings).
	if v, _ := metricSum(t, a.srv, "agentfinder_http_requests_total", map[string]string{"route": "POST /search"}); v != 0 {
		t.Fatalf("POST /search requests before any search: %v", v)
	}
	if v, ok := metricSum(t, a.srv, "agentfinder_embeddings_enabled", nil); !ok || v != 0 {
		t.Errorf("agentfinder_embeddings_enabled = %v (present %v), want 0", v, ok)
	}

	a.waitFor("A's first crawl to be counted", 60*time.Second, func() (bool, string) {
		v, _ := metricSum(t, a.srv, "agentfinder_scheduler_runs_total", map[string]string{"outcome": "ok"})
		return v >= 1, ""
	})
	b.waitFor("B to index its agent", 60*time.Second, func() (bool, string) {
		return b.doc("urn:ai:e2e-late.test:agent:echidna-scheduler") != nil, ""
	})
	a.waitFor("A's documents to be counted", 60*time.Second, func() (bool, string) {
		v, _ := metricSum(t, a.srv, "agentfinder_ingest_documents_upserted_total", nil)
		return v >= 3, ""
	})

	body := map[string]any{"query": map[string]any{"text": "schedules meetings across time zones", "federation": "auto"}}
	if code := a.do(http.MethodPost, "/search", body, nil); code != http.StatusOK {
		t.Fatalf("POST /search: %d", code)
	}
	if code := a.do(http.MethodGet, "/agents/urn:ai:nowhere.test:agent:none", nil, nil); code != http.StatusNotFound {
		t.Fatalf("GET /agents/<unknown>: %d, want 404", code)
	}

	checks := []struct {
		name   string
		metric string
		labels map[string]string
		min    float64
	}{
		{"search requests", "agentfinder_http_requests_total", map[string]string{"route": "POST /search", "code": "200"}, 1},
		{"not-found requests", "agentfinder_http_requests_total", map[string]string{"route": "GET /agents/{identifier...}", "code": "404"}, 1},
		{"search duration", "agentfinder_http_request_duration_seconds", map[string]string{"route": "POST /search"}, 1},
		{"search results", "agentfinder_search_results", nil, 1},
		{"upstream ok", "agentfinder_federation_upstream_outcomes_total", map[string]string{"status": "ok"}, 1},
		{"catalog fetched", "agentfinder_crawler_fetches_total", map[string]string{"status": "ok"}, 1},
		{"fetch duration", "agentfinder_crawler_fetch_duration_seconds", map[string]string{"kind": "catalog"}, 1},
		{"bytes", "agentfinder_crawler_fetched_bytes_total", map[string]string{"kind": "catalog"}, 100},
		{"catalogs per crawl", "agentfinder_crawler_catalogs_per_crawl", nil, 1},
		{"ingest results", "agentfinder_ingest_results_total", nil, 1},
		{"ingest batches", "agentfinder_ingest_batches_total", nil, 1},
		{"ingest documents", "agentfinder_ingest_documents", nil, 3},
		{"seeds ok", "agentfinder_scheduler_seeds", map[string]string{"outcome": "ok"}, 1},
		{"go runtime", "go_goroutines", nil, 1},
		{"build info", "agentfinder_build_info", map[string]string{"version": version}, 1},
	}
	for _, c := range checks {
		v, ok := metricSum(t, a.srv, c.metric, c.labels)
		if !ok || v < c.min {
			t.Errorf("%s: %s%v = %v (present %v), want >= %v", c.name, c.metric, c.labels, v, ok, c.min)
		}
	}
	// B counted its own requests (A's federated call), not A's.
	if v, _ := metricSum(t, b.srv, "agentfinder_federation_upstream_outcomes_total", nil); v != 0 {
		t.Errorf("B counted %v upstream outcomes; it federates to nobody", v)
	}
	if v, _ := metricSum(t, b.srv, "agentfinder_http_requests_total", map[string]string{"route": "POST /search"}); v < 1 {
		t.Errorf("B did not count A's federated POST /search")
	}

	// One access log line per request, with the route pattern, status and
	// correlation id.
	if !regexp.MustCompile(`msg=request component=http method=POST route="POST /search" status=200 duration=\S+ correlationId=[0-9a-f]+`).MatchString(a.logs.String()) {
		t.Errorf("no access log line for POST /search in:\n%.3000s", a.logs.String())
	}
	a.do(http.MethodGet, "/admin/status", nil, nil)
	a.waitFor("the access log line of GET /admin/status", 10*time.Second, func() (bool, string) {
		return strings.Contains(a.logs.String(), `route="GET /admin/status" status=200`), ""
	})
	// Every route serve answers (API, pages, metrics, admin) is in the
	// OpenAPI document.
	if missing := searchapi.UndocumentedRoutes(a.srv.routes); len(missing) > 0 || !slices.Contains(a.srv.routes, "GET /admin/status") {
		t.Errorf("routes missing from openapi.json: %v (of %v)", missing, a.srv.routes)
	}
	// CORS preflight: answered for the read-only API, never for admin.
	for _, c := range []struct {
		path string
		want string
	}{{"/search", "*"}, {"/admin/status", ""}} {
		req, _ := http.NewRequest(http.MethodOptions, a.url(c.path), nil)
		req.Header.Set("Origin", "https://app.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := a.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != c.want || (c.want != "" && resp.StatusCode != http.StatusNoContent) {
			t.Errorf("preflight %s: %d, Access-Control-Allow-Origin %q, want %q", c.path, resp.StatusCode, got, c.want)
		}
	}

	// GET /metrics is public and speaks the text format.
	resp, err := a.client.Get(a.url("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`agentfinder_http_requests_total{code="200",route="POST /search"}`,
		"agentfinder_crawler_robots_disallowed_total",
		"agentfinder_ingest_queue_depth",
		"agentfinder_scheduler_next_run_lag_seconds",
		`agentfinder_scheduler_runs_total{outcome="ok"}`,
		"process_cpu_seconds_total",
		"go_goroutines",
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("GET /metrics lacks %s", want)
		}
	}
	// The scrape itself is not an API request.
	if _, ok := metricSum(t, a.srv, "agentfinder_http_requests_total", map[string]string{"route": "unmatched"}); ok {
		t.Errorf("a request was counted as unmatched")
	}
}
