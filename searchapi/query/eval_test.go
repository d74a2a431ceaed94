package query_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/fixtures/relevance"
	"github.com/agentfinder/agentfinder/ingest/embed"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/hybrid"
	"github.com/agentfinder/agentfinder/searchapi/query"
)

// The relevance evaluation indexes the catalogs of fixtures/relevance into a
// real Meilisearch with vectors from the USE-lite model, runs every request
// of dev_queries.jsonl through keyword-only and hybrid configurations and
// prints Recall@1/5/10, MRR@10 and p50 latency (query rewrite + query
// embedding + search). It is a tuning tool, not a unit test: it runs only
// with AGENTFINDER_EVAL=1, e.g.
//
//	AGENTFINDER_EVAL=1 bash .ci/with-meilisearch.sh go test -count=1 -run TestRelevanceEval -v ./searchapi/query
//
// AGENTFINDER_RELEVANCE_DIR (default ../../fixtures/relevance) and
// AGENTFINDER_MODEL_DIR (default ../../.cache/model) locate the inputs;
// AGENTFINDER_EVAL_SWEEP=1 adds the wider parameter sweep.

type devQuery struct {
	ID   string   `json:"id"`
	Text string   `json:"text"`
	Gold []string `json:"gold"`
}

// evalEntryText mirrors ingest.EntryText (name, description, capabilities,
// skill names, tags, one per line) without importing ingest.
func evalEntryText(rec normalize.Record) string {
	var parts []string
	for _, s := range []string{rec.DisplayName, rec.Description, strings.Join(rec.Capabilities, ", "),
		strings.Join(rec.SkillNames, ", "), strings.Join(rec.Tags, ", ")} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// loadRelevanceRecords reads the relevance catalogs from disk as a crawl
// would: one record per identifier (the last catalog to list it wins), in
// the order identifiers first appear.
func loadRelevanceRecords(t *testing.T, dir string) []normalize.Record {
	t.Helper()
	results, err := relevance.Catalogs(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]normalize.Record{}
	var order []string
	for _, res := range results {
		for _, r := range res.Records {
			if _, dup := byID[r.Identifier]; !dup {
				order = append(order, r.Identifier)
			}
			byID[r.Identifier] = r
		}
	}
	out := make([]normalize.Record, 0, len(order))
	for _, id := range order {
		out = append(out, byID[id])
	}
	return out
}

func loadDevQueries(t *testing.T, dir string) []devQuery {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "dev_queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var qs []devQuery
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var q devQuery
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	}
	return qs
}

// evalConfig is one way of querying the index.
type evalConfig struct {
	name      string
	rewrite   bool    // send query.Rewrite(text) instead of the text
	maxTerms  int     // cap on rewritten terms (0: all)
	strategy  string  // matchingStrategy ("" = Meilisearch default)
	ratio     float64 // semanticRatio; < 0 means keyword only (no hybrid)
	vecFrom   string  // "raw" or "rewrite": what the query vector embeds
	threshold float64 // rankingScoreThreshold (0 = none)
	// fusion "terms": one multi-search request with a vector-only query and
	// one single-term query per informative term (up to maxTerms); each
	// document's keyword score is the idf-weighted sum of its per-term
	// ranking scores, blended with the semantic score: kwWeight*kw +
	// (1-kwWeight)*semantic.
	fusion   string
	kwWeight float64
	noVector bool // fusion without the vector query (keyword only)
}

type evalResult struct {
	r1, r5, r10, mrr float64
	p50, p90         time.Duration
}

type searcher struct {
	url, key, index string
	docs            int
	client          *http.Client
	meili           meilisearch.ServiceManager
}

type hit struct {
	Identifier string  `json:"identifier"`
	Score      float64 `json:"_rankingScore"`
}

type searchResult struct {
	Hits               []hit  `json:"hits"`
	EstimatedTotalHits int    `json:"estimatedTotalHits"`
	Message            string `json:"message"`
}

