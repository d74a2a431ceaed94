package search

import (
	"context"
	"math"
	"testing"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/normalize"
)

// rainEmbedder puts the words of rain on one axis and everything on a
// small constant other: texts without rain words all share one direction
// (the small-talk phrases among them), a rainy one lies far from it.
type rainEmbedder struct{}

func (rainEmbedder) Dimensions() int { return 2 }

func (rainEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = rainVector(t)
	}
	return out, nil
}

func rainVector(text string) []float32 {
	v := []float32{0, 0.05}
	for _, w := range normalize.Words(text) {
		if w == "rain" || w == "weather" || w == "umbrella" {
			v[0]++
		}
	}
	return v
}

// TestSmallTalkSimilarity: the small-talk phrases are embedded with the
// first query vector; a request without topic words lies on their axis, a
// topical one far from it; no vector, no similarity. No request reaches
// Meilisearch (the client points nowhere).
func TestSmallTalkSimilarity(t *testing.T) {
	e, err := New(Config{Index: "unused", Meili: meili.New("http://127.0.0.1:1", ""), PublicURL: "https://finder.test.example",
		Embedder: rainEmbedder{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.smallTalk(rainVector("hello")); got != 0 {
		t.Errorf("before any query vector: %.3f, want 0", got)
	}
	ctx := context.Background()
	chat := e.queryVector(ctx, "hello, nice to meet you")
	if got := e.smallTalk(chat); math.Abs(got-1) > 1e-6 {
		t.Errorf("small talk: %.3f, want 1", got)
	}
	if got := e.smallTalk(e.queryVector(ctx, "will it rain tomorrow")); got > 0.1 {
		t.Errorf("a topical request: %.3f, want near 0", got)
	}
	if got := e.smallTalk(nil); got != 0 {
		t.Errorf("no query vector: %.3f", got)
	}
}
