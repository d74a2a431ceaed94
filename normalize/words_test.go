package normalize

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
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

// TestASCIIWordsAsUnicode checks the ASCII path of Words, and WordText,
// against the general one on every ASCII byte, around words, and on
// random ASCII texts.
func TestASCIIWordsAsUnicode(t *testing.T) {
	texts := []string{"", " ", "--", "a", "A", "Flight Booker", "Book cheap flights to Paris, and Rome.", "x1 2y  Z_9's", "tail9"}
	for b := 0; b < utf8.RuneSelf; b++ {
		c := string(rune(b))
		texts = append(texts, c, "ab"+c+"CD", c+"x"+c, "9"+c+c+"q")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		buf := make([]byte, rng.IntN(40))
		for i := range buf {
			buf[i] = byte(rng.IntN(utf8.RuneSelf))
		}
		texts = append(texts, string(buf))
	}
	for _, s := range texts {
		got, want := asciiWords(s), unicodeWords(s)
		if got == nil || !slices.Equal(got, want) {
			t.Fatalf("asciiWords(%q) = %q, want %q", s, got, want)
		}
		if w := Words(s); !slices.Equal(w, want) {
			t.Fatalf("Words(%q) = %q, want %q", s, w, want)
		}
		if w := WordText(s); w != strings.Join(want, " ") {
			t.Fatalf("WordText(%q) = %q, want %q", s, w, strings.Join(want, " "))
		}
	}
	if w := Words("Café NAÏVE ﬁle"); !slices.Equal(w, []string{"café", "naïve", "file"}) {
		t.Errorf("Words of a non-ASCII text = %q", w)
	}
	if w := WordText("Café, NAÏVE ﬁle!"); w != "café naïve file" {
		t.Errorf("WordText of a non-ASCII text = %q", w)
	}
}

// BenchmarkWords times Words on ASCII texts like a candidate's name and
// description against the general path on the same texts, and prints the
// ratio (run: go test -run '^$' -bench Words ./normalize/).
func BenchmarkWords(b *testing.B) {
	texts := []string{"Flight Booker", "Book cheap flights to Paris and Rome, compare fares and hold a seat for 24 hours.",
		"weather-forecast", "Answers questions about payroll runs, tax fields and onboarding (HR, v2)."}
	var fast, general time.Duration
	for b.Loop() {
		start := time.Now()
		for _, s := range texts {
			_ = Words(s)
		}
		fast += time.Since(start)
		start = time.Now()
		for _, s := range texts {
			_ = unicodeWords(s)
		}
		general += time.Since(start)
	}
	b.ReportMetric(float64(fast)/float64(general), "words/unicode")
}

func TestWordMatch(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"flight", "flight", true},
		{"flight", "flights", true},
		{"flights", "flight", true},
		{"fly", "flying", false}, // under four letters: no prefix match
		{"code", "coder", true},
		{"code", "decode", false},
		{"qr", "qr", true},
	}
	for _, tc := range tests {
		if got := WordMatch(tc.a, tc.b); got != tc.want {
			t.Errorf("WordMatch(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestTextHolds checks the in-place read against the split words: a word
// starting with lead that match accepts, and only at a word's start.
func TestTextHolds(t *testing.T) {
	texts := []string{"", "xconvert reconverted", "convert pdf markdown", "markdowns to text", "xconvert converter", "pdfs", "a b converts"}
	leads := []string{"conv", "mark", "pdf", "text", "a", "b", "zzz"}
	for _, text := range texts {
		for _, lead := range leads {
			for _, term := range []string{lead, lead + "s", lead + "ert"} {
				match := func(w string) bool { return WordMatch(w, term) }
				want := false
				for _, w := range strings.Fields(text) {
					want = want || strings.HasPrefix(w, lead) && match(w)
				}
				if got := TextHolds(text, lead, match); got != want {
					t.Errorf("TextHolds(%q, %q) for %q = %v, want %v", text, lead, term, got, want)
				}
			}
		}
	}
	if TextHolds("convert", "", func(string) bool { return true }) {
		t.Error("an empty lead holds nothing")
	}
}
