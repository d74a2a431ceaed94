package ingest

import (
	"fmt"
	"testing"
	"time"
)

// An urgent result is written without lingering for more, even while
// results arrive back to back and FlushInterval is long.
func TestUrgentResultIsWrittenAtOnce(t *testing.T) {
	e := newEnv(t, Config{FlushInterval: time.Hour})
	for i := range 5 {
		origin := fmt.Sprintf("https://busy%d.test/.well-known/ai-catalog.json", i)
		id := fmt.Sprintf("urn:ai:busy%d.test:agent:a", i)
		if err := e.ix.Put(t.Context(), catalog(t, origin, manifest(entry(id, "Busy", "busy agent", "2026-01-01T00:00:00Z")))); err != nil {
			t.Fatal(err)
		}
	}
	const origin = "https://pinged.test/.well-known/ai-catalog.json"
	const id = "urn:ai:pinged.test:agent:kiwi"
	res := catalog(t, origin, manifest(entry(id, "Kiwi", "pinged agent", "2026-01-01T00:00:00Z")))
	res.Urgent = true
	if err := e.ix.Put(t.Context(), res); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for e.results.last(origin).Catalog == "" {
		if time.Now().After(deadline) {
			t.Fatalf("the urgent result was not written within 30s (FlushInterval is 1h)")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if ar := e.results.last(origin); ar.Err != nil || ar.Upserted != 1 {
		t.Fatalf("urgent result applied as %+v", ar)
	}
	if e.doc(id) == nil {
		t.Fatal("urgent record not in the index after its OnResult")
	}
}
