package search

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	relset "github.com/agentfinder/agentfinder/fixtures/relevance"
	"github.com/agentfinder/agentfinder/ingest/embed"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/score"
)

// TestHubnessEval measures, on the vector query alone (each request's
// vector against each document's entry vector, no Meilisearch), a
// request-side hub penalty: a document's similarity to a request less λ
// times its mean similarity to a fixed sample of requests (all of them, or
// its k nearest: CSLS), for the set alone and with the realworld
// distractors (AGENTFINDER_EVAL=1; docs/MEASUREMENTS.md).
func TestHubnessEval(t *testing.T) {
	if os.Getenv("AGENTFINDER_EVAL") != "1" {
		t.Skip("relevance evaluation: set AGENTFINDER_EVAL=1")
	}
	dir := envOr("AGENTFINDER_RELEVANCE_DIR", "../../fixtures/relevance")
	w := embedWorld(t, dir)
	m, set, ids, docs := w.model, w.set, w.ids, w.docs
	inSet := map[string]bool{}
	for i, id := range ids {
		inSet[id] = w.inSet[i]
	}
	qs, err := relset.LoadQueries(filepath.Join(dir, "dev_queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	qv := embedAll(t, m, func(yield func(string) bool) {
		for _, q := range qs {
			if !yield(q.Text) {
				return
			}
		}
	})
	samples := map[string][][]float32{
		"small talk": embedAll(t, m, slices.Values(score.SmallTalk)),
		"terse(set)": embedAll(t, m, terseTexts(set, 200)),
	}
	for _, world := range []string{"set alone", "with distractors"} {
		keep := make([]bool, len(ids))
		for i, id := range ids {
			keep[i] = world != "set alone" || inSet[id]
		}
		terseAll := w.all
		if world == "set alone" {
			terseAll = set
		}
		samples["terse(world)"] = embedAll(t, m, terseTexts(terseAll, 200))
		for _, name := range []string{"small talk", "terse(set)", "terse(world)"} {
			for _, k := range []int{0, 10} {
				hub := make([]float64, len(ids))
				for i := range ids {
					hub[i] = meanSim(docs[i], samples[name], k)
				}
				for _, lambda := range []float64{0, 0.1, 0.25, 0.5, 1} {
					if lambda == 0 && (name != "small talk" || k != 0) {
						continue // the same as the first
					}
					lists := make([][]string, len(qs))
					for qi := range qs {
						type cand struct {
							id string
							s  float64
						}
						var cs []cand
						for i := range ids {
							if keep[i] {
								cs = append(cs, cand{ids[i], cosine(qv[qi], docs[i]) - lambda*hub[i]})
							}
						}
						slices.SortFunc(cs, func(a, b cand) int {
							if a.s > b.s {
								return -1
							}
							if a.s < b.s {
								return 1
							}
							return 0
						})
						for _, c := range cs[:min(10, len(cs))] {
							lists[qi] = append(lists[qi], c.id)
						}
					}
					report(world, fmt.Sprintf("%s k%d λ%.2f", name, k, lambda), qs, lists)
				}
			}
		}
	}
}

func terseTexts(results []normalize.CatalogResult, n int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, q := range terseRequests(results, n) {
			if !yield(q.Text) {
				return
			}
		}
	}
}

