package ingest

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// statsCollector exposes an Indexer's Stats as Prometheus metrics, read at
// scrape time.
type statsCollector struct {
	ix *Indexer
}

var _ prometheus.Collector = statsCollector{}

// statsDescs: name, help, type and how to read the value from Stats.
var statsDescs = []struct {
	desc *prometheus.Desc
	typ  prometheus.ValueType
	get  func(Stats) float64
}{
	{prometheus.NewDesc("agentfinder_ingest_results_total", "Catalog results applied to the index.", nil, nil),
		prometheus.CounterValue, func(s Stats) float64 { return float64(s.Results) }},
	{prometheus.NewDesc("agentfinder_ingest_documents_upserted_total", "Documents written (added or changed).", nil, nil),
		prometheus.CounterValue, func(s Stats) float64 { return float64(s.Upserted) }},
	{prometheus.NewDesc("agentfinder_ingest_documents_unchanged_total", "Documents seen again with the same content (not written).", nil, nil),
		prometheus.CounterValue, func(s Stats) float64 { return float64(s.Unchanged) }},
	{prometheus.NewDesc("agentfinder_ingest_documents_deleted_total", "Documents deleted because their catalog no longer lists them.", nil, nil),
		prometheus.CounterValue, func(s Stats) float64 { return float64(s.Deleted) }},
	{prometheus.NewDesc("agentfinder_ingest_conflicts_total", "Documents claimed by more than one catalog.", nil, nil),
		prometheus.CounterValue, func(s Stats) float64 { return float64(s.Conflicts) }},
	{prometheus.NewDesc("agentfinder_ingest_documents_marked_stale_total", "Documents marked stale after failed or old fetches.", nil, nil),
		prometheus.CounterValue, func(s Stats) float64 { return float64(s.MarkedStale) }},
	{prometheus.NewDesc("agentfinder_ingest_documents_recovered_total", "Stale documents fresh again.", nil, nil),
		prometheus.CounterValue, func(s Stats) float64 { return float64(s.Recovered) }},
	{prometheus.NewDesc("agentfinder_ingest_batches_total", "Batches committed to Meilisearch.", nil, nil),
		prometheus.CounterValue, func(s Stats) float64 { return float64(s.Batches) }},
	{prometheus.NewDesc("agentfinder_ingest_tasks_total", "Meilisearch write tasks awaited.", nil, nil),
		prometheus.CounterValue, func(s Stats) float64 { return float64(s.Tasks) }},
	{prometheus.NewDesc("agentfinder_ingest_task_failures_total", "Writes that failed for good.", nil, nil),
		prometheus.CounterValue, func(s Stats) float64 { return float64(s.TaskFailures) }},
	{prometheus.NewDesc("agentfinder_ingest_documents", "Documents ingest believes the index holds.", nil, nil),
		prometheus.GaugeValue, func(s Stats) float64 { return float64(s.Documents) }},
	{prometheus.NewDesc("agentfinder_ingest_catalogs", "Catalogs with state in the index.", nil, nil),
		prometheus.GaugeValue, func(s Stats) float64 { return float64(s.Catalogs) }},
	{prometheus.NewDesc("agentfinder_ingest_queue_depth", "Catalog results waiting in the queue.", nil, nil),
		prometheus.GaugeValue, func(s Stats) float64 { return float64(s.Queued) }},
}

// Describe implements prometheus.Collector.
func (c statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range statsDescs {
		ch <- d.desc
	}
}

// Collect implements prometheus.Collector: one Stats snapshot per scrape.
func (c statsCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.ix.Stats()
	for _, d := range statsDescs {
		ch <- prometheus.MustNewConstMetric(d.desc, d.typ, d.get(st))
	}
}

// registerMetrics registers ix's Stats collector with reg (nil: nothing).
func (ix *Indexer) registerMetrics(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	if err := reg.Register(statsCollector{ix: ix}); err != nil {
		return fmt.Errorf("ingest: register metrics: %w", err)
	}
	return nil
}
