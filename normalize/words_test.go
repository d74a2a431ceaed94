package normalize

import (
	"slices"
	"testing"
)

func TestWordsAndTerms(t *testing.T) {
	tests := []struct {
		name, in     string
		words, terms []string
	}{
		{"punctuation and case", "Book a FLIGHT to Tokyo!", []string{"book", "a", "flight", "to", "tokyo"}, []string{"book", "flight", "tokyo"}},
		{"nfkc and apostrophe", "ＷＥＡＴＨＥＲ isn't", []string{"weather", "isn", "t"}, []string{"weather"}},
		{"repeats kept once in terms", "maps maps x 42", []string{"maps", "maps", "x", "42"}, []string{"maps", "42"}},
		{"only stop words", "what is it", []string{"what", "is", "it"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Words(tc.in); !slices.Equal(got, tc.words) {
				t.Errorf("Words = %q, want %q", got, tc.words)
			}
			if got := Terms(tc.in); !slices.Equal(got, tc.terms) {
				t.Errorf("Terms = %q, want %q", got, tc.terms)
			}
		})
	}
}
