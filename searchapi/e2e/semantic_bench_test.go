package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/hybrid"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// BenchmarkSemanticLimit measures the semantic sub-query of POST /search
// alone (the vector-only query searchapi/hybrid sends first: the request's
// vector, semanticRatio 1, the engine's filter, only the identifier and
// the ranking score retrieved) at several limits, on the dev relevance set
// with its distractors (as BenchmarkSearchCost indexes it, about 800
// records) and on a larger index of AGENTFINDER_BENCH_RECORDS records
// (default 30,000; 0 skips it) whose vectors mix two of the first index's
// stored vectors each (a record made of two real ones, as the tool
// benchmark's servers recombine the registry seed's texts; embedding
// 30,000 texts would take the model most of an hour on a busy machine).
//
// For each Meilisearch vector store (arroy, the default, and hannoy, the
// experimental vectorStore of Meilisearch 1.21, when the server offers
// it) and each limit it prints the p50 and p90 latency of the sub-query
// (limits taken in turn, rounds alternating their order) and the ANN's
// recall against an exact scan made here over the same stored vectors: of
// each request's true 10 nearest documents (a document's distance is its
// closest vector's), how many the sub-query returned at all (the list
// fusion reads) and how many in its first 10. Requests: the first
// AGENTFINDER_BENCH_QUERIES dev requests (default 100).
func BenchmarkSemanticLimit(b *testing.B) {
	w := newCostWorld(b)
	nq := min(envInt("AGENTFINDER_BENCH_QUERIES", 100), len(w.texts))
	vecs := make([][]float32, nq)
	for i := range nq {
		vecs[i] = w.model.EmbedOne(w.texts[i])
	}
	eng, err := search.New(search.Config{Index: w.name, Meili: w.ms.Client, PublicURL: "http://bench.example", Embedder: w.model}, nil)
	if err != nil {
		b.Fatal(err)
	}
	flt := eng.Filter(w.query(b, 0)).Filter()
	small := readStored(b, w.ms, w.name)
	worlds := []semWorld{{name: "dev set + distractors", docs: small}}
	if n := envInt("AGENTFINDER_BENCH_RECORDS", 30000); n > 0 {
		worlds = append(worlds, semWorld{name: "mixed", docs: mixedDocs(small, n)})
	}
	stores := []string{"stable"}
	if enableVectorStore(b, w.ms) {
		stores = append(stores, "experimental")
	}
	shapes := []semShape{{limit: 10}, {limit: 50}, {limit: 100}, {limit: 200}, {limit: 300}, {limit: 1000},
		{limit: 300, noScore: true}, {limit: 300, noFilter: true}}
	for _, world := range worlds {
		truth := exactNearest(world.docs, vecs, 10)
		for _, store := range stores {
			t0 := time.Now()
			name := loadStore(b, w.ms, world.docs, store)
			b.Logf("%s, %d records, vector store %s: indexed in %s", world.name, len(world.docs), store, time.Since(t0).Round(time.Millisecond))
			r := measureLimits(b, w.ms, name, flt, vecs, truth, shapes)
			for i, sh := range shapes {
				m := r[i]
				b.Logf("  %-28s p50 %7.2f ms p90 %7.2f ms | true top 10 returned %.3f, in the first 10 %.3f",
					sh, ms2(pct(m.lat, 50)), ms2(pct(m.lat, 90)), m.inList, m.inTop)
			}
		}
	}
}

// semWorld is a set of documents with their stored vectors.
type semWorld struct {
	name string
	docs []storedDoc
}

// storedDoc is a document as read back from Meilisearch (every field) and
// its vectors for normalize.EmbedderName.
type storedDoc struct {
	raw  map[string]json.RawMessage
	id   string
	vecs [][]float32
}

// readStored reads every document of index with its vectors.
func readStored(b *testing.B, ms *meilitest.Server, index string) []storedDoc {
	b.Helper()
	var out []storedDoc
	for offset := int64(0); ; offset += 500 {
		var page meilisearch.DocumentsResult
		if err := ms.Client.Index(index).GetDocuments(&meilisearch.DocumentsQuery{Offset: offset, Limit: 500, RetrieveVectors: true}, &page); err != nil {
			b.Fatal(err)
		}
		for _, h := range page.Results {
			d := storedDoc{raw: map[string]json.RawMessage(h)}
			if err := json.Unmarshal(h[normalize.FieldIdentifier], &d.id); err != nil {
				b.Fatalf("document without an identifier: %v", err)
			}
			v, err := hybrid.Vectors(h, "")
			if err != nil {
				b.Fatal(err)
			}
			d.vecs = v
			out = append(out, d)
		}
		if len(page.Results) < 500 {
			return out
		}
	}
}

