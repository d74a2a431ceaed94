package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	relset "github.com/agentfinder/agentfinder/fixtures/relevance"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/embed"
	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi"
	"github.com/agentfinder/agentfinder/searchapi/query"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// BenchmarkSearchCost measures what one POST /search costs with embeddings
// on the dev relevance set of fixtures/relevance indexed with its
// distractors (fixtures/realworld's MCP registry servers and A2A cards, as
// make eval indexes them; about 800 records), in one run on one index:
//
//   - the profile of a request: each step of the engine (search.Config.Stage:
//     query cache, rewriting, query embedding, the fused multi-search,
//     the documents' fetch, the re-ranking, the results), the encoding, and
//     the rest of the HTTP request (POST /search's p50 less the engine's and
//     the encoding's in-process p50, alternating), with each step's share;
//     once with every request new (the query cache and the model's own
//     cache miss) and once again (the query cache hits);
//   - POST /search with the query cache warm against Meilisearch's own
//     hybrid search (one query carrying the same vector, semanticRatio 0.8,
//     the rewritten text as q, the same filter and attributes), with 1 and
//     8 clients in alternating segments. Targets: requests per second at 8
//     clients at least 0.4x Meilisearch's, p50 at 1 client at most 3x.
//
// Requests per measurement: AGENTFINDER_BENCH_OPS (default 600). Run once:
// go test -run XXX -bench SearchCost -benchtime 1x ./searchapi/e2e/.
func BenchmarkSearchCost(b *testing.B) {
	ops := envInt("AGENTFINDER_BENCH_OPS", 600)
	w := newCostWorld(b)
	ctx := context.Background()
	prof := newProfile()
	eng, err := search.New(search.Config{Index: w.name, Meili: meili.New(w.ms.URL, w.ms.APIKey), PublicURL: "http://bench.example",
		Embedder: w.model, QueryRewriter: query.Rewrite, Stage: prof.record}, nil)
	if err != nil {
		b.Fatal(err)
	}
	_, hs := benchServer(b, w.ms, w.name, func(c *searchapi.Config) { c.Embedder = w.model })
	client := meili.NewHTTPClient(10 * time.Second)
	bodies := make([][]byte, len(w.texts))
	for i, t := range w.texts {
		bodies[i], _ = json.Marshal(map[string]any{"query": map[string]any{"text": t, "federation": "none"}, "pageSize": 10})
	}
	inProcess := func(i int) error {
		ans, err := eng.Search(ctx, w.query(b, i), nil)
		if err != nil {
			return err
		}
		t := time.Now()
		_ = ans.Encode()
		prof.record(ctx, "encode", time.Since(t))
		return nil
	}
	api := func(i int) error { return postSearch(ctx, client, hs.URL, "", bodies[i]) }

	b.Run("profile", func(b *testing.B) {
		for b.Loop() {
			miss, hit, httpRest, apiP50, errs := profilePasses(prof, len(w.texts), ops, inProcess, api)
			if errs > 0 {
				b.Fatalf("%d searches failed", errs)
			}
			b.Logf("profile, %d records, %d requests a pass, mean ms per request (share):", w.records, len(w.texts))
			b.Logf("new requests: %s", formatProfile(miss, httpRest))
			b.Logf("repeated requests: %s", formatProfile(hit, httpRest))
			b.ReportMetric(ms2(apiP50), "search_p50_ms_cached")
			b.ReportMetric(hit.mean(search.StageCached), "cache_hit_ms")
			b.ReportMetric(miss.mean(search.StageRewrite)+miss.mean(search.StageEmbed), "cache_miss_ms")
			b.Logf("query cache: hit %.3f ms (rewriting and embedding skipped); miss %.3f ms (rewriting %.3f + embedding %.3f)",
				hit.mean(search.StageCached), miss.mean(search.StageRewrite)+miss.mean(search.StageEmbed),
				miss.mean(search.StageRewrite), miss.mean(search.StageEmbed))
		}
	})
	b.Run("vs_meili_hybrid", func(b *testing.B) {
		for b.Loop() {
			w.versusNative(b, eng, api, ops)
		}
	})
}

