package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/searchtest"
)

// BenchmarkSearchToolIndex measures what the tool index costs a search:
// the same 30,000 MCP servers (AGENTFINDER_BENCH_RECORDS) indexed twice with
// the index's searchable attributes, once with 8 tools each (names and
// descriptions searchable, as the prober leaves them) and once without,
// and POST /search over each in short alternating rounds. It prints the
// p50 and p95 of each and their ratios (the target: at most 1.2).
func BenchmarkSearchToolIndex(b *testing.B) {
	n := envInt("AGENTFINDER_BENCH_RECORDS", 30000)
	ops := envInt("AGENTFINDER_BENCH_OPS", 600)
	with := toolBenchIndex(b, "benchtools", n, true)
	without := toolBenchIndex(b, "benchnotools", n, false)
	_, hsWith := benchServer(b, with.ms, with.name, nil)
	_, hsWithout := benchServer(b, without.ms, without.name, nil)
	client := meili.NewHTTPClient(10 * time.Second)
	rng := rand.New(rand.NewPCG(7, 8))
	var bodies [][]byte
	for i := range 64 {
		text := benchWords[rng.IntN(len(benchWords))]
		for range 1 + i%4 {
			text += " " + benchWords[rng.IntN(len(benchWords))]
		}
		body, _ := json.Marshal(map[string]any{"query": map[string]any{"text": text, "federation": "none"}, "pageSize": 10})
		bodies = append(bodies, body)
	}
	bases := []string{hsWith.URL, hsWithout.URL}
	var lat [][]time.Duration
	for b.Loop() {
		var errs int
		lat, errs = alternate(2, ops/20, 10, func(side, i int) error {
			return postSearch(context.Background(), client, bases[side], "", bodies[i%len(bodies)])
		})
		if errs > 0 {
			b.Fatalf("%d searches failed", errs)
		}
	}
	w50, w95, o50, o95 := pct(lat[0], 50), pct(lat[0], 95), pct(lat[1], 50), pct(lat[1], 95)
	b.ReportMetric(ms2(w50), "tools_p50_ms")
	b.ReportMetric(ms2(o50), "notools_p50_ms")
	b.ReportMetric(float64(w50)/float64(o50), "ratio_p50")
	b.ReportMetric(float64(w95)/float64(o95), "ratio_p95")
	fmt.Printf("search over %d servers: with the tool index p50 %.2f ms p95 %.2f ms; without p50 %.2f ms p95 %.2f ms; ratio p50 %.2f p95 %.2f\n",
		n, ms2(w50), ms2(w95), ms2(o50), ms2(o95), float64(w50)/float64(o50), float64(w95)/float64(o95))
}

type benchIdx struct {
	ms   *meilitest.Server
	name string
}

// toolBenchIndex indexes n servers (benchDoc records as MCP servers), each
// with 8 tools when withTools, under the production searchable attributes.
func toolBenchIndex(b *testing.B, prefix string, n int, withTools bool) benchIdx {
	b.Helper()
	ms, name := meilitest.Index(b, prefix)
	idx := ms.Client.Index(name)
	settings := searchtest.Settings()
	settings.SearchableAttributes = normalize.SearchableFields()
	task, err := idx.UpdateSettings(settings)
	if err != nil {
		b.Fatal(err)
	}
	if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const batch = 5000
	for i := 0; i < n; i += batch {
		docs := make([]normalize.Document, 0, batch)
		for j := i; j < min(n, i+batch); j++ {
			d := benchDoc(rng, j)
			d.Type = normalize.TypeMCP
			if withTools {
				d.Tools = benchTools(rng)
			}
			docs = append(docs, d)
		}
		task, err := idx.AddDocuments(docs, &meilisearch.DocumentOptions{PrimaryKey: ptr(normalize.FieldID)})
		if err != nil {
			b.Fatal(err)
		}
		if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
			b.Fatal(err)
		}
	}
	return benchIdx{ms: ms, name: name}
}

func benchTools(rng *rand.Rand) *normalize.ToolSet {
	w := func() string { return benchWords[rng.IntN(len(benchWords))] }
	ts := &normalize.ToolSet{Source: normalize.ToolsListed, Listed: 8}
	for range 8 {
		ts.Items = append(ts.Items, normalize.Tool{Name: w() + "_" + w(), Description: fmt.Sprintf("Looks up the %s of a %s and returns its %s.", w(), w(), w()), Params: []string{w()}})
	}
	return ts
}

func ptr[T any](v T) *T { return &v }
