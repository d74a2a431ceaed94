package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/searchapi/searchtest"
)

// BenchmarkMCPSearchVsSearch measures the MCP search tool (the SDK's client,
// POST /mcp over loopback HTTP) against the same POST /search, interleaved in
// one run with one client, and prints the p50 difference and ratio. Records:
// AGENTFINDER_BENCH_RECORDS (default 20000); calls per side:
// AGENTFINDER_BENCH_OPS (default 600). Target: MCP p50 <= POST /search p50
// + 1 ms. The SDK's client decodes every answer (the structured content
// into maps, the text); a POST /search client that uses its answer decodes
// its body too, so a third side, POST /search with the body decoded into
// Go values by encoding/json, gives the comparison like for like beside the
// one against a client that reads the body and drops it. It also prints the CPU time a call costs this process (the
// client and the server; Meilisearch answers both sides alike), which the
// load of a shared machine moves much less than the latencies. Run once:
// go test -run XXX -bench MCPSearchVsSearch -benchtime 1x.
func BenchmarkMCPSearchVsSearch(b *testing.B) {
	n := envInt("AGENTFINDER_BENCH_RECORDS", 20000)
	ops := envInt("AGENTFINDER_BENCH_OPS", 600)
	ms, name, rng := benchIndex(b, "bench_mcp", n, 3, nil)
	_, hs := benchServer(b, ms, name, nil)
	client := meili.NewHTTPClient(10 * time.Second) // keep-alive both ways

	type call struct {
		args map[string]any
		body []byte
	}
	var calls []call
	for i := range 64 {
		text := benchWords[rng.IntN(len(benchWords))]
		for range i % 3 {
			text += " " + benchWords[rng.IntN(len(benchWords))]
		}
		args := map[string]any{"text": text, "federation": "none", "pageSize": 10}
		body, _ := json.Marshal(map[string]any{"query": map[string]any{"text": text, "federation": "none"}, "pageSize": 10})
		calls = append(calls, call{args, body})
	}
	api := func(ctx context.Context, body []byte) error { return postSearch(ctx, client, hs.URL, "", body) }
	decoded := func(ctx context.Context, body []byte) error {
		var answer any
		return postSearchDecoded(ctx, client, hs.URL, body, &answer)
	}
	cs := searchtest.MCPSession(b, hs.URL+"/mcp", client)
	tool := func(ctx context.Context, args map[string]any) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: args})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("tool error: %v", res.Content)
		}
		return nil
	}
	for _, c := range calls { // warm up both paths
		if err := api(context.Background(), c.body); err != nil {
			b.Fatal(err)
		}
		if err := tool(context.Background(), c.args); err != nil {
			b.Fatal(err)
		}
		if err := decoded(context.Background(), c.body); err != nil {
			b.Fatal(err)
		}
	}

	// Alternating short segments, so both sides see the same machine load.
	const rounds = 10
	per := max(1, ops/rounds)
	meter := newCPUMeter(ms.URL)
	for b.Loop() {
		var cpu [3]time.Duration
		lat, errs := alternate(3, rounds, per, func(side, i int) error {
			c := calls[i%len(calls)]
			s0, _ := meter.read()
			defer func() { s1, _ := meter.read(); cpu[side] += s1 - s0 }()
			switch side {
			case 1:
				return tool(context.Background(), c.args)
			case 2:
				return decoded(context.Background(), c.body)
			}
			return api(context.Background(), c.body)
		})
		sl, ml, dl := lat[0], lat[1], lat[2]
		dp50 := pct(dl, 50)
		sp50, mp50 := pct(sl, 50), pct(ml, 50)
		b.ReportMetric(ms2(sp50), "search_p50_ms")
		b.ReportMetric(ms2(mp50), "mcp_p50_ms")
		b.ReportMetric(ms2(mp50-sp50), "p50_diff_ms")
		b.ReportMetric(float64(mp50)/float64(sp50), "p50_ratio")
		b.ReportMetric(ms2(dp50), "search_decoded_p50_ms")
		b.ReportMetric(ms2(mp50-dp50), "p50_diff_decoded_ms")
		b.ReportMetric(float64(errs), "errors")
		scpu, mcpu, dcpu := ms2(cpu[0])/float64(len(sl)), ms2(cpu[1])/float64(len(ml)), ms2(cpu[2])/float64(len(dl))
		b.ReportMetric(scpu, "search_cpu_ms")
		b.ReportMetric(mcpu, "mcp_cpu_ms")
		b.ReportMetric(dcpu, "search_decoded_cpu_ms")
		b.Logf("CPU ms a call (this process: client and server): POST /search %.3f | MCP search %.3f | diff %+.3f | POST /search decoded %.3f, MCP's diff to it %+.3f",
			scpu, mcpu, mcpu-scpu, dcpu, mcpu-dcpu)
		b.Logf("%d records, %d calls each: POST /search p50 %.2f ms p99 %.2f ms | MCP search p50 %.2f ms p99 %.2f ms | p50 diff %+.2f ms, ratio %.2f (target: diff <= 1 ms), errors %d",
			n, len(sl), ms2(sp50), ms2(pct(sl, 99)), ms2(mp50), ms2(pct(ml, 99)), ms2(mp50-sp50), float64(mp50)/float64(sp50), errs)
		b.Logf("like for like, both clients decoding the answer: POST /search decoded p50 %.2f ms p99 %.2f ms | MCP search p50 diff %+.2f ms, ratio %.2f",
			ms2(dp50), ms2(pct(dl, 99)), ms2(mp50-dp50), float64(mp50)/float64(dp50))
	}
}
