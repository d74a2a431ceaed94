package probe_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/crawler/probe"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

func TestTargets(t *testing.T) {
	a2a := normalize.TypeA2A
	cases := []struct {
		name  string
		rec   normalize.Record
		want  []probe.Target
		whyNo string
	}{
		{"a2a card and its JSON-RPC interface", normalize.Record{Type: a2a, URL: "https://a.test/card.json",
			Bindings: []normalize.Binding{{Protocol: "a2a", URL: "grpc://a.test:9", Transport: "GRPC"}, {Protocol: "a2a", URL: "https://a.test/rpc", Transport: "JSONRPC"}}},
			[]probe.Target{{Kind: probe.KindCard, URL: "https://a.test/card.json"}, {Kind: probe.KindA2A, URL: "https://a.test/rpc", Transport: "JSONRPC"}}, ""},
		{"inline a2a card: its interface only", normalize.Record{Type: a2a,
			Bindings: []normalize.Binding{{Protocol: "a2a", URL: "https://a.test/rest", Transport: "HTTP+JSON"}}},
			[]probe.Target{{Kind: probe.KindA2A, URL: "https://a.test/rest", Transport: "HTTP+JSON"}}, ""},
		{"gRPC only: the card alone", normalize.Record{Type: a2a, URL: "https://a.test/card.json",
			Bindings: []normalize.Binding{{Protocol: "a2a", URL: "https://a.test:9", Transport: "GRPC"}}},
			[]probe.Target{{Kind: probe.KindCard, URL: "https://a.test/card.json"}}, ""},
		{"mcp streamable-http remote", normalize.Record{Type: normalize.TypeMCP, URL: "https://m.test/server.json",
			Bindings: []normalize.Binding{{Protocol: "mcp", Transport: "stdio", Package: "npm/x@1"}, {Protocol: "mcp", URL: "https://m.test/mcp", Transport: "streamable-http"}}},
			[]probe.Target{{Kind: probe.KindMCP, URL: "https://m.test/mcp", Transport: "streamable-http"}}, ""},
		{"mcp stdio only", normalize.Record{Type: normalize.TypeMCP,
			Bindings: []normalize.Binding{{Protocol: "mcp", Transport: "stdio", Package: "npm/x@1"}}}, nil, "stdio only"},
		{"mcp over sse: its event stream", normalize.Record{Type: normalize.TypeMCP,
			Bindings: []normalize.Binding{{Protocol: "mcp", URL: "https://m.test/sse", Transport: "sse"}}},
			[]probe.Target{{Kind: probe.KindMCPSSE, URL: "https://m.test/sse", Transport: "sse"}}, ""},
		{"streamable http before sse", normalize.Record{Type: normalize.TypeMCP,
			Bindings: []normalize.Binding{{Protocol: "mcp", URL: "https://m.test/sse", Transport: "sse"}, {Protocol: "mcp", URL: "https://m.test/mcp", Transport: "streamable-http"}}},
			[]probe.Target{{Kind: probe.KindMCP, URL: "https://m.test/mcp", Transport: "streamable-http"}}, ""},
		{"a url template: checked without a request", normalize.Record{Type: normalize.TypeMCP,
			Bindings: []normalize.Binding{{Protocol: "mcp", URL: "https://{tenant}.m.test/mcp", Transport: "streamable-http"}}},
			[]probe.Target{{Kind: probe.KindTemplate, URL: "https://{tenant}.m.test/mcp", Transport: "streamable-http"}}, ""},
		{"mcp over websocket is not probed", normalize.Record{Type: normalize.TypeMCP,
			Bindings: []normalize.Binding{{Protocol: "mcp", URL: "wss://m.test/ws", Transport: "websocket"}}}, nil, "no probe for mcp websocket"},
		{"no endpoint", normalize.Record{Type: "text/markdown", URL: "https://s.test/skill.md"}, nil, "no endpoint"},
		{"not http", normalize.Record{Type: a2a, URL: "ftp://a.test/card.json"}, nil, "no endpoint"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, why := probe.Targets(tc.rec)
			if len(got) != len(tc.want) || !strings.Contains(why, tc.whyNo) {
				t.Fatalf("Targets = %+v, %q; want %+v, %q", got, why, tc.want, tc.whyNo)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("target %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestObserve(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p, err := probe.New(probe.Config{MaxRecords: 2, Now: func() time.Time { return now }}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := func(id, endpoint string) normalize.Record {
		r := normalize.Record{Identifier: id, Type: normalize.TypeMCP}
		if endpoint != "" {
			r.Bindings = []normalize.Binding{{Protocol: "mcp", URL: endpoint, Transport: "streamable-http"}}
		}
		return r
	}
	const cat = "https://m.test/.well-known/ai-catalog.json"
	p.Observe(cat, []normalize.Record{rec("a", "https://m.test/a"), rec("b", "https://m.test/b"), rec("c", "https://m.test/c"), rec("d", "")})
	if p.Len() != 2 {
		t.Errorf("tracking %d records, want MaxRecords (2)", p.Len())
	}
	if h, ok := p.Health("a", cat); !ok || h.Status != normalize.HealthUnknown {
		t.Errorf("a new record: %+v, %v; want unknown and tracked", h, ok)
	}
	if _, ok := p.Health("a", "https://other.test/ai-catalog.json"); ok {
		t.Error("another catalog's claim on a record shares its state")
	}
	if _, ok := p.Health("d", cat); ok {
		t.Error("a record without an endpoint is tracked")
	}
	p.Observe(cat, []normalize.Record{rec("a", "")}) // its endpoint went away
	if _, ok := p.Health("a", cat); ok || p.Len() != 1 {
		t.Errorf("a record that lost its endpoint is still tracked (%d records)", p.Len())
	}
}

func TestStateFile(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"broken.json":  `{"version": 1, "records": [`,
		"records.json": `{"version": 1, "records": {}}`,
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		var logs strings.Builder
		p, err := probe.New(probe.Config{StatePath: path, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, nil, nil)
		if err != nil || p.Len() != 0 {
			t.Errorf("%s: New = %v, want a fresh start", name, err)
			continue
		}
		aside, _ := filepath.Glob(path + ".corrupt-*")
		if len(aside) != 1 || !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), aside[0]) {
			t.Errorf("%s: kept aside as %v, log %s", name, aside, logs.String())
		}
		if b, _ := os.ReadFile(aside[0]); string(b) != body {
			t.Errorf("%s: the file kept aside holds %q", name, b)
		}
	}
	// Another version is ignored: a fresh start.
	future := filepath.Join(dir, "future.json")
	if err := os.WriteFile(future, []byte(`{"version": 99, "records": [{"identifier": "x"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := probe.New(probe.Config{StatePath: future}, nil, nil); err != nil || p.Len() != 0 {
		t.Errorf("state of another version: %v", err)
	}
	// A missing file is a fresh start; Save creates it.
	path := filepath.Join(dir, "new.json")
	p, err := probe.New(probe.Config{StatePath: path}, nil, nil)
	if err != nil {
		t.Fatalf("New without a state file: %v", err)
	}
	p.Observe("https://m.test/c.json", []normalize.Record{{Identifier: "x", Type: normalize.TypeMCP, Bindings: []normalize.Binding{{Protocol: "mcp", URL: "https://m.test/x", Transport: "streamable-http"}}}})
	if err := p.Save(); err != nil {
		t.Fatal(err)
	}
	p2, err := probe.New(probe.Config{StatePath: path}, nil, nil)
	if err != nil || p2.Len() != 1 {
		t.Fatalf("reload: %v, %d records; want 1", err, p2.Len())
	}
}

// TestStateFromClockAheadIsClamped: records whose next probe the state file
// puts 70 years ahead (written under a clock that was wrong) are probed
// within Spread of the restart, like overdue ones; a due time within one
// Interval is kept.
func TestStateFromClockAheadIsClamped(t *testing.T) {
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "probe.json")
	soon := now.Add(30 * time.Minute).Format(time.RFC3339)
	body := `{"version": 1, "records": [
	  {"identifier": "far", "catalog": "https://m.test/c.json", "targets": [{"kind": "mcp", "url": "https://m.test/far"}], "health": {"status": "up", "checkedAt": "2096-11-26T23:00:00Z"}, "nextDue": "2096-11-27T23:00:00Z"},
	  {"identifier": "near", "catalog": "https://m.test/c.json", "targets": [{"kind": "mcp", "url": "https://m.test/near"}], "health": {"status": "up", "checkedAt": "2026-11-26T23:30:00Z"}, "nextDue": "` + soon + `"}]}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := probe.New(probe.Config{StatePath: path, Interval: time.Hour, Spread: 5 * time.Minute, Now: func() time.Time { return now }}, nil, nil)
	if err != nil || p.Len() != 2 {
		t.Fatalf("New: %v, %d records", err, p.Len())
	}
	if err := p.Save(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var f struct {
		Records []struct {
			Identifier string    `json:"identifier"`
			NextDue    time.Time `json:"nextDue"`
		} `json:"records"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Records {
		limit := now.Add(5 * time.Minute)
		if r.Identifier == "near" {
			limit = now.Add(30 * time.Minute)
		}
		if r.NextDue.After(limit) {
			t.Errorf("%s: next probe %v after the restart at %v, want by %v", r.Identifier, r.NextDue, now, limit)
		}
	}
}

// verdicts is a Sink that hands every verdict to a channel.
type verdicts chan normalize.Health

func (v verdicts) SetHealth(ctx context.Context, _, _ string, h normalize.Health) (bool, error) {
	select {
	case v <- h:
	case <-ctx.Done():
	}
	return true, nil
}

func (v verdicts) SetTools(context.Context, string, string, *normalize.ToolSet) (bool, error) {
	return true, nil
}

// TestRun: Run probes a record observed while it runs at its next tick,
// with no one calling RunDue, and writes the state file on the way out.
func TestRun(t *testing.T) {
	web, cr := fixtureCrawler(t)
	path := filepath.Join(t.TempDir(), "probe.json")
	got := make(verdicts, 1)
	p, err := probe.New(probe.Config{Tick: 10 * time.Millisecond, StatePath: path}, cr, got)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx)
	}()
	p.Observe("https://live.test/.well-known/ai-catalog.json", []normalize.Record{{Identifier: "urn:ai:live.test:mcp:up", Type: normalize.TypeMCP,
		Bindings: []normalize.Binding{{Protocol: "mcp", URL: web.URL(fixtures.HostLive, fixtures.PathLiveMCP), Transport: "streamable-http"}}}})
	select {
	case h := <-got:
		if h.Status != normalize.HealthUp {
			t.Errorf("verdict %+v, want up", h)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no verdict within 30s of observing a new record")
	}
	cancel()
	<-done
	saved, err := probe.New(probe.Config{StatePath: path}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := saved.Health("urn:ai:live.test:mcp:up", "https://live.test/.well-known/ai-catalog.json"); !ok || h.Status != normalize.HealthUp {
		t.Errorf("state saved by Run: %+v, %v; want up", h, ok)
	}
}

// byID is a Sink that keeps each record's last verdict.
type byID struct {
	mu sync.Mutex
	m  map[string]normalize.Health
}

func (b *byID) SetHealth(_ context.Context, id, _ string, h normalize.Health) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[id] = h
	return true, nil
}

func (b *byID) SetTools(context.Context, string, string, *normalize.ToolSet) (bool, error) {
	return true, nil
}

// TestStatusRule: what each answer of an A2A JSON-RPC interface and an MCP
// endpoint means. For A2A, anything from a live server rejecting the
// request (400, 405, 429) is up; 5xx, 404 and 410 fail; 401 and 403 are
// auth_required. An MCP endpoint must speak JSON-RPC: a JSON document of
// another kind, whatever its status, is not_mcp, and 429 fails like 5xx.
func TestStatusRule(t *testing.T) {
	web, cr := fixtureCrawler(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	sink := &byID{m: map[string]normalize.Health{}}
	p, err := probe.New(probe.Config{Now: func() time.Time { return now }, DownAfter: 1}, cr, sink)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{
		200: normalize.HealthUp, 400: normalize.HealthUp, 405: normalize.HealthUp, 429: normalize.HealthUp,
		401: normalize.HealthAuthRequired, 403: normalize.HealthAuthRequired,
		404: normalize.HealthDown, 410: normalize.HealthDown, 500: normalize.HealthDown, 503: normalize.HealthDown,
	}
	wantMCP := maps.Clone(want)
	wantMCP[200], wantMCP[400], wantMCP[405], wantMCP[429] = normalize.HealthNotMCP, normalize.HealthNotMCP, normalize.HealthNotMCP, normalize.HealthDown
	var recs []normalize.Record
	for status := range want {
		for _, proto := range []string{"a2a", "mcp"} {
			path := "/status/" + proto + "/" + strconv.Itoa(status)
			web.Script(fixtures.HostLive, path, fixtures.Behavior{Status: status, Body: []byte(`{}`)})
			transport := map[string]string{"a2a": "JSONRPC", "mcp": "streamable-http"}[proto]
			recs = append(recs, normalize.Record{Identifier: "urn:ai:live.test:" + proto + ":status-" + strconv.Itoa(status),
				Bindings: []normalize.Binding{{Protocol: proto, URL: web.URL(fixtures.HostLive, path), Transport: transport}}})
		}
	}
	p.Observe("https://live.test/.well-known/ai-catalog.json", recs)
	if n := p.RunDue(t.Context()); n != len(recs) {
		t.Fatalf("probed %d of %d records", n, len(recs))
	}
	for _, r := range recs {
		status, _ := strconv.Atoi(r.Identifier[strings.LastIndex(r.Identifier, "-")+1:])
		w := want[status]
		if strings.Contains(r.Identifier, ":mcp:") {
			w = wantMCP[status]
		}
		if got := sink.m[r.Identifier]; got.Status != w {
			t.Errorf("%s: HTTP %d gives %+v, want %s (down after one failure here)", r.Identifier, status, got, w)
		}
	}
}

// fixtureCrawler starts the fixture web and a crawler that reaches it (its
// DNS, CA and ports; 2 s timeout), both closed when the test ends.
func fixtureCrawler(t *testing.T) (*fixtures.Web, *crawler.Crawler) {
	t.Helper()
	web := crawlertest.Web(t, fixtures.Options{})
	cfg := crawlertest.Config(web)
	cfg.Timeout = 2 * time.Second
	cr, err := crawler.New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cr.Close() })
	return web, cr
}

// TestA2A10Card: an A2A 1.0 card (supportedInterfaces, protocolBinding) is
// probed as a 0.3 one is: its card, then its first JSON-RPC interface.
func TestA2A10Card(t *testing.T) {
	web, cr := fixtureCrawler(t)
	card := `{"name": "Ibis Planner", "description": "Plans trips.", "version": "1.0.0",
	  "supportedInterfaces": [{"url": "https://live.test` + fixtures.PathLiveUp + `", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
	  "skills": []}`
	web.SetFile(fixtures.HostLive, "/cards/v10.json", []byte(card))
	catalog := `{"specVersion": "1.0", "entries": [{"identifier": "urn:ai:live.test:agent:v10", "displayName": "Ibis Planner",
	  "type": "application/a2a-agent-card+json", "data": ` + card + `}]}`
	res := normalize.Catalog([]byte(catalog), normalize.Options{Origin: "https://live.test/.well-known/ai-catalog.json", Via: normalize.ViaWellKnown})
	if len(res.Records) != 1 {
		t.Fatalf("records %d, problems %+v", len(res.Records), res.Problems)
	}
	rec := res.Records[0]
	rec.URL = web.URL(fixtures.HostLive, "/cards/v10.json")
	for i := range rec.Bindings {
		rec.Bindings[i].URL = web.URL(fixtures.HostLive, fixtures.PathLiveUp)
	}
	ts, _ := probe.Targets(rec)
	if len(ts) != 2 || ts[0].Kind != probe.KindCard || ts[1].Kind != probe.KindA2A || ts[1].Transport != "JSONRPC" {
		t.Fatalf("targets %+v, want the card and the JSON-RPC interface", ts)
	}
	got := make(verdicts, 1)
	p, err := probe.New(probe.Config{}, cr, got)
	if err != nil {
		t.Fatal(err)
	}
	p.Observe("https://live.test/.well-known/ai-catalog.json", []normalize.Record{rec})
	p.RunDue(t.Context())
	if h := <-got; h.Status != normalize.HealthUp || h.Protocol != "a2a" {
		t.Errorf("a 1.0 card's agent: %+v, want up over a2a", h)
	}
}
