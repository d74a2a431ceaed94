package score

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/normalize"
)

// TestToolWordsReadAsText: a candidate's tool words score it exactly as
// the same words appended to its text did, plain (kept as one string) or
// not (split by normalize.Words), in the pool and outside it.
func TestToolWordsReadAsText(t *testing.T) {
	r := &Request{Docs: 50, Terms: []Term{{"weather", 2}, {"forecast", 3}, {"radar", 1}, {"conv", 4}}}
	tools := []string{
		"get weather forecasts hourly city",  // plain: prefixes both ways ("forecasts", "conv" of none)
		"convert units radar  images",        // plain, a double space
		"Get Weather, Radar-Images",          // not plain: upper case and punctuation
		"prévision météo forecast",           // not plain: not ASCII
		"",                                   // none
		"weath radars conversion forecaster", // plain: a short word, longer words
	}
	var asText, asTools []Candidate
	for i, w := range tools {
		c := Candidate{Semantic: 0.6 + 0.05*float64(i), Keyword: 0.1 * float64(i), Name: "Server", Text: []string{"Tools for everyday things."}}
		withText := c
		if w != "" {
			withText.Text = append(slices.Clone(c.Text), w)
		}
		c.ToolWords = w
		asText, asTools = append(asText, withText), append(asTools, c)
	}
	for i := range tools {
		a, b := wordsOf(&asText[i]), wordsOf(&asTools[i])
		if a.count() != b.count() {
			t.Errorf("%q: %d words as tools, %d as text", tools[i], b.count(), a.count())
		}
		for _, term := range r.Terms {
			if a.holds(term.Word) != b.holds(term.Word) {
				t.Errorf("%q holds %q: %v as tools, %v as text", tools[i], term.Word, b.holds(term.Word), a.holds(term.Word))
			}
		}
	}
	want, got := Default.Rank(r, asText), Default.Rank(r, asTools)
	if !slices.Equal(want.Order, got.Order) || !slices.Equal(want.Scores, got.Scores) {
		t.Errorf("ranking with tool words %v %v; as text %v %v", got.Order, got.Scores, want.Order, want.Scores)
	}
	for i := range tools {
		if w, g := Default.Score(r, want, &asText[i]), Default.Score(r, got, &asTools[i]); w != g {
			t.Errorf("%q outside the pool: %v with tool words, %v as text", tools[i], g, w)
		}
	}
}

// TestPlainWords: plainWords accepts lower-case ASCII words apart by
// spaces alone, counting them as normalize.Words does, and containsField
// reads them as containsWord reads Words' split.
func TestPlainWords(t *testing.T) {
	cases := []struct {
		text  string
		plain bool
	}{
		{"", true}, {"a", true}, {"get weather 2day", true}, {" lead  and trail ", true},
		{"railway trailer weat aileron an", true},
		{"Upper", false}, {"dash-ed", false}, {"tab\there", false}, {"météo", false},
	}
	for _, c := range cases {
		n, ok := plainWords(c.text)
		if ok != c.plain {
			t.Errorf("plainWords(%q) plain %v, want %v", c.text, ok, c.plain)
		}
		if !ok {
			continue
		}
		words := normalize.Words(c.text)
		if n != len(words) || !slices.Equal(strings.Fields(c.text), words) {
			t.Errorf("plainWords(%q) = %d; Words gives %q", c.text, n, words)
		}
		for _, term := range []string{
			"a", "an", "get", "weat", "weathers", "2day", "trail", "trails", "trailers", "lea", "lead", "and",
			"ail", "rail", "railways", "ailer", "x", "weather2", "é",
		} {
			if got, want := containsField(c.text, term), containsWord(words, term); got != want {
				t.Errorf("containsField(%q, %q) = %v, containsWord %v", c.text, term, got, want)
			}
		}
	}
}
