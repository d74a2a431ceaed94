package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

func TestProbeOptionsCheck(t *testing.T) {
	ok := probeOptions{on: true, interval: 24 * time.Hour, timeout: 10 * time.Second, slow: 2 * time.Second, downAfter: 3, workers: 8, perHost: 2}
	if err := ok.check(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*probeOptions)
		want string
	}{
		{"interval too short", func(o *probeOptions) { o.interval = time.Second }, "--probe-interval"},
		{"no timeout", func(o *probeOptions) { o.timeout = 0 }, "--probe-timeout"},
		{"slow above timeout", func(o *probeOptions) { o.slow = time.Minute }, "--probe-slow"},
		{"down at once", func(o *probeOptions) { o.downAfter = 0 }, "--probe-down-after"},
		{"no workers", func(o *probeOptions) { o.workers = 0 }, "--probe-workers"},
		{"unlimited per host", func(o *probeOptions) { o.perHost = -1 }, "--probe-per-host"},
	} {
		o := ok
		tc.edit(&o)
		if err := o.check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: check() = %v, want an error naming %s", tc.name, err, tc.want)
		}
		o.on = false
		if err := o.check(); err != nil {
			t.Errorf("%s with --probe=false: %v, want no error", tc.name, err)
		}
	}
}

// TestServeProbes runs serve on live.test: the crawl feeds the prober,
// the prober's verdicts reach the index and the API, the metrics count
// them, and shutdown leaves the state in the data directory.
func TestServeProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	web := crawlertest.Web(t, fixtures.Options{})
	e := newE2EOn(t, web, []string{fixtures.HostLive})
	e.args = append(e.args, "--probe-slow", "100ms", "--probe-timeout", "2s")
	e.start()

	const up, gated, stdio = "urn:ai:live.test:agent:up", "urn:ai:live.test:agent:gated", "urn:ai:live.test:mcp:stdio"
	e.waitFor("the crawl of live.test", 60*time.Second, func() (bool, string) {
		return e.doc(up) != nil && e.doc(stdio) != nil, "not indexed yet"
	})
	// The first probe comes within the prober's tick; trigger it now
	// rather than wait (probes already under way are not repeated).
	e.srv.prober.RunDue(t.Context())
	health := func(id string) normalize.Health {
		var rec struct {
			Health normalize.Health `json:"health"`
		}
		if code := e.do(http.MethodGet, "/agents/"+url.PathEscape(id), nil, &rec); code != http.StatusOK {
			t.Fatalf("GET /agents/%s: %d", id, code)
		}
		return rec.Health
	}
	e.waitFor("the probes' verdicts in the API", 30*time.Second, func() (bool, string) {
		u, g := health(up), health(gated)
		return u.Status == normalize.HealthUp && g.Status == normalize.HealthAuthRequired, fmt.Sprintf("up: %+v, gated: %+v", u, g)
	})
	if h := health(stdio); h.Status != normalize.HealthUnknown {
		t.Errorf("stdio-only %s: %+v, want unknown", stdio, h)
	}
	if n, _ := metricSum(t, e.srv, "agentfinder_probes_total", map[string]string{"outcome": "up"}); n < 2 {
		t.Errorf("agentfinder_probes_total{outcome=up} = %v, want at least 2 (the A2A and MCP agents that are up)", n)
	}
	if n, _ := metricSum(t, e.srv, "agentfinder_probe_latency_seconds", nil); n < 3 {
		t.Errorf("agentfinder_probe_latency_seconds has %v samples, want one per answered probe (at least 3)", n)
	}
	if n, _ := metricSum(t, e.srv, "agentfinder_probe_records", map[string]string{"status": normalize.HealthAuthRequired}); n != 1 {
		t.Errorf("agentfinder_probe_records{status=auth_required} = %v, want 1", n)
	}

	var status struct {
		Probe struct {
			Records  int            `json:"records"`
			ByStatus map[string]int `json:"byStatus"`
		} `json:"probe"`
	}
	// Probes of the prober's own round may still be under way.
	e.waitFor("the prober's counts in /admin/status", 30*time.Second, func() (bool, string) {
		if code := e.do(http.MethodGet, "/admin/status", nil, &status); code != http.StatusOK {
			t.Fatalf("GET /admin/status: %d", code)
		}
		st := status.Probe
		return st.Records == 9 && st.ByStatus[normalize.HealthUp] == 4 && st.ByStatus[normalize.HealthAuthRequired] == 1,
			fmt.Sprintf("%+v, want 9 records, 4 up, 1 auth_required", st)
	})

	e.stop()
	data, err := os.ReadFile(filepath.Join(e.dataDir, probeStateFile))
	if err != nil {
		t.Fatalf("probe state after shutdown: %v", err)
	}
	var st struct {
		Records []struct {
			Identifier string           `json:"identifier"`
			Health     normalize.Health `json:"health"`
		} `json:"records"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	saved := map[string]string{}
	for _, r := range st.Records {
		saved[r.Identifier] = r.Health.Status
	}
	if saved[up] != normalize.HealthUp || saved[gated] != normalize.HealthAuthRequired || strings.Contains(string(data), stdio) {
		t.Errorf("saved state %v, want %s up, %s auth_required and nothing for %s", saved, up, gated, stdio)
	}
}

// TestServeStartsOverCorruptState: serve starts on a data directory whose
// scheduler.json and probe.json are corrupt (a disk filled mid-write, a
// hand edit): each is kept aside with a warning naming it, and the crawl
// runs from empty state.
func TestServeStartsOverCorruptState(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	web := crawlertest.Web(t, fixtures.Options{NoWorld: true})
	web.SetFile(e2eHost, wellKnown, shopCatalog(1))
	e := newE2EOn(t, web, []string{e2eHost})
	for _, name := range []string{"scheduler.json", probeStateFile} {
		if err := os.WriteFile(filepath.Join(e.dataDir, name), []byte(`{"version": 1, "seeds": [{"se`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.start()
	e.waitFor("the shop catalog to be indexed", 60*time.Second, func() (bool, string) {
		return e.doc("urn:ai:e2e-shop.test:agent:quokka-invoicer") != nil, "not yet"
	})
	for _, name := range []string{"scheduler.json", probeStateFile} {
		aside, _ := filepath.Glob(filepath.Join(e.dataDir, name+".corrupt-*"))
		if len(aside) != 1 || !strings.Contains(e.logs.String(), aside[0]) {
			t.Errorf("%s: kept aside as %v; the log names it: %v", name, aside, len(aside) == 1 && strings.Contains(e.logs.String(), aside[0]))
		}
	}
}
