package search

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	relset "github.com/agentfinder/agentfinder/fixtures/relevance"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/score"
)

// TestRankEval is the in-process side of `make eval`'s distractor run
// (AGENTFINDER_EVAL=1): it indexes the relevance set alone and the set
// with the realworld distractors (fixtures/realworld, as
// relset.DistractorCatalogs publishes them), sends every dev request
// through localSearch as POST /search does, with the default cut-off and
// with minScore 0, and prints Recall@1, Recall@10, precision@5 and the
// documents in the top 10 of the most requests for each. It is how the
// ranking choices of docs/MEASUREMENTS.md were measured; it takes minutes
// (embedding about 800 entries twice), so `make test` skips it.
//
//	AGENTFINDER_EVAL=1 AGENTFINDER_MODEL_DIR=$PWD/.cache/model \
//	  bash .ci/with-meilisearch.sh go test -count=1 -run TestRankEval -v ./searchapi/search
func TestRankEval(t *testing.T) {
	if os.Getenv("AGENTFINDER_EVAL") != "1" {
		t.Skip("relevance evaluation: set AGENTFINDER_EVAL=1")
	}
	worlds := []struct {
		name  string
		extra bool
	}{{"set alone", false}, {"with distractors", true}}
	for _, w := range worlds {
		var extra []normalize.CatalogResult
		if w.extra {
			var err error
			if extra, err = relset.DistractorCatalogs(filepath.Join("..", "..", "fixtures", "realworld"), time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		rs := newRelevanceServer(t, extra...)
		qs, err := relset.LoadQueries(filepath.Join(rs.dir, "dev_queries.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		// Every request once with minScore 0 (the ranking itself, with
		// scores), then per-result rules applied to those answers: the
		// per-request cut-off alone, the fixed share of the best this rule
		// replaced, score.Model.Keep at several values of Within; then the
		// served default.
		zero := 0
		lists := make([][]string, len(qs))
		scores := make([][]int, len(qs))
		for i, q := range qs {
			page, err := rs.eng.localSearch(context.Background(), &Query{Text: q.Text, PageSize: 10, MinScore: &zero}, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range page.Hits {
				lists[i] = append(lists[i], h.Identifier)
				scores[i] = append(scores[i], int(h.Score))
			}
		}
		report(w.name, "minScore 0", qs, lists)
		dumpRanking(t, w.name, qs, lists, scores)
		cutoff := score.Default.MinScore
		type rule struct {
			label string
			keep  func(p, best int) bool
		}
		rules := []rule{{"cut-off alone", func(p, _ int) bool { return p >= cutoff }}}
		for _, f := range []float64{0.8, 0.9} {
			rules = append(rules, rule{fmt.Sprintf("fixed %.2f", f), func(p, best int) bool { return p >= cutoff && float64(p) >= f*float64(best) }})
		}
		for _, within := range []float64{0, 0.2, 0.3, 0.4, 0.5} {
			m := score.Default
			m.Within = within
			rules = append(rules, rule{fmt.Sprintf("within %.2f", within), func(p, best int) bool { return m.Keep(p, best, cutoff) }})
		}
		for _, r := range rules {
			cut := make([][]string, len(qs))
			for i := range qs {
				best := -1
				for _, p := range scores[i] {
					best = max(best, p)
				}
				for k, p := range scores[i] {
					if r.keep(p, best) {
						cut[i] = append(cut[i], lists[i][k])
					}
				}
			}
			report(w.name, r.label, qs, cut)
		}
		for i, q := range qs {
			page, err := rs.eng.localSearch(context.Background(), &Query{Text: q.Text, PageSize: 10}, 0)
			if err != nil {
				t.Fatal(err)
			}
			lists[i] = lists[i][:0]
			for _, h := range page.Hits {
				lists[i] = append(lists[i], h.Identifier)
			}
		}
		report(w.name, "served default", qs, lists)
	}
}

// report prints Recall@1, Recall@10, precision@5 and the three documents
// in the top 10 of the most requests of one configuration's answers.
func report(world, label string, qs []relset.Query, lists [][]string) {
	var r1, r10, p5 float64
	for i, q := range qs {
		s := relset.Score(lists[i], q.Gold)
		r1, r10, p5 = r1+s.Recall1, r10+s.Recall10, p5+s.Precision5
	}
	n := float64(len(qs))
	fmt.Printf("rank eval %-16s %-15s R@1 %.3f R@10 %.3f P@5 %.3f", world, label, r1/n, r10/n, p5/n)
	for _, h := range relset.Hubs(lists, 10, 3) {
		fmt.Printf("  %s %d (%.3f)", h.ID, h.Requests, float64(h.Requests)/n)
	}
	fmt.Println()
}

// dumpRanking appends one world's minScore-0 answers (identifiers and
// scores, best first, with each request's gold) as JSON lines to the file
// AGENTFINDER_RANK_DUMP names, when set: the cut-off rules of
// docs/MEASUREMENTS.md were compared offline on it.
func dumpRanking(t *testing.T, world string, qs []relset.Query, lists [][]string, scores [][]int) {
	path := os.Getenv("AGENTFINDER_RANK_DUMP")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for i, q := range qs {
		line := struct {
			World  string   `json:"world"`
			Text   string   `json:"text"`
			Gold   []string `json:"gold"`
			IDs    []string `json:"ids"`
			Scores []int    `json:"scores"`
		}{world, q.Text, q.Gold, lists[i], scores[i]}
		if err := enc.Encode(line); err != nil {
			t.Fatal(err)
		}
	}
}
