package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

// BenchmarkRegistryAPI measures the MCP Registry door on
// AGENTFINDER_BENCH_REGISTRY_SERVERS (default 30,000) generated MCP
// servers, each against its baseline in the same run:
//   - GET /v0.1/servers?search=... against POST /search of the same text
//     and type (alternating, one client): p50 of each, the difference and
//     the ratio (goal: at most +1 ms);
//   - walking every server at limit 100 against Meilisearch's own document
//     listing of the same index, 100 a page (goal: at most 2x).
func BenchmarkRegistryAPI(b *testing.B) {
	n := envInt("AGENTFINDER_BENCH_REGISTRY_SERVERS", 30000)
	ops := envInt("AGENTFINDER_BENCH_OPS", 400)
	start := time.Now()
	ms, name, rng := benchIndex(b, "benchreg", n, 3, func(_ int, d *normalize.Document) { d.Type = normalize.TypeMCP })
	// Production's searchable fields (the search tests' index leaves out
	// identifier, which the name matches read).
	task, err := ms.Client.Index(name).UpdateSettings(&meilisearch.Settings{SearchableAttributes: normalize.SearchableFields()})
	if err != nil {
		b.Fatal(err)
	}
	if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
		b.Fatal(err)
	}
	b.Logf("indexed %d MCP servers in %s", n, time.Since(start).Round(time.Millisecond))
	_, hs := benchServer(b, ms, name, nil)
	client := meili.NewHTTPClient(30 * time.Second)

	texts := make([]string, 64)
	for i := range texts {
		texts[i] = benchWords[rng.IntN(len(benchWords))]
		if i%2 == 1 {
			texts[i] += " " + benchWords[rng.IntN(len(benchWords))]
		}
	}
	for b.Loop() {
		lat, errs := alternate(2, 8, max(1, ops/16), func(side, i int) error {
			text := texts[i%len(texts)]
			if side == 0 {
				body, _ := json.Marshal(map[string]any{"query": map[string]any{"text": text, "type": normalize.TypeMCP, "federation": "none"}, "pageSize": 30})
				return postSearch(b.Context(), client, hs.URL, "", body)
			}
			req, _ := http.NewRequestWithContext(b.Context(), http.MethodGet, hs.URL+"/v0.1/servers?limit=30&search="+url.QueryEscape(text), nil)
			return readThrough(client, req)
		})
		sp50, rp50 := pct(lat[0], 50), pct(lat[1], 50)
		b.ReportMetric(ms2(sp50), "search_p50_ms")
		b.ReportMetric(ms2(rp50), "registry_search_p50_ms")
		b.ReportMetric(ms2(rp50-sp50), "registry_search_overhead_ms")
		b.ReportMetric(float64(rp50)/float64(sp50), "registry_search_ratio")
		b.Logf("search: POST /search p50 %.2f ms | GET /v0.1/servers?search p50 %.2f ms | +%.2f ms, ratio %.2f, errors %d",
			ms2(sp50), ms2(rp50), ms2(rp50-sp50), float64(rp50)/float64(sp50), errs)

		walkAPI, pages, listed := walkRegistryAPI(b, client, hs.URL)
		walkMeili := walkMeiliDocuments(b, ms, name, n)
		b.ReportMetric(walkAPI.Seconds(), "walk_api_s")
		b.ReportMetric(walkMeili.Seconds(), "walk_meili_s")
		b.ReportMetric(walkAPI.Seconds()/walkMeili.Seconds(), "walk_ratio")
		b.Logf("walk of %d servers at limit 100: API %s (%d pages, %d listed) | Meilisearch documents %s | ratio %.2f",
			n, walkAPI.Round(time.Millisecond), pages, listed, walkMeili.Round(time.Millisecond), walkAPI.Seconds()/walkMeili.Seconds())
		if listed != n {
			b.Errorf("the walk listed %d servers, want %d", listed, n)
		}
	}
}

// walkRegistryAPI walks GET /v0.1/servers at limit 100 to its end.
func walkRegistryAPI(b *testing.B, client *http.Client, base string) (took time.Duration, pages, listed int) {
	start := time.Now()
	cursor := ""
	for pages < 100000 {
		u := base + "/v0.1/servers?limit=100"
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		resp, err := client.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		var page struct {
			Servers  []json.RawMessage `json:"servers"`
			Metadata struct {
				NextCursor string `json:"nextCursor"`
			} `json:"metadata"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("%s: %d %v", u, resp.StatusCode, err)
		}
		pages++
		listed += len(page.Servers)
		if cursor = page.Metadata.NextCursor; cursor == "" {
			break
		}
	}
	return time.Since(start), pages, listed
}

// walkMeiliDocuments lists every document of the index, 100 a page, as
// Meilisearch itself serves them.
func walkMeiliDocuments(b *testing.B, ms *meilitest.Server, name string, n int) time.Duration {
	idx := ms.Client.Index(name)
	start := time.Now()
	got := 0
	for offset := int64(0); offset < int64(n); offset += 100 {
		var res meilisearch.DocumentsResult
		if err := idx.GetDocumentsWithContext(b.Context(), &meilisearch.DocumentsQuery{Offset: offset, Limit: 100}, &res); err != nil {
			b.Fatal(err)
		}
		got += len(res.Results)
	}
	if got != n {
		b.Errorf("Meilisearch listed %d documents, want %d", got, n)
	}
	return time.Since(start)
}