// mixedDocs makes n documents from docs: document i copies a document
// with vectors (seeded choice) under an identifier of its own, and mixes
// each of its vectors with the entry vector of another one, at a weight
// between 0.5 and 0.8 for its own.
func mixedDocs(docs []storedDoc, n int) []storedDoc {
	var with []storedDoc
	for _, d := range docs {
		if len(d.vecs) > 0 {
			with = append(with, d)
		}
	}
	rng := rand.New(rand.NewPCG(11, 12))
	out := make([]storedDoc, 0, n)
	for i := range n {
		src, other := with[rng.IntN(len(with))], with[rng.IntN(len(with))]
		a := 0.5 + 0.3*rng.Float64()
		d := storedDoc{raw: maps.Clone(src.raw), id: fmt.Sprintf("urn:ai:mixed.example:agent:m%06d", i)}
		for _, v := range src.vecs {
			d.vecs = append(d.vecs, unit(mix(v, other.vecs[0], a)))
		}
		idJSON, _ := json.Marshal(d.id)
		d.raw[normalize.FieldIdentifier] = idJSON
		d.raw[normalize.FieldID], _ = json.Marshal(fmt.Sprintf("m%06d", i))
		out = append(out, d)
	}
	return out
}

func mix(x, y []float32, a float64) []float32 {
	out := make([]float32, len(x))
	for i := range x {
		out[i] = float32(a*float64(x[i]) + (1-a)*float64(y[i]))
	}
	return out
}

func unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	n := math.Sqrt(s)
	if n == 0 {
		return v
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

// exactNearest returns, for each query vector, the identifiers of the k
// documents whose closest vector is nearest by cosine (ties by identifier).
func exactNearest(docs []storedDoc, queries [][]float32, k int) [][]string {
	out := make([][]string, len(queries))
	type sc struct {
		id string
		c  float64
	}
	for qi, q := range queries {
		all := make([]sc, 0, len(docs))
		for _, d := range docs {
			if i, c := hybrid.BestMatch(q, d.vecs); i >= 0 {
				all = append(all, sc{d.id, c})
			}
		}
		sort.Slice(all, func(i, j int) bool {
			if all[i].c != all[j].c {
				return all[i].c > all[j].c
			}
			return all[i].id < all[j].id
		})
		for _, s := range all[:min(k, len(all))] {
			out[qi] = append(out[qi], s.id)
		}
	}
	return out
}

// meiliRaw sends one request to Meilisearch's HTTP API (meili.Client.Do).
func meiliRaw(ms *meilitest.Server, method, path string, body, out any) error {
	return meili.New(ms.URL, ms.APIKey).Do(context.Background(), method, path, body, out)
}

// enableVectorStore turns on the vectorStoreSetting experimental feature
// (Meilisearch 1.21; never the Enterprise ones), restoring it when the
// benchmark ends, and reports whether the server has it.
func enableVectorStore(b *testing.B, ms *meilitest.Server) bool {
	b.Helper()
	var cur map[string]any
	if err := meiliRaw(ms, http.MethodGet, "/experimental-features", nil, &cur); err != nil {
		b.Fatal(err)
	}
	was, ok := cur["vectorStoreSetting"].(bool)
	if !ok {
		b.Logf("this Meilisearch has no vectorStoreSetting feature: arroy only")
		return false
	}
	if err := meiliRaw(ms, http.MethodPatch, "/experimental-features", map[string]any{"vectorStoreSetting": true}, nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = meiliRaw(ms, http.MethodPatch, "/experimental-features", map[string]any{"vectorStoreSetting": was}, nil)
	})
	return true
}

