package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

// benchRecords is AGENTFINDER_BENCH_RECORDS, default 100,000.
func benchRecords(b *testing.B) int {
	if s := os.Getenv("AGENTFINDER_BENCH_RECORDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 {
			b.Fatalf("AGENTFINDER_BENCH_RECORDS=%q: want a number >= 100", s)
		}
		return n
	}
	return 100000
}

var benchWords = strings.Fields(`weather forecast travel flight hotel booking invoice billing payment
calendar meeting schedule email inbox translate language summarize document search code review deploy
kubernetes database query analytics report dashboard sales lead crm support ticket chat voice image
vision audio transcribe music video stock market trading portfolio risk compliance audit security scan
vulnerability log metrics alert incident oncall recipe cooking fitness health doctor appointment legal
contract hr hiring resume shipping tracking inventory warehouse retail price compare news research paper`)

// benchCatalogs generates n records spread over catalogs of 100, shaped
// like real entries: a name, a paragraph, tags, capabilities, queries and
// examples.
func benchCatalogs(n int) []normalize.CatalogResult {
	rng := rand.New(rand.NewPCG(1, 2))
	words := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = benchWords[rng.IntN(len(benchWords))]
		}
		return strings.Join(w, " ")
	}
	list := func(k int) []string {
		out := make([]string, k)
		for i := range out {
			out[i] = benchWords[rng.IntN(len(benchWords))]
		}
		return out
	}
	const per = 100
	var out []normalize.CatalogResult
	for c := 0; c*per < n; c++ {
		host := fmt.Sprintf("host%d.test", c)
		res := normalize.CatalogResult{Catalog: "https://" + host + "/.well-known/ai-catalog.json",
			Via: normalize.ViaWellKnown, Status: normalize.StatusOK}
		for i := 0; i < per && c*per+i < n; i++ {
			id := fmt.Sprintf("urn:air:%s:agent:%d", host, i)
			rec := normalize.Record{
				Identifier:            id,
				DisplayName:           strings.ToUpper(words(1)[:1]) + words(2) + " Agent",
				Type:                  "application/a2a-agent-card+json",
				URL:                   "https://" + host + "/agents/" + strconv.Itoa(i) + ".json",
				Description:           words(30),
				Tags:                  list(4),
				Capabilities:          list(3),
				RepresentativeQueries: []string{words(5), words(6)},
				Examples:              []string{words(7)},
				Skills:                list(2),
				SkillNames:            list(2),
				Protocols:             []string{"a2a"},
				Publisher:             host,
				PublisherVerified:     true,
				UpdatedAt:             "2025-06-01T00:00:00Z",
				Host:                  &normalize.HostInfo{DisplayName: host + " Inc."},
				Source:                normalize.Source{Catalog: res.Catalog, Via: normalize.ViaWellKnown},
			}
			rec.ContentHash = recordHash(rec)
			res.Records = append(res.Records, rec)
		}
		out = append(out, res)
	}
	return out
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

