package search

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/searchapi/query"
)

// This file measures what a request's vector is made of (docs/MEASUREMENTS.md,
// tenth round): TestRelevanceDump writes the vector a variant builds instead
// of queryVector's when AGENTFINDER_DUMP_QVEC names one, and
// TestQueryVectorCost times each variant's embedding. Nothing served uses
// these variants.
//
// Variants (a is the number after the colon):
//   - typed: the request as typed (queryVector; the default)
//   - join: the request's sentences that hold a content word
//     (query.Analyze's terms) and are not small talk (highest cosine with
//     score.SmallTalk below QVEC_TALK, 0.7), joined and embedded as one
//     text; the typed vector when every sentence or none is kept
//   - mean, wmean: the unit mean of those sentences' vectors (wmean
//     weighted by their content words)
//   - meanfull:a: a × typed + (1-a) × mean
//   - mix:a: a × typed + (1-a) × the vector of the keyword terms
//     (searchTerms, longest first)
//   - mixo:a: the same, the terms in request order
//   - joinmixo:a: a × join + (1-a) × the terms in request order
//   - strip:a: a × the request without its stop words but the joining
//     ones (stripWrapper) + (1-a) × typed
//   - deproj:a: typed less a times its component along the mean of the
//     small-talk phrases' vectors
//
// With QVEC_TALK_TYPED=1 the dump's small-talk feature is read from the
// typed vector whatever the variant (only the search's vector changes).

// sentenceEnd ends a sentence: a . ! or ? followed by space and a capital
// letter, a digit or a quote (so "F.3d" and "www.example.com" stay whole;
// "vs. Real" does not).
var sentenceEnd = regexp.MustCompile(`[.!?]+["')\]]*\s+["'(\[]?[A-Z0-9]`)