func (s *searcher) post(ctx context.Context, path string, body any, out any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if s.key != "" {
		req.Header.Set("Authorization", "Bearer "+s.key)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e bytes.Buffer
		_, _ = e.ReadFrom(resp.Body)
		return fmt.Errorf("%s: %s: %s", path, resp.Status, e.String())
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func (s *searcher) search(ctx context.Context, body map[string]any) ([]string, error) {
	var out searchResult
	if err := s.post(ctx, "/indexes/"+s.index+"/search", body, &out); err != nil {
		return nil, err
	}
	ids := make([]string, len(out.Hits))
	for i, h := range out.Hits {
		ids[i] = h.Identifier
	}
	return ids, nil
}

// fused runs the "terms" fusion through searchapi/hybrid, the code
// searchapi uses.
func (s *searcher) fused(ctx context.Context, text string, terms []string, vec []float32, c evalConfig) ([]string, error) {
	res, err := hybrid.Search(ctx, s.meili, hybrid.Request{
		Index: s.index, Text: text, Terms: terms, Vector: vec, Limit: 10, KeywordWeight: c.kwWeight,
	})
	if err != nil {
		return nil, err
	}
	if res.Total != s.docs {
		return nil, fmt.Errorf("hybrid counts %d documents, index holds %d", res.Total, s.docs)
	}
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.ID
	}
	return ids, nil
}

func (s *searcher) run(t *testing.T, m *embed.Model, qs []devQuery, vecs map[string][]float32, embedCost map[string]time.Duration, c evalConfig) evalResult {
	t.Helper()
	var res evalResult
	lat := make([]time.Duration, 0, len(qs))
	for _, q := range qs {
		start := time.Now()
		text := q.Text
		a := query.Analyze(q.Text)
		terms := a.Ranked
		if c.fusion != "" && c.maxTerms == 0 {
			terms = a.SearchTerms()
		}
		if c.maxTerms > 0 && len(terms) > c.maxTerms {
			terms = terms[:c.maxTerms]
		}
		if c.rewrite {
			text = strings.Join(terms, " ")
			if text == "" {
				text = a.Query()
			}
		}
		var vec []float32
		var extra time.Duration
		wantVec := c.ratio >= 0
		if c.fusion != "" {
			wantVec = !c.noVector
		}
		if wantVec {
			key := q.Text
			if c.vecFrom == "rewrite" {
				key = text
			}
			v, ok := vecs[key]
			if !ok {
				t0 := time.Now()
				v = m.EmbedOne(key)
				embedCost[key] = time.Since(t0)
				vecs[key] = v
			}
			extra = embedCost[key] // the uncached cost, counted every time
			vec = v
		}
		var ids []string
		var err error
		if c.fusion == "terms" {
			ids, err = s.fused(context.Background(), q.Text, terms, vec, c)
		} else {
			body := map[string]any{"q": text, "limit": 10, "attributesToRetrieve": []string{"identifier"}}
			if c.strategy != "" {
				body["matchingStrategy"] = c.strategy
			}
			if c.threshold > 0 {
				body["rankingScoreThreshold"] = c.threshold
			}
			if vec != nil {
				body["vector"] = vec
				body["hybrid"] = map[string]any{"embedder": normalize.EmbedderName, "semanticRatio": c.ratio}
			}
			ids, err = s.search(context.Background(), body)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		lat = append(lat, time.Since(start)+extra)
		rank := 0
		for i, id := range ids {
			if slices.Contains(q.Gold, id) {
				rank = i + 1
				break
			}
		}
		if rank == 1 {
			res.r1++
		}
		if rank >= 1 && rank <= 5 {
			res.r5++
		}
		if rank >= 1 && rank <= 10 {
			res.r10++
			res.mrr += 1 / float64(rank)
		}
	}
	n := float64(len(qs))
	res.r1, res.r5, res.r10, res.mrr = res.r1/n, res.r5/n, res.r10/n, res.mrr/n
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	res.p50 = lat[len(lat)/2]
	res.p90 = lat[len(lat)*9/10]
	return res
}

// Vector text choices for documents.
var vectorVariants = map[string]func(normalize.Record) []string{
	// entry: what ingest embeds (entry text, representative queries, examples).
	"entry": func(r normalize.Record) []string {
		return append(append([]string{evalEntryText(r)}, r.RepresentativeQueries...), r.Examples...)
	},
	// entry+sentences: also one vector per description sentence, so a request
	// can match one thing the entry says.
	"entry+sentences": func(r normalize.Record) []string {
		out := append(append([]string{evalEntryText(r)}, r.RepresentativeQueries...), r.Examples...)
		sents := splitSentences(r.Description)
		if len(sents) > 1 {
			out = append(out, sents...)
		}
		return out
	},
}

// splitSentences splits prose at ". ", "! " and "? ".
func splitSentences(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && (i+1 == len(s) || s[i+1] == ' ') {
			if t := strings.TrimSpace(s[start : i+1]); len(t) > 3 {
				out = append(out, t)
			}
			start = i + 1
		}
	}
	if t := strings.TrimSpace(s[start:]); len(t) > 3 {
		out = append(out, t)
	}
	return out
}

var (
	attrOrders = map[string][]string{
		"name>caps>desc": {"displayName", "identifier", "capabilities", "skillNames", "tags", "skills",
			"representativeQueries", "examples", "description", "publisher", "host.displayName"},
		"desc>name": {"description", "displayName", "capabilities", "skillNames", "tags", "representativeQueries", "examples"},
	}
	rankingSets = map[string][]string{
		"meili-default":       {"words", "typo", "proximity", "attribute", "sort", "exactness"},
		"attribute<proximity": {"words", "typo", "attribute", "proximity", "sort", "exactness"},
	}
)

// buildIndex creates an index with the given settings and the records with
// vectors of the given variant.
func buildIndex(t *testing.T, srv *meilitest.Server, m *embed.Model, recs []normalize.Record, variant string, attrs, rules []string) *searcher {
	t.Helper()
	name := meilitest.NewIndexName("relevance")
	task, err := srv.Client.CreateIndex(&meilisearch.IndexConfig{Uid: name, PrimaryKey: "id"})
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(srv.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if task, err := srv.Client.DeleteIndex(name); err == nil {
			_ = meilitest.Wait(srv.Client, task.TaskUID)
		}
	})
	task, err = srv.Client.Index(name).UpdateSettings(&meilisearch.Settings{
		SearchableAttributes: attrs,
		RankingRules:         rules,
		Embedders:            map[string]meilisearch.Embedder{normalize.EmbedderName: {Source: "userProvided", Dimensions: 512}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(srv.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	docs := make([]normalize.Document, len(recs))
	var texts []string
	var owner []int
	for i, r := range recs {
		docs[i] = normalize.NewDocument(r, time.Now())
		for _, s := range vectorVariants[variant](r) {
			if strings.TrimSpace(s) != "" {
				texts = append(texts, s)
				owner = append(owner, i)
			}
		}
	}
	vs, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	per := make([][][]float32, len(docs))
	for k, v := range vs {
		per[owner[k]] = append(per[owner[k]], v)
	}
	for i := range docs {
		if len(per[i]) == 0 {
			docs[i].Vectors = map[string]any{normalize.EmbedderName: nil}
		} else {
			docs[i].Vectors = map[string]any{normalize.EmbedderName: per[i]}
		}
	}
	t.Logf("%s: embedded %d texts for %d records in %v", variant, len(texts), len(docs), time.Since(t0).Round(time.Millisecond))
	task, err = srv.Client.Index(name).AddDocuments(docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(srv.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	return &searcher{url: srv.URL, key: srv.APIKey, index: name, docs: len(docs), meili: srv.Client,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}}}
}

func TestRelevanceEval(t *testing.T) {
	if os.Getenv("AGENTFINDER_EVAL") != "1" {
		t.Skip("relevance evaluation: set AGENTFINDER_EVAL=1")
	}
	relDir := envOr("AGENTFINDER_RELEVANCE_DIR", "../../fixtures/relevance")
	modelDir := envOr("AGENTFINDER_MODEL_DIR", "../../.cache/model")
	m, err := embed.Load(modelDir)
	if err != nil {
		t.Fatalf("load model: %v", err)
	}
	recs := loadRelevanceRecords(t, relDir)
	qs := loadDevQueries(t, relDir)
	t.Logf("%d records, %d queries", len(recs), len(qs))
	srv := meilitest.Connect(t)

	vecs := map[string][]float32{}
	cost := map[string]time.Duration{}
	fmt.Printf("%-34s %-44s %9s %9s %9s %11s %10s %10s\n", "index", "query", "R@1", "R@5", "R@10", "MRR@10", "p50", "p90")
	report := func(sr *searcher, label string, c evalConfig) {
		r := sr.run(t, m, qs, vecs, cost, c)
		fmt.Printf("%-34s %-44s R@1 %.3f R@5 %.3f R@10 %.3f MRR@10 %.3f p50 %5.1fms p90 %5.1fms\n",
			label, c.name, r.r1, r.r5, r.r10, r.mrr, ms(r.p50), ms(r.p90))
	}

	main := buildIndex(t, srv, m, recs, "entry", attrOrders["name>caps>desc"], rankingSets["attribute<proximity"])
	// Warm up connections, Meilisearch and the query vectors' first-use cost
	// is still counted (cost map holds the uncached embedding time).
	main.run(t, m, qs[:20], vecs, cost, evalConfig{name: "warm-up", ratio: -1})
	label := "entry name>caps>desc attr<prox"
	configs := []evalConfig{
		{name: "raw q, default strategy", ratio: -1},
		{name: "raw q, frequency", strategy: "frequency", ratio: -1},
		{name: "rewrite, last", rewrite: true, strategy: "last", ratio: -1},
		{name: "rewrite, frequency", rewrite: true, strategy: "frequency", ratio: -1},
		{name: "rewrite top10, frequency", rewrite: true, maxTerms: 10, strategy: "frequency", ratio: -1},
		{name: "vector only (raw text)", rewrite: true, strategy: "frequency", ratio: 1, vecFrom: "raw"},
		{name: "vector only (rewritten text)", rewrite: true, strategy: "frequency", ratio: 1, vecFrom: "rewrite"},
	}
	for _, ratio := range []float64{0.3, 0.5, 0.7, 0.9} {
		configs = append(configs, evalConfig{name: fmt.Sprintf("hybrid %.1f rewrite+frequency", ratio),
			rewrite: true, strategy: "frequency", ratio: ratio, vecFrom: "raw"})
	}
	configs = append(configs, evalConfig{name: "hybrid 0.5 rewrite+last", rewrite: true, strategy: "last", ratio: 0.5, vecFrom: "raw"})
	configs = append(configs,
		evalConfig{name: "term fusion keyword only", fusion: "terms", noVector: true},
		evalConfig{name: "term fusion keyword only, 8 terms", fusion: "terms", noVector: true, maxTerms: 8},
	)
	for _, w := range []float64{0.1, 0.2, 0.3} {
		configs = append(configs, evalConfig{name: fmt.Sprintf("term fusion kw %.1f", w),
			fusion: "terms", kwWeight: w, vecFrom: "raw"})
	}
	configs = append(configs,
		evalConfig{name: "term fusion kw 0.2, vec rewrite", fusion: "terms", rewrite: true, kwWeight: 0.2, vecFrom: "rewrite"},
	)
	for _, c := range configs {
		report(main, label, c)
	}
	var costs []time.Duration
	for _, q := range qs {
		costs = append(costs, cost[q.Text])
	}
	sort.Slice(costs, func(i, j int) bool { return costs[i] < costs[j] })
	fmt.Printf("query embedding (raw text, uncached, included above): p50 %.1fms p90 %.1fms\n", ms(costs[len(costs)/2]), ms(costs[len(costs)*9/10]))
	if os.Getenv("AGENTFINDER_EVAL_SENTENCES") == "1" {
		sent := buildIndex(t, srv, m, recs, "entry+sentences", attrOrders["name>caps>desc"], rankingSets["attribute<proximity"])
		for _, c := range []evalConfig{
			{name: "vector only (raw text)", rewrite: true, strategy: "frequency", ratio: 1, vecFrom: "raw"},
			{name: "term fusion kw 0.2", fusion: "terms", kwWeight: 0.2, vecFrom: "raw"},
		} {
			report(sent, "entry+sentences name>caps>desc", c)
		}
	}
	if os.Getenv("AGENTFINDER_EVAL_SWEEP") == "1" {
		for _, th := range []float64{0.1, 0.2, 0.3} {
			report(main, label, evalConfig{name: fmt.Sprintf("hybrid 0.5 freq, threshold %.1f", th),
				rewrite: true, strategy: "frequency", ratio: 0.5, vecFrom: "raw", threshold: th})
		}
		for _, maxTerms := range []int{6, 8, 10} {
			report(main, label, evalConfig{name: fmt.Sprintf("term fusion kw 0.2, %d terms", maxTerms),
				fusion: "terms", kwWeight: 0.2, maxTerms: maxTerms, vecFrom: "raw"})
		}
		for _, w := range []float64{0.15, 0.25} {
			report(main, label, evalConfig{name: fmt.Sprintf("term fusion kw %.2f", w),
				fusion: "terms", kwWeight: w, vecFrom: "raw"})
		}
		for an, attrs := range attrOrders {
			for rn, rules := range rankingSets {
				sr := buildIndex(t, srv, m, recs, "entry", attrs, rules)
				for _, c := range []evalConfig{
					{name: "rewrite, frequency", rewrite: true, strategy: "frequency", ratio: -1},
					{name: "hybrid 0.5 rewrite+frequency", rewrite: true, strategy: "frequency", ratio: 0.5, vecFrom: "raw"},
					{name: "term fusion kw 0.2", fusion: "terms", kwWeight: 0.2, vecFrom: "raw"},
				} {
					report(sr, "entry "+an+" "+rn, c)
				}
			}
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
