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
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

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
// loopback HTTP against the Meilisearch requests it makes, sent straight to
// Meilisearch with the same client, interleaved in the same run, with 1 and
// 8 clients. Three sides:
//
//   - api: POST /search (query rewriting on, keyword only);
//   - same: exactly the multi-search requests the server sent for that
//     request (recorded by a wrapper around the server's Meilisearch client,
//     one request at a time, then replayed in order): what POST /search adds
//     over them is this process's own cost (handler, decoding, fusion,
//     re-ranking, encoding, HTTP). Targets: p50 at most 1 ms and p99 at
//     most 5 ms over same, 8-client throughput at least 0.7x same;
//   - minimal: the least a keyword search needs (hybrid.Search of the
//     request's plan, then a fetch of the page's documents without the
//     access scope): what POST /search costs over it adds the query shape's
//     extra Meilisearch work (the re-ranking pool's fetch, the base-filter
//     ranking of a filtered request) to the above.
//
// Records: AGENTFINDER_BENCH_RECORDS (default 100000); requests a side
// and client count: half AGENTFINDER_BENCH_OPS (default 2000). Run once: go test
// -run XXX -bench SearchVsDirect -benchtime 1x.
func BenchmarkSearchVsDirect(b *testing.B) {
	n := envInt("AGENTFINDER_BENCH_RECORDS", 100000)
	ops := envInt("AGENTFINDER_BENCH_OPS", 2000)
	start := time.Now()
	ms, name, rng := benchIndex(b, "bench", n, 1, nil)
	b.Logf("indexed %d records in %s", n, time.Since(start).Round(time.Millisecond))

	rec := &meiliRecorder{}
	_, hs := benchServer(b, ms, name, func(c *searchapi.Config) { rec.Meili = c.Meili; c.Meili = rec })
	client := meili.NewHTTPClient(10 * time.Second) // keep-alive, no gzip: the same transport settings both ways
	// The engine the server runs, built alike, for the minimal side's plans
	// and the in-process profile.
	direct := meili.New(ms.URL, ms.APIKey)
	prof := newProfile()
	eng, err := search.New(search.Config{Index: name, Meili: direct, PublicURL: "http://bench.example", QueryRewriter: query.Rewrite, Stage: prof.record}, nil)
	if err != nil {
		b.Fatal(err)
	}
	queries := benchQueries(b, rng, eng, direct, name)
	api := func(ctx context.Context, body []byte) error { return postSearch(ctx, client, hs.URL, "", body) }
	profileVsDirect(b, prof, eng, queries, n, ops, api)

	// Warm up (connections, caches), then record what the server sends for
	// each request, one request at a time.
	for _, q := range queries {
		if err := q.minimal(context.Background()); err != nil {
			b.Fatal(err)
		}
		if err := api(context.Background(), q.body); err != nil {
			b.Fatal(err)
		}
	}
	recordSame(b, rec, queries, api)
	sides := []func(ctx context.Context, q benchQuery) error{
		func(ctx context.Context, q benchQuery) error { return api(ctx, q.body) },
		func(ctx context.Context, q benchQuery) error { return q.replay(ctx, direct) },
		func(ctx context.Context, q benchQuery) error { return q.minimal(ctx) },
	}
	meter := newCPUMeter(ms.URL)
	for b.Loop() {
		for _, clients := range []int{1, 8} {
			m := alternateSides(meter, clients, max(1, ops/20), len(queries), func(ctx context.Context, side, i int) error {
				return sides[side](ctx, queries[i])
			})
			reportVsDirect(b, n, clients, m)
		}
	}
}

// benchQuery is one request of BenchmarkSearchVsDirect: its POST /search
// body, the parsed query, the minimal Meilisearch requests it needs and,
// once recorded, the multi-search requests the server sent for it.
type benchQuery struct {
	body    []byte
	q       *search.Query
	minimal func(ctx context.Context) error
	same    []*meilisearch.MultiSearchRequest
}