// splitSentences returns text's sentences, trimmed.
func splitSentences(text string) []string {
	var out []string
	start := 0
	for _, m := range sentenceEnd.FindAllStringIndex(text, -1) {
		end := m[1] - 1 // the capital starts the next sentence
		for end > m[0] && strings.ContainsRune("\"'([", rune(text[end-1])) {
			end--
		}
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// requestSentence is one sentence of a request with what the variants read.
type requestSentence struct {
	text  string
	terms int     // content words (query.Analyze's terms)
	talk  float64 // highest cosine with the small-talk phrases
	vec   []float32
}

// dumpQueryVector is the query vector TestRelevanceDump writes: queryVector's
// unless AGENTFINDER_DUMP_QVEC names a variant.
func dumpQueryVector(t *testing.T, e *Engine, text string) []float32 {
	t.Helper()
	return variantVector(t, e, text, os.Getenv("AGENTFINDER_DUMP_QVEC"))
}

// variantVector builds text's vector as variant says (see the file's
// comment).
func variantVector(t *testing.T, e *Engine, text, variant string) []float32 {
	t.Helper()
	ctx := context.Background()
	typed := e.queryVector(ctx, text)
	if variant == "" || variant == "typed" || typed == nil {
		return typed
	}
	name, arg, _ := strings.Cut(variant, ":")
	a, _ := strconv.ParseFloat(arg, 64)
	inOrder := func() []float32 { return embedText(t, e, strings.Join(query.Analyze(text).Terms, " ")) }
	switch name {
	case "mix":
		return mixVectors(typed, embedText(t, e, strings.Join(e.searchTerms(text), " ")), a)
	case "mixo":
		return mixVectors(typed, inOrder(), a)
	case "joinmixo":
		return mixVectors(variantVector(t, e, text, "join"), inOrder(), a)
	case "strip":
		return mixVectors(embedText(t, e, stripWrapper(text)), typed, a)
	case "deproj":
		return deproject(e, typed, a)
	case "join", "mean", "wmean", "meanfull":
		return sentenceVector(t, e, text, name, typed, a)
	}
	t.Fatalf("unknown AGENTFINDER_DUMP_QVEC %q", variant)
	return nil
}

// sentenceVector is the variants join, mean, wmean and meanfull.
func sentenceVector(t *testing.T, e *Engine, text, name string, typed []float32, a float64) []float32 {
	t.Helper()
	tau := envFloat("QVEC_TALK", 0.7)
	sents := requestSentences(t, e, text)
	var kept []requestSentence
	for _, s := range sents {
		if s.terms > 0 && s.talk < tau {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 || name == "join" && len(kept) == len(sents) {
		return typed
	}
	if name == "join" {
		parts := make([]string, len(kept))
		for i, s := range kept {
			parts[i] = s.text
		}
		return embedText(t, e, strings.Join(parts, " "))
	}
	m := make([]float32, len(typed))
	for _, s := range kept {
		w := float32(1)
		if name == "wmean" {
			w = float32(s.terms)
		}
		for k, x := range s.vec {
			m[k] += w * x
		}
	}
	if name == "meanfull" {
		return mixVectors(typed, unitVector(m), a)
	}
	return unitVector(m)
}

// requestSentences splits text and embeds each sentence.
func requestSentences(t *testing.T, e *Engine, text string) []requestSentence {
	t.Helper()
	parts := splitSentences(text)
	vs, err := e.cfg.Embedder.Embed(context.Background(), parts)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]requestSentence, len(parts))
	for i, p := range parts {
		out[i] = requestSentence{text: p, terms: len(query.Analyze(p).Terms), vec: vs[i], talk: e.smallTalk(vs[i])}
	}
	return out
}

// embedText embeds one text (nil for a blank one).
func embedText(t *testing.T, e *Engine, text string) []float32 {
	t.Helper()
	if strings.TrimSpace(text) == "" {
		return nil
	}
	vs, err := e.cfg.Embedder.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return vs[0]
}

// joinWords are the stop words stripWrapper keeps: those that join a
// phrase's content words.
var joinWords = map[string]bool{"a": true, "an": true, "the": true, "of": true, "in": true, "on": true,
	"for": true, "to": true, "with": true, "and": true, "or": true, "from": true, "at": true, "by": true, "about": true}

// stripWrapper is text's words without query.Analyze's filler and stop
// words, but for joinWords, in order.
func stripWrapper(text string) string {
	a := query.Analyze(text)
	var out []string
	for _, w := range a.Words {
		if slices.Contains(a.Terms, w) || joinWords[w] {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// deproject takes g times v's component along the mean small-talk vector
// out of v.
func deproject(e *Engine, v []float32, g float64) []float32 {
	e.talk.mu.Lock()
	vecs := e.talk.vecs
	e.talk.mu.Unlock()
	m := make([]float32, len(v))
	for _, tv := range vecs {
		for k, x := range tv {
			m[k] += x
		}
	}
	m = unitVector(m)
	var d float64
	for k := range v {
		d += float64(v[k]) * float64(m[k])
	}
	out := make([]float32, len(v))
	for k := range v {
		out[k] = v[k] - float32(g*d)*m[k]
	}
	return unitVector(out)
}

// mixVectors is the unit vector of a·x + (1-a)·y (x when y is nil).
func mixVectors(x, y []float32, a float64) []float32 {
	if y == nil {
		return x
	}
	m := make([]float32, len(x))
	for k := range x {
		m[k] = float32(a)*x[k] + float32(1-a)*y[k]
	}
	return unitVector(m)
}

// unitVector scales v to unit length in place and returns it.
func unitVector(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	s := float32(1 / math.Sqrt(n))
	for k := range v {
		v[k] *= s
	}
	return v
}

func envFloat(name string, def float64) float64 {
	if f, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil {
		return f
	}
	return def
}

func TestSplitSentences(t *testing.T) {
	for text, want := range map[string][]string{
		"Hi there! I'm planning a trip. Can you help?":      {"Hi there!", "I'm planning a trip.", "Can you help?"},
		"This judge is biased. ABC Corp., 123 F.3d at 569":  {"This judge is biased.", "ABC Corp., 123 F.3d at 569"},
		"Check www.example.com for the U.S. economy":        {"Check www.example.com for the U.S. economy"},
		"A banner that says 'Congratulations!'. Could you?": {"A banner that says 'Congratulations!'.", "Could you?"},
		"": nil,
	} {
		if got := splitSentences(text); !slices.Equal(got, want) {
			t.Errorf("splitSentences(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestQueryVectorCost times, for each dev request, the embedding each
// variant needs (the model's cache off, so every call embeds), in rounds
// alternating their order, and prints the p50 of each and its ratio to the
// typed request's (AGENTFINDER_EVAL=1; no Meilisearch).
func TestQueryVectorCost(t *testing.T) {
	if os.Getenv("AGENTFINDER_EVAL") != "1" {
		t.Skip("set AGENTFINDER_EVAL=1")
	}
	m := evalModel(t)
	m.SetCacheSize(0)
	e := &Engine{cfg: Config{Embedder: m, QueryRewriter: query.Rewrite}}
	e.queryVector(context.Background(), "warm up") // the small-talk phrases, once
	qs := readDumpQueries(t, filepath.Join(envOr("AGENTFINDER_RELEVANCE_DIR", "../../fixtures/relevance"), "dev_queries.jsonl"), "dev")
	variants := []string{"typed", "mix:0.8", "mixo:0.8", "strip:0.3", "join", "meanfull:0.5", "deproj:0.5"}
	times := make([][]float64, len(variants))
	for i, q := range qs {
		for k := range variants {
			j := (k + i) % len(variants)
			start := time.Now()
			v := variantVector(t, e, q.Text, variants[j])
			times[j] = append(times[j], ms(time.Since(start)))
			if len(v) != m.Dimensions() {
				t.Fatalf("%s of %q: a vector of %d, want %d: the time is not an embedding's", variants[j], q.Text, len(v), m.Dimensions())
			}
		}
	}
	base := p50(times[0])
	for j, v := range variants {
		fmt.Printf("%-13s p50 %.2f ms (x%.2f)\n", v, p50(times[j]), p50(times[j])/base)
	}
}

// TestQuerySentences prints each multi-sentence request's sentences with
// their content words and small-talk similarity (AGENTFINDER_EVAL=1; no
// Meilisearch).
func TestQuerySentences(t *testing.T) {
	if os.Getenv("AGENTFINDER_EVAL") != "1" {
		t.Skip("set AGENTFINDER_EVAL=1")
	}
	m := evalModel(t)
	e := &Engine{cfg: Config{Embedder: m}}
	dir := envOr("AGENTFINDER_RELEVANCE_DIR", "../../fixtures/relevance")
	for _, kind := range []string{"dev_queries", "offcatalog"} {
		for _, q := range readDumpQueries(t, filepath.Join(dir, kind+".jsonl"), kind) {
			e.queryVector(context.Background(), q.Text)
			ss := requestSentences(t, e, q.Text)
			if got, want := sentenceWords(ss), strings.Fields(q.Text); !slices.Equal(got, want) {
				t.Errorf("the sentences of %q lose or add words: %q", q.Text, got)
			}
			if len(ss) < 2 {
				continue
			}
			for _, s := range ss {
				fmt.Printf("%s\t%d\t%.3f\t%s\n", kind, s.terms, s.talk, s.text)
			}
			fmt.Println()
		}
	}
}

// sentenceWords is the words of ss in order, as strings.Fields splits them.
func sentenceWords(ss []requestSentence) []string {
	var out []string
	for _, s := range ss {
		out = append(out, strings.Fields(s.text)...)
	}
	return out
}
