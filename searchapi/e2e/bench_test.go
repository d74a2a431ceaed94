package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi"
	"github.com/agentfinder/agentfinder/searchapi/hybrid"
	"github.com/agentfinder/agentfinder/searchapi/query"
	"github.com/agentfinder/agentfinder/searchapi/search"
	"github.com/agentfinder/agentfinder/searchapi/searchtest"
)

// BenchmarkSearchVsDirect measures POST /search through the real handler over
// loopback HTTP against the equivalent direct Meilisearch requests (the
// keyword-only fused search newPlan describes: hybrid.Search, then
// hybrid.Fetch of the page, sent with the same client), interleaved in
// the same run, with 1 and 8 clients. Records: AGENTFINDER_BENCH_RECORDS
// (default 100000); requests per measurement: AGENTFINDER_BENCH_OPS (default
// 2000). Run once: go test -run XXX -bench SearchVsDirect -benchtime 1x.
// Targets: p50 <= direct + 1 ms, p99 <= direct + 5 ms, 8-client
// throughput >= 0.7x direct, no errors.
func BenchmarkSearchVsDirect(b *testing.B) {
	n := envInt("AGENTFINDER_BENCH_RECORDS", 100000)
	ops := envInt("AGENTFINDER_BENCH_OPS", 2000)
	start := time.Now()
	ms, name, rng := benchIndex(b, "bench", n, 1, nil)
	b.Logf("indexed %d records in %s", n, time.Since(start).Round(time.Millisecond))

	_, hs := benchServer(b, ms, name, nil)
	client := meili.NewHTTPClient(10 * time.Second) // keep-alive, no gzip: the same transport settings both ways
	// The engine the server runs, built alike, for the direct path's plans.
	direct := meili.New(ms.URL, ms.APIKey)
	prof := newProfile()
	eng, err := search.New(search.Config{Index: name, Meili: direct, PublicURL: "http://bench.example", QueryRewriter: query.Rewrite, Stage: prof.record}, nil)
	if err != nil {
		b.Fatal(err)
	}

	// The query mix: one to four words with and without a type filter.
	type benchQuery struct {
		body   []byte
		q      *search.Query
		direct func(ctx context.Context) error
	}
	var queries []benchQuery
	for i := range 64 {
		words := make([]byte, 0, 40)
		for k := range 1 + i%4 {
			if k > 0 {
				words = append(words, ' ')
			}
			words = append(words, benchWords[rng.IntN(len(benchWords))]...)
		}
		q := map[string]any{"text": string(words), "federation": "none"}
		if i%3 == 0 {
			q["type"] = benchTypes[i%len(benchTypes)]
		}
		body, _ := json.Marshal(map[string]any{"query": q, "pageSize": 10})
		var sb search.Request
		if err := json.Unmarshal(body, &sb); err != nil {
			b.Fatal(err)
		}
		sq, err := search.ParseRequest(&sb, body, true)
		if err != nil {
			b.Fatal(err)
		}
		// Direct: the fused search's Meilisearch requests (one multi-search
		// of the term sub-queries, one fetch of the page), the same ones
		// localSearch sends, without the handler.
		p := eng.Plan(sq, nil)
		queries = append(queries, benchQuery{body: body, q: sq, direct: func(ctx context.Context) error {
			res, err := hybrid.Search(ctx, direct, p)
			if err != nil {
				return err
			}
			ids := make([]string, 0, sq.PageSize)
			for _, h := range res.Hits[:min(len(res.Hits), sq.PageSize)] {
				ids = append(ids, h.ID)
			}
			_, err = hybrid.Fetch(ctx, direct, name, normalize.FieldIdentifier, ids, search.ResultAttributes(), false)
			return err
		}})
	}
	api := func(ctx context.Context, body []byte) error { return postSearch(ctx, client, hs.URL, "", body) }
	// The profile of a request, in process and over HTTP (the same engine
	// configuration, keyword only).
	inProcess := func(i int) error {
		q := *queries[i].q
		ans, err := eng.Search(context.Background(), &q, nil)
		if err != nil {
			return err
		}
		t := time.Now()
		_ = ans.Encode()
		prof.record(context.Background(), "encode", time.Since(t))
		return nil
	}
	miss, hit, httpRest, _, perrs := profilePasses(prof, len(queries), min(ops, 640), inProcess, func(i int) error {
		return api(context.Background(), queries[i].body)
	})
	if perrs > 0 {
		b.Fatalf("%d profiled searches failed", perrs)
	}
	b.Logf("profile, %d records, keyword only, %d requests a pass, mean ms per request (share):", n, len(queries))
	b.Logf("new requests: %s", formatProfile(miss, httpRest))
	b.Logf("repeated requests: %s", formatProfile(hit, httpRest))

	// Warm up both paths (connections, caches).
	for _, q := range queries {
		if err := q.direct(context.Background()); err != nil {
			b.Fatal(err)
		}
		if err := api(context.Background(), q.body); err != nil {
			b.Fatal(err)
		}
	}

	// The load on a shared machine changes by the second: measure in short
	// alternating segments (direct, api, api, direct, ...) so both sides see
	// the same conditions.
	const rounds = 10
	perSegment := max(1, ops/(2*rounds))
	run := func(clients int, useAPI bool) (lat []time.Duration, elapsed time.Duration, errs int64) {
		var next, nerr atomic.Int64
		lats := make([][]time.Duration, clients)
		var wg sync.WaitGroup
		t0 := time.Now()
		for c := range clients {
			wg.Go(func() {
				for {
					i := next.Add(1) - 1
					if i >= int64(perSegment) {
						return
					}
					q := queries[int(i)%len(queries)]
					s := time.Now()
					var err error
					if useAPI {
						err = api(context.Background(), q.body)
					} else {
						err = q.direct(context.Background())
					}
					lats[c] = append(lats[c], time.Since(s))
					if err != nil {
						nerr.Add(1)
					}
				}
			})
		}
		wg.Wait()
		elapsed = time.Since(t0)
		for _, l := range lats {
			lat = append(lat, l...)
		}
		return lat, elapsed, nerr.Load()
	}
	for b.Loop() {
		for _, clients := range []int{1, 8} {
			var dl, al []time.Duration
			var dt, at time.Duration
			var errs int64
			for round := range rounds {
				order := []bool{false, true}
				if round%2 == 1 {
					order = []bool{true, false}
				}
				for _, useAPI := range order {
					l, e, n := run(clients, useAPI)
					errs += n
					if useAPI {
						al, at = append(al, l...), at+e
					} else {
						dl, dt = append(dl, l...), dt+e
					}
				}
			}
			dp50, dp99 := pct(dl, 50), pct(dl, 99)
			ap50, ap99 := pct(al, 50), pct(al, 99)
			dqps := float64(len(dl)) / dt.Seconds()
			aqps := float64(len(al)) / at.Seconds()
			c := strconv.Itoa(clients) + "c"
			b.ReportMetric(ms2(dp50), "direct_p50_ms_"+c)
			b.ReportMetric(ms2(ap50), "api_p50_ms_"+c)
			b.ReportMetric(ms2(ap50-dp50), "p50_overhead_ms_"+c)
			b.ReportMetric(ms2(dp99), "direct_p99_ms_"+c)
			b.ReportMetric(ms2(ap99), "api_p99_ms_"+c)
			b.ReportMetric(ms2(ap99-dp99), "p99_overhead_ms_"+c)
			b.ReportMetric(dqps, "direct_qps_"+c)
			b.ReportMetric(aqps, "api_qps_"+c)
			b.ReportMetric(aqps/dqps, "qps_ratio_"+c)
			b.ReportMetric(float64(errs), "errors_"+c)
			b.Logf("%d client(s), %d records: direct p50 %.2f p99 %.2f ms %.0f q/s | api p50 %.2f p99 %.2f ms %.0f q/s | ratio %.2f, errors %d",
				clients, n, ms2(dp50), ms2(dp99), dqps, ms2(ap50), ms2(ap99), aqps, aqps/dqps, errs)
		}
	}
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms2(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func envInt(k string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
		return v
	}
	return def
}

var (
	benchWords = []string{"weather", "forecast", "flight", "booking", "hotel", "invoice", "payment", "calendar", "meeting",
		"translate", "summarize", "document", "contract", "legal", "medical", "claims", "insurance", "patient", "records",
		"spreadsheet", "email", "code", "review", "security", "scan", "database", "query", "image", "video", "music",
		"recipe", "shopping", "stock", "market", "crypto", "news", "search", "map", "route", "travel", "tax", "payroll",
		"hiring", "onboarding", "support", "ticket", "chat", "voice", "sales", "crm"}
	benchTypes = []string{"application/a2a-agent-card+json", "application/mcp-server+json", "application/ai-skill", "application/adp-agent-card+json"}
	benchTags  = []string{"travel", "finance", "health", "legal", "productivity", "developer", "media", "retail", "hr", "security", "data", "support"}
)

// benchDoc is a simple, realistic record: a name, a two-sentence
// description, tags, capabilities, representative queries and provenance.
func benchDoc(rng *rand.Rand, i int) normalize.Document {
	w := func() string { return benchWords[rng.IntN(len(benchWords))] }
	pub := fmt.Sprintf("pub%03d.example", i%500)
	rec := normalize.Record{
		Identifier:            fmt.Sprintf("urn:ai:%s:agent:a%06d", pub, i),
		DisplayName:           fmt.Sprintf("%s %s agent %d", w(), w(), i),
		Type:                  benchTypes[i%len(benchTypes)],
		URL:                   fmt.Sprintf("https://%s/agents/a%06d.json", pub, i),
		Description:           fmt.Sprintf("Helps with %s and %s for %s teams. Connects to %s and %s tools to automate %s.", w(), w(), w(), w(), w(), w()),
		Tags:                  []string{benchTags[rng.IntN(len(benchTags))], benchTags[rng.IntN(len(benchTags))], w()},
		Capabilities:          []string{w() + "Tool", w() + "Tool"},
		RepresentativeQueries: []string{"help me " + w() + " my " + w(), "find a " + w() + " " + w() + " agent"},
		UpdatedAt:             time.Date(2026, 1, 1+i%150, 0, 0, 0, 0, time.UTC).Format(time.RFC3339),
		Publisher:             pub,
		PublisherVerified:     i%3 != 0,
		Protocols:             []string{"a2a"},
		Source:                normalize.Source{Catalog: "https://" + pub + "/.well-known/ai-catalog.json", Via: normalize.ViaWellKnown},
	}
	if i%7 == 0 {
		rec.Compliance = []string{"soc2-type2", "soc2"}
	}
	return normalize.NewDocument(rec, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
}

// benchServer serves index name of ms over loopback HTTP as the
// benchmarks measure it (query rewriting on, slots for many clients),
// after mut adjusts the configuration; closed when the benchmark ends.
func benchServer(b *testing.B, ms *meilitest.Server, name string, mut func(*searchapi.Config)) (*searchapi.Server, *httptest.Server) {
	b.Helper()
	cfg := searchapi.Config{Index: name, Meili: meili.New(ms.URL, ms.APIKey), PublicURL: "http://bench.example", MaxConcurrent: 1024,
		QueryRewriter: query.Rewrite}
	if mut != nil {
		mut(&cfg)
	}
	srv, err := searchapi.New(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	b.Cleanup(hs.Close)
	return srv, hs
}

// benchIndex creates an index with the server's settings and n generated
// records (benchDoc from a PCG seeded with seed); mark, when not nil, may
// change each record before it is written. It returns the generator too, so a
// benchmark draws its queries from where the records left off.
func benchIndex(b *testing.B, prefix string, n int, seed uint64, mark func(j int, d *normalize.Document)) (*meilitest.Server, string, *rand.Rand) {
	b.Helper()
	ms, name := meilitest.Index(b, prefix)
	idx := ms.Client.Index(name)
	task, err := idx.UpdateSettings(searchtest.Settings())
	if err != nil {
		b.Fatal(err)
	}
	if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, seed+1))
	const batch = 10000
	for i := 0; i < n; i += batch {
		docs := make([]normalize.Document, 0, batch)
		for j := i; j < min(n, i+batch); j++ {
			d := benchDoc(rng, j)
			if mark != nil {
				mark(j, &d)
			}
			docs = append(docs, d)
		}
		task, err := idx.AddDocuments(docs, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
			b.Fatal(err)
		}
	}
	return ms, name, rng
}

// postSearch posts body to base's POST /search, with an Authorization
// header when auth is set, and reads the answer through; any status but
// 200 is an error.
func postSearch(ctx context.Context, client *http.Client, base, auth string, body []byte) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/search", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return readThrough(client, req)
}

// readThrough sends req and reads the answer through; any status but 200
// is an error.
func readThrough(client *http.Client, req *http.Request) error {
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", req.URL, resp.StatusCode)
	}
	return nil
}

// alternate times sides calls in short alternating segments, so every side
// sees the same machine load: rounds rounds of per calls a side, the side
// going first rotating each round. call(side, i) makes a side's i-th call.
// It returns each side's latencies and how many calls failed.
func alternate(sides, rounds, per int, call func(side, i int) error) (lat [][]time.Duration, errs int) {
	lat = make([][]time.Duration, sides)
	for round := range rounds {
		for k := range sides {
			side := (k + round) % sides
			for i := range per {
				start := time.Now()
				if err := call(side, round*per+i); err != nil {
					errs++
				}
				lat[side] = append(lat[side], time.Since(start))
			}
		}
	}
	return lat, errs
}
