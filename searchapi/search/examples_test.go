package search

import "testing"

func TestUniqueExamples(t *testing.T) {
	in := []MatchedExample{
		{Text: "book me a flight to Tokyo", Kind: "representativeQuery", Score: 0.9},
		{Text: "Book me a  flight to Tokyo", Kind: "example", Score: 0.9},
		{Text: "find a hotel", Kind: "example", Score: 0.5},
		{Text: "book me a flight to Tokyo", Kind: "example", Score: 0.9},
	}
	got := uniqueExamples(in)
	if len(got) != 2 || got[0].Kind != "representativeQuery" || got[1].Text != "find a hotel" {
		t.Errorf("uniqueExamples = %+v", got)
	}
}
