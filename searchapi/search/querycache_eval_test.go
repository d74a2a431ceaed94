package search

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	relset "github.com/agentfinder/agentfinder/fixtures/relevance"
)

// TestQueryCacheSameAnswers runs every dev request of the relevance set,
// indexed with its distractors, through an engine without the query cache
// and twice through one with it (a miss, then a hit), and requires the
// same results with the same scores each time: the cache must not move
// relevance. AGENTFINDER_EVAL=1 runs it (it embeds the set).
func TestQueryCacheSameAnswers(t *testing.T) {
	if os.Getenv("AGENTFINDER_EVAL") != "1" {
		t.Skip("relevance evaluation: set AGENTFINDER_EVAL=1")
	}
	extra, err := relset.DistractorCatalogs(filepath.Join("..", "..", "fixtures", "realworld"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rs := newRelevanceServer(t, extra...)
	cfg := rs.eng.cfg
	cfg.QueryCacheSize = -1
	uncached, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	answer := func(e *Engine, text string) []string {
		ans, err := e.Search(ctx, &Query{Text: text, PageSize: 10, MinScore: new(int)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range ans.Hits {
			out = append(out, h.Identifier+" "+string(h.Entry["score"]))
		}
		return out
	}
	qs := readDumpQueries(t, filepath.Join(rs.dir, "dev_queries.jsonl"), "dev")
	for _, q := range qs {
		want := answer(uncached, q.Text)
		if len(want) == 0 {
			t.Fatalf("%q: no results", q.Text)
		}
		for _, pass := range []string{"miss", "hit"} {
			if got := answer(rs.eng, q.Text); !slices.Equal(got, want) {
				t.Errorf("%q, cache %s:\n got %v\nwant %v", q.Text, pass, got, want)
			}
		}
	}
	t.Logf("%d requests, each answered alike without the cache, on a miss and on a hit", len(qs))
}
