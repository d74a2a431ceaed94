package query

import (
	"slices"
	"strings"
	"testing"
)

func TestAnalyze(t *testing.T) {
	cases := []struct {
		in    string
		terms []string
		query string
	}{
		{
			in:    "Can you please help me find a tool that converts PDF invoices to spreadsheets?",
			terms: []string{"converts", "pdf", "invoices", "spreadsheets"},
			query: "spreadsheets converts invoices pdf",
		},
		{
			in:    "I'm looking for something to track my daily calories and diet.",
			terms: []string{"track", "daily", "calories", "diet"},
			query: "calories track daily diet",
		},
		{
			// NFKC folds full-width letters; punctuation and case go.
			in:    "ＷＥＡＴＨＥＲ forecast, Seattle!!",
			terms: []string{"weather", "forecast", "seattle"},
			query: "forecast weather seattle",
		},
		{
			// Repeated words are kept once; digits survive.
			in:    "flights flights to Tokyo in 2 weeks",
			terms: []string{"flights", "tokyo", "2", "weeks"},
			query: "flights tokyo weeks 2",
		},
		{
			// Only stop words: the query falls back to the normalised words.
			in:    "What is it?",
			terms: nil,
			query: "what is it",
		},
		{in: "", terms: nil, query: ""},
	}
	for _, c := range cases {
		a := Analyze(c.in)
		if !slices.Equal(a.Terms, c.terms) {
			t.Errorf("Analyze(%q).Terms = %q, want %q", c.in, a.Terms, c.terms)
		}
		if got := Rewrite(c.in); got != c.query {
			t.Errorf("Rewrite(%q) = %q, want %q", c.in, got, c.query)
		}
	}
}

// TestKeepsEveryTerm checks that long requests keep all informative terms,
// not just the first ten, with the longest first.
func TestKeepsEveryTerm(t *testing.T) {
	in := "I need an assistant that schedules meetings, books conference rooms, sends calendar invitations, " +
		"translates agendas, summarizes transcripts, tracks action items and reminds participants automatically"
	a := Analyze(in)
	if len(a.Terms) <= MaxMeiliWords {
		t.Fatalf("got %d terms %q, want more than %d", len(a.Terms), a.Terms, MaxMeiliWords)
	}
	for _, w := range []string{"schedules", "participants", "automatically", "transcripts", "invitations"} {
		if !slices.Contains(a.Terms, w) {
			t.Errorf("term %q missing from %q", w, a.Terms)
		}
	}
	for i := 1; i < len(a.Ranked); i++ {
		if termWeight(a.Ranked[i-1]) < termWeight(a.Ranked[i]) {
			t.Fatalf("Ranked not ordered by weight: %q", a.Ranked)
		}
	}
	if a.Ranked[0] != "participants" {
		t.Errorf("most informative term = %q, want the first of the longest (capped at 12 letters)", a.Ranked[0])
	}
}

func TestDeterministic(t *testing.T) {
	in := "Could you recommend some apps for learning Spanish vocabulary with flashcards and spaced repetition?"
	first := Rewrite(in)
	for range 50 {
		if got := Rewrite(in); got != first {
			t.Fatalf("Rewrite not deterministic: %q vs %q", got, first)
		}
	}
	if strings.Contains(first, "could") || strings.Contains(first, "recommend") {
		t.Errorf("filler left in %q", first)
	}
}

func FuzzRewrite(f *testing.F) {
	f.Add("Can you help me find a cheap hotel in Paris?")
	f.Add("ｆｕｌｌ-ｗｉｄｔｈ d'accord naïve café")
	f.Fuzz(func(t *testing.T, s string) {
		out := Rewrite(s)
		for _, w := range strings.Fields(out) {
			if w != strings.ToLower(w) {
				t.Fatalf("Rewrite(%q) = %q: not lower case", s, out)
			}
		}
		if Rewrite(s) != out {
			t.Fatalf("Rewrite(%q) not deterministic", s)
		}
	})
}

// BenchmarkRewrite measures a typical 20-word request and prints the cost
// relative to strings.Fields over the same text, measured in the same run.
func BenchmarkRewrite(b *testing.B) {
	in := "Hi! I'm looking for a reliable service that can help me compare mortgage rates from different banks " +
		"and estimate my monthly payments, could you recommend one?"
	b.Run("Fields-baseline", func(b *testing.B) {
		for b.Loop() {
			_ = strings.Fields(strings.ToLower(in))
		}
	})
	b.Run("Rewrite", func(b *testing.B) {
		for b.Loop() {
			_ = Rewrite(in)
		}
	})
}
