package ingest

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetricsReadStats(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEnv(t, Config{Metrics: reg})
	if n := testutil.CollectAndCount(reg); n != len(statsDescs) {
		t.Fatalf("%d series, want %d", n, len(statsDescs))
	}
	e.sync(catalog(t, acme, acmeManifest()))
	e.sync(catalog(t, acme, acmeManifest()))
	st := e.ix.Stats()
	if st.Upserted != 3 || st.Unchanged != 3 {
		t.Fatalf("stats = %+v, want 3 upserted then 3 unchanged", st)
	}
	want := `
# HELP agentfinder_ingest_documents Documents ingest believes the index holds.
# TYPE agentfinder_ingest_documents gauge
agentfinder_ingest_documents 3
# HELP agentfinder_ingest_documents_unchanged_total Documents seen again with the same content (not written).
# TYPE agentfinder_ingest_documents_unchanged_total counter
agentfinder_ingest_documents_unchanged_total 3
# HELP agentfinder_ingest_documents_upserted_total Documents written (added or changed).
# TYPE agentfinder_ingest_documents_upserted_total counter
agentfinder_ingest_documents_upserted_total 3
# HELP agentfinder_ingest_queue_depth Catalog results waiting in the queue.
# TYPE agentfinder_ingest_queue_depth gauge
agentfinder_ingest_queue_depth 0
# HELP agentfinder_ingest_results_total Catalog results applied to the index.
# TYPE agentfinder_ingest_results_total counter
agentfinder_ingest_results_total 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"agentfinder_ingest_documents", "agentfinder_ingest_documents_unchanged_total",
		"agentfinder_ingest_documents_upserted_total", "agentfinder_ingest_queue_depth",
		"agentfinder_ingest_results_total"); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "agentfinder_ingest_batches_total" {
			if got := f.GetMetric()[0].GetCounter().GetValue(); got != float64(st.Batches) || got < 1 {
				t.Fatalf("batches metric = %v, Stats().Batches = %d", got, st.Batches)
			}
			return
		}
	}
	t.Fatal("no agentfinder_ingest_batches_total")
}
