package ingest

import (
	"sync"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

// healths is a HealthSource for tests: the prober's state, by identifier
// (whatever the catalog).
type healths struct {
	mu sync.Mutex
	m  map[string]normalize.Health
}

func (h *healths) Health(id, _ string) (normalize.Health, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[id]
	return v, ok
}

func (h *healths) set(id string, v normalize.Health) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.m[id] = v
}

func TestHealth(t *testing.T) {
	src := &healths{m: map[string]normalize.Health{}}
	e := newEnv(t, Config{Health: src})
	const origin = "https://health.test/.well-known/ai-catalog.json"
	a, b := "urn:air:health.test:agent:a", "urn:air:health.test:agent:b"
	e.sync(catalog(t, origin, manifest(entry(a, "A", "first", "2026-01-01"), entry(b, "B", "second", "2026-01-01"))))

	// Never probed: unknown, so that a health filter sees the record.
	for _, id := range []string{a, b} {
		if d := e.doc(id); d.Health == nil || d.Health.Status != normalize.HealthUnknown {
			t.Fatalf("%s: health %+v, want unknown", id, d.Health)
		}
	}

	// A verdict patches the health field alone.
	checked := time.Date(2026, 1, 10, 13, 0, 0, 0, time.UTC)
	down := normalize.Health{Status: normalize.HealthDown, CheckedAt: checked, LatencyMs: 40, Detail: "a2a: HTTP 503"}
	src.set(a, down)
	held, err := e.ix.SetHealth(t.Context(), a, origin, down)
	if err != nil || !held {
		t.Fatalf("SetHealth(%s): %v, %v; want held", a, held, err)
	}
	if held, err := e.ix.SetHealth(t.Context(), "urn:air:health.test:agent:gone", origin, down); err != nil || held {
		t.Errorf("SetHealth of a record ingest does not hold: %v, %v; want not held", held, err)
	}
	if err := e.ix.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	d := e.doc(a)
	if d.Health == nil || *d.Health != down {
		t.Fatalf("%s after SetHealth: %+v, want %+v", a, d.Health, down)
	}
	if d.Description != "first" {
		t.Errorf("%s: the patch changed other fields: %+v", a, d.Record)
	}
	if e.doc("urn:air:health.test:agent:gone") != nil {
		t.Error("SetHealth created a document ingest did not hold")
	}
	// A verdict on another catalog's endpoints for the identifier (a claim
	// that lost, or never was) does not speak for the record.
	if held, err := e.ix.SetHealth(t.Context(), a, "https://spoofer.test/.well-known/ai-catalog.json", normalize.Health{Status: normalize.HealthUp}); err != nil || held {
		t.Errorf("SetHealth for a catalog that does not hold the record: %v, %v; want not held", held, err)
	}

	// A recrawl that rewrites the record keeps the known health; a down
	// record is not deleted.
	e.sync(catalog(t, origin, manifest(entry(a, "A", "first, edited", "2026-01-02"), entry(b, "B", "second", "2026-01-01"))))
	d = e.doc(a)
	if d == nil || d.Description != "first, edited" || d.Health == nil || *d.Health != down {
		t.Fatalf("%s after a recrawl rewrote it: %+v", a, d)
	}

	// Documents indexed before records carried health get it at start.
	if err := e.ix.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	task, err := e.client.Index(e.index).UpdateDocuments([]map[string]any{{normalize.FieldID: normalize.DocID(b), normalize.FieldHealth: nil}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(e.client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	if d := e.doc(b); d.Health != nil {
		t.Fatalf("setup: %s still has health %+v", b, d.Health)
	}
	e.open(Config{Health: src})
	if d := e.doc(b); d.Health == nil || d.Health.Status != normalize.HealthUnknown {
		t.Errorf("%s indexed without health: %+v after restart, want unknown", b, d.Health)
	}
	if d := e.doc(a); d.Health == nil || *d.Health != down {
		t.Errorf("%s: %+v after restart, want %+v", a, d.Health, down)
	}
}

// TestHealthKeptWithoutSource: an indexer without a health source (a
// one-off crawl, serve with the prober off) keeps the health the index
// holds when it rewrites a record, also across a restart.
func TestHealthKeptWithoutSource(t *testing.T) {
	e := newEnv(t, Config{})
	const origin = "https://health.test/.well-known/ai-catalog.json"
	a, b := "urn:air:health.test:agent:a", "urn:air:health.test:agent:b"
	e.sync(catalog(t, origin, manifest(entry(a, "A", "first", "2026-01-01"))))
	up := normalize.Health{Status: normalize.HealthUp, CheckedAt: time.Date(2026, 1, 10, 13, 0, 0, 0, time.UTC), LatencyMs: 7}
	if held, err := e.ix.SetHealth(t.Context(), a, origin, up); err != nil || !held {
		t.Fatalf("SetHealth: %v, %v", held, err)
	}
	e.sync(catalog(t, origin, manifest(entry(a, "A", "first, edited", "2026-01-02"), entry(b, "B", "new", "2026-01-02"))))
	if d := e.doc(a); d.Description != "first, edited" || d.Health == nil || *d.Health != up {
		t.Fatalf("%s rewritten without a health source: %+v, want health %+v kept", a, d.Health, up)
	}
	if d := e.doc(b); d.Health == nil || d.Health.Status != normalize.HealthUnknown {
		t.Errorf("new %s: %+v, want unknown", b, d.Health)
	}
	if err := e.ix.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.open(Config{})
	e.sync(catalog(t, origin, manifest(entry(a, "A", "edited again", "2026-01-03"), entry(b, "B", "new", "2026-01-02"))))
	if d := e.doc(a); d.Description != "edited again" || d.Health == nil || *d.Health != up {
		t.Errorf("%s rewritten after a restart: %+v, want health %+v kept", a, d.Health, up)
	}
}