func embedAll(t *testing.T, m *embed.Model, seq func(func(string) bool)) [][]float32 {
	var texts []string
	seq(func(s string) bool { texts = append(texts, s); return true })
	v, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// meanSim is d's mean cosine with the sample (k 0) or with its k nearest.
func meanSim(d []float32, sample [][]float32, k int) float64 {
	sims := make([]float64, len(sample))
	for i, s := range sample {
		sims[i] = cosine(d, s)
	}
	if k > 0 {
		slices.Sort(sims)
		sims = sims[len(sims)-min(k, len(sims)):]
	}
	var sum float64
	for _, s := range sims {
		sum += s
	}
	return sum / float64(len(sims))
}

func cosine(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

// TestHubnessDump writes, for every document of the relevance set alone and
// of the set with the realworld distractors, how near it sits to the rest
// of its world: its mean cosine with its k nearest other documents (k 5,
// 10, 20) and its cosine with the world's mean vector, by entry vector, to
// the JSON file AGENTFINDER_HUB_DUMP names ({"hubness": {"set": {id:
// {"k5": ...}}, "all": ...}, "nearest": {"set": {id: [its 20 nearest]}}}). searchapi/score's TestDistractorMisses and TestFitWorlds
// read it (AGENTFINDER_SCORE_HUBS) to describe hubs and to measure a
// document-side hub correction (docs/MEASUREMENTS.md).
//
//	AGENTFINDER_HUB_DUMP=/tmp/hubs.json AGENTFINDER_MODEL_DIR=$PWD/.cache/model \
//	  go test -count=1 -run TestHubnessDump ./searchapi/search
func TestHubnessDump(t *testing.T) {
	out := os.Getenv("AGENTFINDER_HUB_DUMP")
	if out == "" {
		t.Skip("set AGENTFINDER_HUB_DUMP to a file to write")
	}
	w := embedWorld(t, envOr("AGENTFINDER_RELEVANCE_DIR", "../../fixtures/relevance"))
	m, ids, inSet, docs := w.model, w.ids, w.inSet, w.docs
	talk := embedAll(t, m, slices.Values(score.SmallTalk))
	dump := map[string]map[string]map[string]float64{}
	near := map[string]map[string][]string{}
	for _, world := range []string{"set", "all"} {
		var vs [][]float32
		var at []int
		for i := range ids {
			if world == "all" || inSet[i] {
				vs, at = append(vs, docs[i]), append(at, i)
			}
		}
		centre := meanVector(vs)
		dump[world] = map[string]map[string]float64{}
		near[world] = map[string][]string{}
		for j, i := range at {
			near[world][ids[i]] = nearest(docs[i], vs, at, ids, j, 20)
			if slices.Contains(near[world][ids[i]], ids[i]) || len(near[world][ids[i]]) != min(20, len(vs)-1) {
				t.Fatalf("%s: %s's nearest documents %v: itself, or not %d", world, ids[i], near[world][ids[i]], min(20, len(vs)-1))
			}
			others := slices.Delete(slices.Clone(vs), j, j+1)
			dump[world][ids[i]] = map[string]float64{
				"k5": meanSim(docs[i], others, 5), "k10": meanSim(docs[i], others, 10),
				"k20": meanSim(docs[i], others, 20), "centre": cosine(docs[i], centre),
				"talk": meanSim(docs[i], talk, 0), "talk5": meanSim(docs[i], talk, 5),
			}
		}
	}
	b, err := json.Marshal(struct {
		Hubness map[string]map[string]map[string]float64 `json:"hubness"`
		Nearest map[string]map[string][]string           `json:"nearest"`
	}{dump, near})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// nearest is the identifiers of the k documents of vs (at[i] indexes ids)
// nearest to d, itself (self) left out, nearest first.
func nearest(d []float32, vs [][]float32, at []int, ids []string, self, k int) []string {
	type sim struct {
		i int
		s float64
	}
	sims := make([]sim, 0, len(vs))
	for j, v := range vs {
		if j != self {
			sims = append(sims, sim{j, cosine(d, v)})
		}
	}
	slices.SortFunc(sims, func(a, b sim) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return 0
	})
	out := make([]string, 0, k)
	for _, s := range sims[:min(k, len(sims))] {
		out = append(out, ids[at[s.i]])
	}
	return out
}

// meanVector is the unit-length mean of vs.
func meanVector(vs [][]float32) []float32 {
	if len(vs) == 0 {
		return nil
	}
	sum := make([]float64, len(vs[0]))
	for _, v := range vs {
		for k, x := range v {
			sum[k] += float64(x)
		}
	}
	out := make([]float32, len(sum))
	for k, x := range sum {
		out[k] = float32(x)
	}
	return unitVector(out)
}

// evalWorld is the relevance set and the realworld distractors, each
// document's entry vector beside its identifier.
type evalWorld struct {
	model *embed.Model
	set   []normalize.CatalogResult // the relevance set alone
	all   []normalize.CatalogResult // the set, then the distractors
	ids   []string
	inSet []bool // the document is the set's, not a distractor
	docs  [][]float32
}

// embedWorld loads the model, the relevance set of dir and the realworld
// distractors, and embeds every document's entry text.
func embedWorld(t *testing.T, dir string) evalWorld {
	t.Helper()
	m := evalModel(t)
	set := relevanceCatalogs(t, dir)
	extra, err := relset.DistractorCatalogs(filepath.Join("..", "..", "fixtures", "realworld"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	w := evalWorld{model: m, set: set, all: append(slices.Clip(set), extra...)}
	var texts []string
	for i, res := range w.all {
		for _, r := range res.Records {
			w.ids = append(w.ids, r.Identifier)
			w.inSet = append(w.inSet, i < len(set))
			texts = append(texts, normalize.EntryText(r))
		}
	}
	if w.docs, err = m.Embed(context.Background(), texts); err != nil {
		t.Fatal(err)
	}
	return w
}