// costWorld is the dev relevance set and its distractors, indexed with
// embeddings as serve indexes them.
type costWorld struct {
	ms      *meilitest.Server
	name    string
	model   *embed.Model
	records int
	texts   []string
	queries []*search.Query
}

// newCostWorld indexes the set (skipping without the model). The model
// keeps its own vector cache, as serve's does: no dev request is an
// indexed text, so a new request embeds.
func newCostWorld(b *testing.B) *costWorld {
	b.Helper()
	m, err := embed.Load(benchEnv("AGENTFINDER_MODEL_DIR", "../../.cache/model"))
	if err != nil {
		b.Skipf("embedding model: %v (make model)", err)
	}
	rel := benchEnv("AGENTFINDER_RELEVANCE_DIR", "../../fixtures/relevance")
	now := time.Now()
	results, err := relset.Catalogs(rel, now)
	if err != nil {
		b.Fatal(err)
	}
	more, err := relset.DistractorCatalogs("../../fixtures/realworld", now)
	if err != nil {
		b.Fatal(err)
	}
	results = append(results, more...)
	ms := meilitest.Connect(b)
	w := &costWorld{ms: ms, name: meilitest.NewIndexName("bench_cost"), model: m}
	b.Cleanup(func() {
		for _, uid := range []string{w.name, w.name + "_sources"} {
			if task, err := ms.Client.DeleteIndex(uid); err == nil {
				_ = meilitest.Wait(ms.Client, task.TaskUID)
			}
		}
	})
	start := time.Now()
	ctx := context.Background()
	ix, err := ingest.New(ctx, ms.Client, ingest.Config{Index: w.name, Embedder: m})
	if err != nil {
		b.Fatal(err)
	}
	for _, res := range results {
		if err := ix.Put(ctx, res); err != nil {
			b.Fatal(err)
		}
		w.records += len(res.Records)
	}
	if err := ix.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	if err := ix.Close(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("indexed %d records with embeddings in %s", w.records, time.Since(start).Round(time.Millisecond))
	qs, err := relset.LoadQueries(rel + "/dev_queries.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range qs {
		w.texts = append(w.texts, q.Text)
	}
	return w
}

// query is dev request i as POST /search parses it.
func (w *costWorld) query(b *testing.B, i int) *search.Query {
	if w.queries == nil {
		for _, t := range w.texts {
			body, _ := json.Marshal(map[string]any{"query": map[string]any{"text": t, "federation": "none"}, "pageSize": 10})
			var req search.Request
			if err := json.Unmarshal(body, &req); err != nil {
				b.Fatal(err)
			}
			q, err := search.ParseRequest(&req, body, true)
			if err != nil {
				b.Fatal(err)
			}
			w.queries = append(w.queries, q)
		}
	}
	c := *w.queries[i]
	return &c
}

// each calls f for every request once and counts the failures.
func (w *costWorld) each(f func(i int) error) (errs int) {
	for i := range w.texts {
		if f(i) != nil {
			errs++
		}
	}
	return errs
}

// versusNative times POST /search (api, its query cache warm) against
// Meilisearch's own hybrid search of the same requests, with 1 and 8
// clients, in alternating segments.
func (w *costWorld) versusNative(b *testing.B, eng *search.Engine, api func(i int) error, ops int) {
	ctx := context.Background()
	idx := meili.New(w.ms.URL, w.ms.APIKey).Index(w.name)
	native := make([]*meilisearch.SearchRequest, len(w.texts))
	for i, t := range w.texts {
		q := w.query(b, i)
		native[i] = &meilisearch.SearchRequest{
			Query: query.Rewrite(t), Vector: w.model.EmbedOne(t), Limit: int64(q.PageSize),
			Hybrid:               &meilisearch.SearchRequestHybrid{Embedder: normalize.EmbedderName, SemanticRatio: 1 - query.DefaultKeywordWeight},
			Filter:               eng.Filter(q).Filter(),
			AttributesToRetrieve: search.ResultAttributes(), MatchingStrategy: meilisearch.Frequency, ShowRankingScore: true,
		}
	}
	meiliCall := func(i int) error {
		_, err := idx.SearchRawWithContext(ctx, native[i].Query, native[i])
		return err
	}
	for i := range native { // warm up both (POST /search's query cache too)
		if err := meiliCall(i); err != nil {
			b.Fatal(err)
		}
		if err := api(i); err != nil {
			b.Fatal(err)
		}
	}
	const rounds = 10
	per := max(1, ops/(2*rounds))
	meter := newCPUMeter(w.ms.URL)
	for _, clients := range []int{1, 8} {
		var lat [2][]time.Duration
		var took, cpuSelf, cpuMeili [2]time.Duration
		var errs int64
		for round := range rounds {
			for k := range 2 {
				side := (k + round) % 2
				call := meiliCall
				if side == 1 {
					call = api
				}
				s0, m0 := meter.read()
				l, e, n := concurrently(clients, per, round*per, len(w.texts), call)
				s1, m1 := meter.read()
				lat[side], took[side], errs = append(lat[side], l...), took[side]+e, errs+n
				cpuSelf[side] += s1 - s0
				cpuMeili[side] += m1 - m0
			}
		}
		mqps := float64(len(lat[0])) / took[0].Seconds()
		aqps := float64(len(lat[1])) / took[1].Seconds()
		mp50, ap50 := pct(lat[0], 50), pct(lat[1], 50)
		perReq := func(d time.Duration, side int) float64 { return ms2(d) / float64(len(lat[side])) }
		mcpu := perReq(cpuSelf[0]+cpuMeili[0], 0)
		acpu := perReq(cpuSelf[1]+cpuMeili[1], 1)
		c := fmt.Sprintf("%dc", clients)
		b.ReportMetric(ms2(mp50), "meili_hybrid_p50_ms_"+c)
		b.ReportMetric(ms2(ap50), "search_p50_ms_"+c)
		b.ReportMetric(float64(ap50)/float64(mp50), "p50_ratio_"+c)
		b.ReportMetric(mqps, "meili_hybrid_qps_"+c)
		b.ReportMetric(aqps, "search_qps_"+c)
		b.ReportMetric(aqps/mqps, "qps_ratio_"+c)
		b.ReportMetric(mcpu, "meili_hybrid_cpu_ms_"+c)
		b.ReportMetric(acpu, "search_cpu_ms_"+c)
		b.Logf("%d client(s), %d records: Meilisearch hybrid p50 %.2f p99 %.2f ms %.0f q/s | POST /search p50 %.2f p99 %.2f ms %.0f q/s | p50 x%.2f (target <= 3 at 1 client), q/s x%.2f (target >= 0.4 at 8), errors %d",
			clients, w.records, ms2(mp50), ms2(pct(lat[0], 99)), mqps, ms2(ap50), ms2(pct(lat[1], 99)), aqps, float64(ap50)/float64(mp50), aqps/mqps, errs)
		b.Logf("%d client(s), CPU ms a request (this process: clients and server; Meilisearch): Meilisearch hybrid %.2f (%.2f + %.2f) | POST /search %.2f (%.2f + %.2f) | x%.2f",
			clients, mcpu, perReq(cpuSelf[0], 0), perReq(cpuMeili[0], 0), acpu, perReq(cpuSelf[1], 1), perReq(cpuMeili[1], 1), acpu/mcpu)
	}
}

// concurrently makes per calls from clients goroutines (call(i) with i
// from first on, modulo n) and returns their latencies, the time all took
// and how many failed.
func concurrently(clients, per, first, n int, call func(i int) error) ([]time.Duration, time.Duration, int64) {
	var next, nerr atomic.Int64
	lats := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	t0 := time.Now()
	for c := range clients {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(per) {
					return
				}
				s := time.Now()
				if call((first+int(i))%n) != nil {
					nerr.Add(1)
				}
				lats[c] = append(lats[c], time.Since(s))
			}
		})
	}
	wg.Wait()
	took := time.Since(t0)
	var out []time.Duration
	for _, l := range lats {
		out = append(out, l...)
	}
	return out, took, nerr.Load()
}

