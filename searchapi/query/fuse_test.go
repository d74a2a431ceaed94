package query

import (
	"slices"
	"testing"
)

func TestFuse(t *testing.T) {
	sem := []Hit{{"a", 0.80}, {"b", 0.78}, {"c", 0.60}}
	terms := []TermResult{
		{Term: "calories", TotalHits: 2, Hits: []Hit{{"c", 1}, {"d", 0.9}}},       // rare: high idf
		{Term: "daily", TotalHits: 90, Hits: []Hit{{"a", 1}, {"b", 1}, {"c", 1}}}, // common: low idf
		{Term: "absent", TotalHits: 0},
	}
	got := Fuse(sem, terms, 100, 0.5)
	var ids []string
	for _, s := range got {
		ids = append(ids, s.ID)
	}
	// c matches both terms, including the rare one: first despite its
	// lower semantic score. d has only the keyword side but matches the rare
	// term, which outweighs a and b's semantic lead at weight 0.5.
	if !slices.Equal(ids, []string{"c", "d", "a", "b"}) {
		t.Fatalf("order = %v", ids)
	}
	c := got[0]
	if c.Keyword < 0.999 || c.Semantic != 0.60 || !slices.Equal(c.Terms, []string{"calories", "daily"}) {
		t.Errorf("c = %+v", c)
	}
	if want := 0.5*c.Keyword + 0.5*c.Semantic; c.Score != want {
		t.Errorf("c.Score = %v, want %v", c.Score, want)
	}
	if d := got[1]; d.Semantic != 0 || d.Keyword <= 0 || d.Keyword >= 1 {
		t.Errorf("d = %+v", d)
	}
}

func TestFuseKeywordOnly(t *testing.T) {
	terms := []TermResult{
		{Term: "flights", TotalHits: 3, Hits: []Hit{{"x", 0.9}, {"y", 0.5}}},
		{Term: "tokyo", TotalHits: 1, Hits: []Hit{{"y", 1}}},
	}
	got := Fuse(nil, terms, 50, DefaultKeywordWeight)
	if len(got) != 2 || got[0].ID != "y" {
		t.Fatalf("got %+v, want y (both terms) first", got)
	}
	if got[0].Score != got[0].Keyword {
		t.Errorf("keyword-only score %v != keyword %v", got[0].Score, got[0].Keyword)
	}
	if len(Fuse(nil, nil, 0, 0)) != 0 {
		t.Error("nothing in, something out")
	}
}

func TestFuseDeterministicTies(t *testing.T) {
	sem := []Hit{{"b", 0.5}, {"a", 0.5}, {"c", 0.5}}
	for range 20 {
		got := Fuse(sem, nil, 10, 0.2)
		if got[0].ID != "a" || got[1].ID != "b" || got[2].ID != "c" {
			t.Fatalf("ties not broken by ID: %+v", got)
		}
	}
}

func TestSearchTerms(t *testing.T) {
	a := Analyze("alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa quebec romeo")
	if got := a.SearchTerms(); len(got) != MaxTerms {
		t.Errorf("SearchTerms() has %d terms, want %d", len(got), MaxTerms)
	}
}
