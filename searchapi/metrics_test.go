package searchapi

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/ingest/meili"
)

// TestMetrics counts requests by route pattern and status, on a server
// whose Meilisearch is down (the counting does not need it up).
func TestMetrics(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	reg := prometheus.NewRegistry()
	cfg := Config{Index: "x", Meili: meili.New("http://"+addr, ""), Metrics: reg}
	srv, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(cfg, nil); err == nil {
		t.Fatal("a second server registered the same metrics in one registry")
	}
	other := cfg
	other.Metrics = prometheus.NewRegistry()
	if _, err := New(other, nil); err != nil {
		t.Fatalf("a second server with its own registry: %v", err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	for _, r := range []struct{ method, path string }{
		{"GET", "/healthz"}, {"GET", "/healthz"}, {"GET", "/agents/urn:ai:x.test:agent:y"}, {"GET", "/nowhere"}, {"DELETE", "/search"},
	} {
		req, _ := http.NewRequest(r.method, ts.URL+r.path, nil)
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for _, c := range []struct {
		route, code string
		want        float64
	}{
		{"GET /healthz", "200", 2},
		{"GET /agents/{identifier...}", "503", 1},
		{"unmatched", "404", 1},
		{"unmatched", "405", 1},
	} {
		if got := testutil.ToFloat64(srv.metrics.requests.WithLabelValues(c.route, c.code)); got != c.want {
			t.Errorf("requests{route=%q,code=%s} = %v, want %v", c.route, c.code, got, c.want)
		}
	}
	if got := testutil.CollectAndCount(srv.metrics.duration); got != 3 {
		t.Errorf("duration series = %d, want 3 routes", got)
	}
	if got := testutil.ToFloat64(srv.metrics.embeddings); got != 0 {
		t.Errorf("embeddings gauge = %v without an embedder", got)
	}
	srv.metrics.observeSearch(7, []federation.Outcome{{Status: "ok"}, {Status: "timeout"}, {Status: "ok"}})
	if got := testutil.ToFloat64(srv.metrics.upstreams.WithLabelValues("ok")); got != 2 {
		t.Errorf("upstream ok = %v, want 2", got)
	}

	// No registry, no metrics: the handler still serves.
	cfg.Metrics = nil
	plain, err := New(cfg, nil)
	if err != nil || plain.metrics != nil {
		t.Fatalf("without a registry: metrics %v, err %v", plain.metrics, err)
	}
}