// profilePasses profiles n requests in process (inProcess(i) runs request i
// through the engine reporting to prof, and encodes it): a pass with every
// request new, then, after api has sent each once (warming its server), a
// pass of about ops requests alternating with the same requests through
// api (POST /search). httpRest is POST /search's p50 less the in-process
// p50: what HTTP, decoding and the middleware add.
func profilePasses(prof *profile, n, ops int, inProcess, api func(i int) error) (miss, hit profileStats, httpRest, apiP50 time.Duration, errs int) {
	prof.reset()
	for i := range n {
		if inProcess(i) != nil {
			errs++
		}
	}
	miss = prof.snapshot()
	for i := range n {
		if api(i) != nil {
			errs++
		}
	}
	prof.reset()
	lat, e := alternate(2, 10, max(1, min(n, ops/10)), func(side, i int) error {
		if side == 0 {
			return inProcess(i % n)
		}
		return api(i % n)
	})
	hit = prof.snapshot()
	return miss, hit, pct(lat[1], 50) - pct(lat[0], 50), pct(lat[1], 50), errs + e
}

// profile sums the time of each step of the searches it is told of
// (search.Config.Stage, and "encode").
type profile struct {
	mu    sync.Mutex
	sum   map[string]time.Duration
	count map[string]int
	order []string
}

