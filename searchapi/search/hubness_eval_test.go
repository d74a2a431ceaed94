package search

import (
	"context"
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
	ctx := context.Background()
	dir := envOr("AGENTFINDER_RELEVANCE_DIR", "../../fixtures/relevance")
	m, err := embed.Load(envOr("AGENTFINDER_MODEL_DIR", "../../.cache/model"))
	if err != nil {
		t.Fatal(err)
	}
	set := relevanceCatalogs(t, dir)
	extra, err := relset.DistractorCatalogs(filepath.Join("..", "..", "fixtures", "realworld"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var texts []string
	inSet := map[string]bool{}
	for i, res := range append(slices.Clip(set), extra...) {
		for _, r := range res.Records {
			ids = append(ids, r.Identifier)
			texts = append(texts, normalize.EntryText(r))
			if i < len(set) {
				inSet[r.Identifier] = true
			}
		}
	}
	docs, err := m.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
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
		"small talk": embedAll(t, m, slicesValues(score.SmallTalk)),
		"terse(set)": embedAll(t, m, terseTexts(set, 200)),
	}
	for _, world := range []string{"set alone", "with distractors"} {
		keep := make([]bool, len(ids))
		for i, id := range ids {
			keep[i] = world != "set alone" || inSet[id]
		}
		terseAll := append(slices.Clip(set), extra...)
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

func slicesValues(s []string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, v := range s {
			if !yield(v) {
				return
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