// loadStore creates an index with the search settings, the embedder and
// the given vectorStore ("stable": the default), writes docs and returns
// its name (deleted when the benchmark ends).
func loadStore(b *testing.B, ms *meilitest.Server, docs []storedDoc, store string) string {
	b.Helper()
	_, name := meilitest.Index(b, "bench_sem")
	settings := semSettings(len(docs[0].vecs[0]))
	if store != "stable" {
		settings["vectorStore"] = store
	}
	var task meilisearch.TaskInfo
	if err := meiliRaw(ms, http.MethodPatch, "/indexes/"+name+"/settings", settings, &task); err != nil {
		b.Fatal(err)
	}
	if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
		b.Fatal(err)
	}
	const batch = 5000
	for i := 0; i < len(docs); i += batch {
		part := make([]map[string]any, 0, batch)
		for _, d := range docs[i:min(len(docs), i+batch)] {
			m := make(map[string]any, len(d.raw))
			for k, v := range d.raw {
				m[k] = v
			}
			m["_vectors"] = map[string]any{normalize.EmbedderName: map[string]any{"embeddings": d.vecs, "regenerate": false}}
			part = append(part, m)
		}
		t, err := ms.Client.Index(name).AddDocuments(part, &meilisearch.DocumentOptions{PrimaryKey: ptr(normalize.FieldID)})
		if err != nil {
			b.Fatal(err)
		}
		if err := meilitest.Wait(ms.Client, t.TaskUID); err != nil {
			b.Fatal(err)
		}
	}
	return name
}

// semSettings is the index settings serve's ingest writes that the
// semantic sub-query reads: filterable fields and the embedder.
func semSettings(dims int) map[string]any {
	return map[string]any{
		"filterableAttributes": normalize.FilterableFields(),
		"embedders":            map[string]any{normalize.EmbedderName: map[string]any{"source": "userProvided", "dimensions": dims}},
	}
}

// semShape is one form of the semantic sub-query: its limit, and whether
// it leaves out the ranking score or the engine's filter (to see what the
// cost of a longer list is made of).
type semShape struct {
	limit             int
	noScore, noFilter bool
}

func (s semShape) String() string {
	out := fmt.Sprintf("limit %d", s.limit)
	if s.noScore {
		out += ", no _rankingScore"
	}
	if s.noFilter {
		out += ", no filter"
	}
	return out
}

// limitStats is what measureLimits saw for one shape.
type limitStats struct {
	lat           []time.Duration
	inList, inTop float64
}

// measureLimits sends each query vector's semantic sub-query in every
// shape, rounds alternating the order of the shapes, and compares the
// answers with truth.
func measureLimits(b *testing.B, ms *meilitest.Server, index string, flt any, vecs [][]float32, truth [][]string, shapes []semShape) []*limitStats {
	b.Helper()
	ctx := context.Background()
	idx := ms.Client.Index(index)
	out := make([]*limitStats, len(shapes))
	order := make([]int, len(shapes))
	for i := range shapes {
		out[i], order[i] = &limitStats{}, i
	}
	const rounds = 3
	for round := range rounds {
		slices.Reverse(order)
		for _, k := range order {
			st, sh := out[k], shapes[k]
			for qi, v := range vecs {
				req := &meilisearch.SearchRequest{Filter: flt, Limit: int64(sh.limit), AttributesToRetrieve: []string{normalize.FieldIdentifier},
					ShowRankingScore: !sh.noScore, Vector: v, Hybrid: &meilisearch.SearchRequestHybrid{Embedder: normalize.EmbedderName, SemanticRatio: 1}}
				if sh.noFilter {
					req.Filter = nil
				}
				t := time.Now()
				resp, err := idx.SearchWithContext(ctx, "", req)
				st.lat = append(st.lat, time.Since(t))
				if err != nil {
					b.Fatal(err)
				}
				if round > 0 {
					continue
				}
				got := make([]string, 0, len(resp.Hits))
				for _, h := range resp.Hits {
					var id string
					_ = json.Unmarshal(h[normalize.FieldIdentifier], &id)
					got = append(got, id)
				}
				for _, id := range truth[qi] {
					if k := slices.Index(got, id); k >= 0 {
						st.inList++
						if k < 10 {
							st.inTop++
						}
					}
				}
			}
		}
	}
	for _, st := range out {
		n := float64(len(vecs) * 10)
		st.inList /= n
		st.inTop /= n
	}
	return out
}