func newProfile() *profile { return &profile{sum: map[string]time.Duration{}, count: map[string]int{}} }

func (p *profile) record(_ context.Context, stage string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.sum[stage]; !ok {
		p.order = append(p.order, stage)
	}
	p.sum[stage] += d
	p.count[stage]++
}

func (p *profile) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.sum)
	clear(p.count)
}

// profileStats are a profile's sums at one moment; requests is how many
// searches they cover (the count of the step every search reports).
type profileStats struct {
	sum      map[string]time.Duration
	requests int
}

func (p *profile) snapshot() profileStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := profileStats{sum: map[string]time.Duration{}, requests: p.count[search.StageSearch]}
	for k, v := range p.sum {
		s.sum[k] = v
	}
	return s
}

// mean is the mean time of stage per request, in ms.
func (s profileStats) mean(stage string) float64 {
	if s.requests == 0 {
		return 0
	}
	return float64(s.sum[stage].Microseconds()) / 1000 / float64(s.requests)
}

// profileSteps are the steps of a request in order, the engine's and the
// door's.
var profileSteps = []string{search.StageCached, search.StageRewrite, search.StageEmbed, search.StageSearch, search.StageFetch,
	search.StageRerank, search.StageHits, "encode"}

// formatProfile is one line of a pass's profile: each step's mean and
// share, the rest of an HTTP request (httpRest, measured on the repeated
// requests) last, then the total.
func formatProfile(s profileStats, httpRest time.Duration) string {
	total := ms2(httpRest)
	for _, st := range profileSteps {
		total += s.mean(st)
	}
	var sb strings.Builder
	for _, st := range profileSteps {
		fmt.Fprintf(&sb, "%s %.3f (%.1f%%), ", st, s.mean(st), 100*s.mean(st)/total)
	}
	fmt.Fprintf(&sb, "http %.3f (%.1f%%), total %.3f", ms2(httpRest), 100*ms2(httpRest)/total, total)
	return sb.String()
}

// benchEnv is the environment variable k, or def when unset.
func benchEnv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