// replay sends the recorded requests in order with client.
func (q benchQuery) replay(ctx context.Context, client hybrid.Client) error {
	for _, r := range q.same {
		if _, err := client.MultiSearchWithContext(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// benchQueries is the query mix: 64 requests of one to four words, a
// third with a type filter.
func benchQueries(b *testing.B, rng *rand.Rand, eng *search.Engine, direct search.Meili, index string) []benchQuery {
	b.Helper()
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
		// Minimal: one multi-search of the request's own term sub-queries,
		// one fetch of the page, without the handler.
		p := eng.Plan(sq, nil)
		queries = append(queries, benchQuery{body: body, q: sq, minimal: func(ctx context.Context) error {
			res, err := hybrid.Search(ctx, direct, p)
			if err != nil {
				return err
			}
			ids := make([]string, 0, sq.PageSize)
			for _, h := range res.Hits[:min(len(res.Hits), sq.PageSize)] {
				ids = append(ids, h.ID)
			}
			_, err = hybrid.Fetch(ctx, direct, index, normalize.FieldIdentifier, ids, search.ResultAttributes(), false)
			return err
		}})
	}
	return queries
}

// recordSame records, one request at a time, the multi-search requests the
// server sends for each query (queries[i].same). A request that reached
// Meilisearch otherwise than by multi-search could not be replayed, and
// fails the benchmark.
func recordSame(b *testing.B, rec *meiliRecorder, queries []benchQuery, api func(ctx context.Context, body []byte) error) {
	b.Helper()
	others := rec.others.Load()
	sent := 0
	for i := range queries {
		rec.start()
		err := api(context.Background(), queries[i].body)
		same, rerr := rec.stop()
		if err != nil || rerr != nil {
			b.Fatal(err, rerr)
		}
		if len(same) == 0 {
			b.Fatalf("request %d sent Meilisearch no multi-search", i)
		}
		queries[i].same = same
		sent += len(same)
	}
	if d := rec.others.Load() - others; d > 0 {
		b.Fatalf("POST /search sent %d Meilisearch requests outside multi-search: the replay would miss them", d)
	}
	b.Logf("recorded %d multi-search requests for %d requests (%.2f a request)", sent, len(queries), float64(sent)/float64(len(queries)))
}

// profileVsDirect logs the profile of the requests in process and over
// HTTP (the same engine configuration as the server's, keyword only).
func profileVsDirect(b *testing.B, prof *profile, eng *search.Engine, queries []benchQuery, n, ops int, api func(ctx context.Context, body []byte) error) {
	b.Helper()
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
}

// sideFigures are what alternateSides measured of each side (api, same,
// minimal): latencies, the time its segments took, failed calls, and the
// CPU time this process (clients and server) and Meilisearch used
// meanwhile.
type sideFigures struct {
	lat                   [3][]time.Duration
	took, cpuSelf, cpuMei [3]time.Duration
	errs                  [3]int64
}

// alternateSides times each side's calls in short alternating segments
// (the load on a shared machine changes by the second, so every side sees
// the same conditions): ten rounds of per calls a side from clients
// goroutines, the side going first rotating each round; call(ctx, side, i)
// makes a side's call of query i (modulo n).
func alternateSides(meter cpuMeter, clients, per, n int, call func(ctx context.Context, side, i int) error) sideFigures {
	const rounds = 10
	var f sideFigures
	for round := range rounds {
		for k := range 3 {
			side := (k + round) % 3
			s0, m0 := meter.read()
			l, t, e := concurrently(clients, per, round*per, n, func(i int) error { return call(context.Background(), side, i) })
			s1, m1 := meter.read()
			f.lat[side], f.took[side], f.errs[side] = append(f.lat[side], l...), f.took[side]+t, f.errs[side]+e
			f.cpuSelf[side] += s1 - s0
			f.cpuMei[side] += m1 - m0
		}
	}
	return f
}

// reportVsDirect reports and logs one client count's figures: each side's
// p50, p99, requests a second and CPU a request, and POST /search's
// overhead over the same requests (the target) and over the minimal ones.
func reportVsDirect(b *testing.B, records, clients int, f sideFigures) {
	c := strconv.Itoa(clients) + "c"
	var p50, p99, qps, self, mei [3]float64
	for side, name := range []string{"api", "same", "minimal"} {
		p50[side], p99[side] = ms2(pct(f.lat[side], 50)), ms2(pct(f.lat[side], 99))
		qps[side] = float64(len(f.lat[side])) / f.took[side].Seconds()
		self[side] = ms2(f.cpuSelf[side]) / float64(len(f.lat[side]))
		mei[side] = ms2(f.cpuMei[side]) / float64(len(f.lat[side]))
		b.ReportMetric(p50[side], name+"_p50_ms_"+c)
		b.ReportMetric(p99[side], name+"_p99_ms_"+c)
		b.ReportMetric(qps[side], name+"_qps_"+c)
		b.ReportMetric(self[side], name+"_cpu_self_ms_"+c)
		b.ReportMetric(mei[side], name+"_cpu_meili_ms_"+c)
		b.ReportMetric(float64(f.errs[side]), name+"_errors_"+c)
	}
	b.ReportMetric(p50[0]-p50[1], "p50_overhead_ms_"+c)
	b.ReportMetric(p99[0]-p99[1], "p99_overhead_ms_"+c)
	b.ReportMetric(qps[0]/qps[1], "qps_ratio_"+c)
	b.ReportMetric(p50[0]-p50[2], "p50_over_minimal_ms_"+c)
	b.ReportMetric(qps[0]/qps[2], "qps_ratio_minimal_"+c)
	b.Logf("%d client(s), %d records: POST /search p50 %.2f p99 %.2f ms %.0f q/s | same requests p50 %.2f p99 %.2f ms %.0f q/s | minimal requests p50 %.2f p99 %.2f ms %.0f q/s",
		clients, records, p50[0], p99[0], qps[0], p50[1], p99[1], qps[1], p50[2], p99[2], qps[2])
	b.Logf("%d client(s): over the same requests p50 %+.2f ms (target +1), p99 %+.2f ms (target +5), q/s x%.2f (target 0.7) | over the minimal requests p50 %+.2f ms, q/s x%.2f | errors %d / %d / %d",
		clients, p50[0]-p50[1], p99[0]-p99[1], qps[0]/qps[1], p50[0]-p50[2], qps[0]/qps[2], f.errs[0], f.errs[1], f.errs[2])
	b.Logf("%d client(s): CPU ms a request, this process + Meilisearch: POST /search %.3f + %.3f | same %.3f + %.3f | minimal %.3f + %.3f (this process's own over the same requests %+.3f)",
		clients, self[0], mei[0], self[1], mei[1], self[2], mei[2], self[0]-self[1])
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
	return readInto(client, searchRequest(ctx, base, auth, body), nil)
}

// postSearchDecoded posts body to base's POST /search and decodes the
// answer into v, as a client that uses the answer does; any status but 200
// is an error.
func postSearchDecoded(ctx context.Context, client *http.Client, base string, body []byte, v any) error {
	return readInto(client, searchRequest(ctx, base, "", body), v)
}

// searchRequest is POST /search of body at base, with an Authorization
// header when auth is set.
func searchRequest(ctx context.Context, base, auth string, body []byte) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/search", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return req
}

// readThrough sends req and reads the answer through; any status but 200
// is an error.
func readThrough(client *http.Client, req *http.Request) error { return readInto(client, req, nil) }

// readInto sends req, decodes a 200 answer into v (when v is not nil) and
// reads the rest through, so the connection is kept; any status but 200 is
// an error.
func readInto(client *http.Client, req *http.Request, v any) error {
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK && v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			return err
		}
	}
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