// BenchmarkIndex measures, in one run against the same Meilisearch:
//   - Meilisearch's own bulk add of N generated documents (baseline),
//   - ingest indexing the same records handed over as catalogs (docs/s and
//     the ratio to the baseline; target >= 0.5),
//   - freshness lag on the idle N-record index: Put of a one-manifest change
//     until a search returns it (p50, p95), next to Meilisearch's own
//     add-to-searchable time for one document,
//   - freshness lag in a steady crawl of 20 catalogs a second, each with one
//     change: Put until the write is awaited (p50, p99).
//
// AGENTFINDER_BENCH_RECORDS sets N (default 100,000); AGENTFINDER_BENCH_DEBUG=1
// logs every batch ingest writes.
func BenchmarkIndex(b *testing.B) {
	n := benchRecords(b)
	s := meilitest.Connect(b)
	ctx := b.Context()
	cats := benchCatalogs(n)
	now := time.Now()

	st := &store{client: s.Client, logger: discardLogger(), retryMin: 50 * time.Millisecond, retryMax: time.Second, poll: 3 * time.Millisecond}
	baseIdx := meilitest.NewIndexName("bench_base")
	oursIdx := meilitest.NewIndexName("bench_ours")
	b.Cleanup(func() {
		dropIndexes(s.Client, baseIdx)
		dropIndexes(s.Client, oursIdx)
	})

	for b.Loop() {
		// Baseline: the same documents, NDJSON in chunks of 10,000, all
		// enqueued at once, then awaited.
		if err := st.ensureIndex(ctx, baseIdx); err != nil {
			b.Fatal(err)
		}
		if _, err := st.applySettings(ctx, baseIdx, desiredSettings(0), "", nil); err != nil {
			b.Fatal(err)
		}
		var chunks [][]byte
		var buf bytes.Buffer
		cnt := 0
		for _, c := range cats {
			for _, r := range c.Records {
				raw, _ := json.Marshal(normalize.NewDocument(r, now))
				buf.Write(raw)
				buf.WriteByte('\n')
				if cnt++; cnt%10000 == 0 {
					chunks = append(chunks, bytes.Clone(buf.Bytes()))
					buf.Reset()
				}
			}
		}
		if buf.Len() > 0 {
			chunks = append(chunks, buf.Bytes())
		}
		start := time.Now()
		var last int64
		for _, ch := range chunks {
			info, err := s.Client.Index(baseIdx).AddDocumentsNdjsonWithContext(ctx, ch, nil)
			if err != nil {
				b.Fatal(err)
			}
			last = info.TaskUID
		}
		if err := st.await(ctx, last); err != nil {
			b.Fatal(err)
		}
		baseRate := float64(n) / time.Since(start).Seconds()

		// Ours: catalogs through Put, then Flush.
		// OnResult fires once a result's writes succeeded, i.e. once it is
		// searchable: the steady-crawl phase times Put to OnResult.
		var doneMu sync.Mutex
		done := map[string]time.Time{}
		onResult := func(catalog string, _ ApplyResult) {
			doneMu.Lock()
			done[catalog] = time.Now()
			doneMu.Unlock()
		}
		cfg := Config{Index: oursIdx, OnResult: onResult}
		if os.Getenv("AGENTFINDER_BENCH_DEBUG") != "" {
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		ix, err := New(ctx, s.Client, cfg)
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		for _, c := range cats {
			if err := ix.Put(ctx, c); err != nil {
				b.Fatal(err)
			}
		}
		if err := ix.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		oursRate := float64(n) / time.Since(start).Seconds()
		if got := ix.Stats().Upserted; got != int64(n) {
			b.Fatalf("upserted %d, want %d", got, n)
		}

		// Freshness on the idle index: change one record of one catalog.
		const rounds = 30
		var lags, floor []time.Duration
		for i := range rounds {
			c := cats[i%len(cats)]
			c.Records = slices.Clone(c.Records)
			token := fmt.Sprintf("freshtoken%dx%d", i, rand.Int())
			c.Records[0].Description = "now with " + token
			c.Records[0].ContentHash = recordHash(c.Records[0])
			t0 := time.Now()
			if err := ix.Put(ctx, c); err != nil {
				b.Fatal(err)
			}
			waitSearchable(b, s.Client, oursIdx, token)
			lags = append(lags, time.Since(t0))

			// Meilisearch's own floor: add one document, search until found.
			tok2 := token + "floor"
			d := normalize.NewDocument(c.Records[1], now)
			d.Description = tok2
			t0 = time.Now()
			if _, err := s.Client.Index(baseIdx).AddDocumentsWithContext(ctx, []normalize.Document{d}, nil); err != nil {
				b.Fatal(err)
			}
			waitSearchable(b, s.Client, baseIdx, tok2)
			floor = append(floor, time.Since(t0))
		}
		// Steady crawl: 20 catalogs a second, each with one changed record,
		// for 10 seconds; lag is Put to searchable (OnResult).
		const steady, every = 200, 50 * time.Millisecond
		sent := map[string]time.Time{}
		tick := time.NewTicker(every)
		for i := range steady {
			<-tick.C
			c := cats[(rounds+i)%len(cats)]
			c.Records = slices.Clone(c.Records)
			c.Records[2].Description = fmt.Sprintf("steady change %d %d", i, rand.Int())
			c.Records[2].ContentHash = recordHash(c.Records[2])
			t0 := time.Now()
			if err := ix.Put(ctx, c); err != nil {
				b.Fatal(err)
			}
			sent[c.Catalog] = t0
		}
		tick.Stop()
		if err := ix.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		var steadyLags []time.Duration
		doneMu.Lock()
		for c, t0 := range sent {
			steadyLags = append(steadyLags, done[c].Sub(t0)) // the last Put of c and its OnResult
		}
		doneMu.Unlock()

		if err := ix.Close(ctx); err != nil {
			b.Fatal(err)
		}

		b.ReportMetric(float64(n), "records")
		b.ReportMetric(baseRate, "meili-docs/s")
		b.ReportMetric(oursRate, "ingest-docs/s")
		b.ReportMetric(oursRate/baseRate, "ratio(target>=0.5)")
		b.ReportMetric(float64(percentile(lags, 0.5).Milliseconds()), "fresh-p50-ms")
		b.ReportMetric(float64(percentile(lags, 0.95).Milliseconds()), "fresh-p95-ms")
		b.ReportMetric(float64(percentile(floor, 0.5).Milliseconds()), "meili-floor-p50-ms")
		b.ReportMetric(float64(percentile(steadyLags, 0.5).Milliseconds()), "steady-p50-ms")
		b.ReportMetric(float64(percentile(steadyLags, 0.99).Milliseconds()), "steady-p99-ms")
		b.Logf("records=%d meili=%.0f docs/s ingest=%.0f docs/s ratio=%.2f freshness p50=%s p95=%s (meili floor p50=%s) steady crawl (20 catalogs/s) p50=%s p99=%s",
			n, baseRate, oursRate, oursRate/baseRate, percentile(lags, 0.5), percentile(lags, 0.95), percentile(floor, 0.5),
			percentile(steadyLags, 0.5), percentile(steadyLags, 0.99))
	}
}

// waitSearchable polls a search for token until it returns a hit.
func waitSearchable(b *testing.B, c meilisearch.ServiceManager, index, token string) {
	b.Helper()
	for {
		res, err := c.Index(index).SearchWithContext(b.Context(), token, &meilisearch.SearchRequest{Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Hits) > 0 {
			return
		}
		select {
		case <-b.Context().Done():
			b.Fatal(b.Context().Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
