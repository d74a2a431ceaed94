package normalize

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestToolWordsAndSets: the words are ToolWords', and each tool's word set
// holds exactly the positions of its own words (Words of its ToolText),
// for a list of a few words (one digit a position) and one of thousands
// (three digits), a tool whose text has no word, and a word repeated.
func TestToolWordsAndSets(t *testing.T) {
	small := &ToolSet{Items: []Tool{
		{Name: "pdf_to_markdown", Title: "PDF to Markdown", Description: "Convert a PDF to Markdown."},
		{Name: "!!!"},
		{Name: "ocr", Description: "Scan a page; read its text."},
	}}
	big := &ToolSet{}
	for i := range 300 {
		big.Items = append(big.Items, Tool{Name: fmt.Sprintf("tool%d", i), Description: fmt.Sprintf("w%da w%db w%dc w%dd w%de w%df w%dg w%dh w%di w%dj pdf", i, i, i, i, i, i, i, i, i, i)})
	}
	for _, c := range []struct {
		ts    *ToolSet
		width int
	}{{small, 1}, {big, 2}} {
		words, sets := ToolWordsAndSets(c.ts)
		if words != ToolWords(c.ts) {
			t.Errorf("words %q, want ToolWords' %q", words, ToolWords(c.ts))
		}
		ws, ok := ParseWordSets(sets)
		if !ok || ws.Len() != len(c.ts.Items) || ws.width != c.width {
			t.Fatalf("word sets %.80q: parsed %v, %d tools of width %d, want %d of width %d", sets, ok, ws.Len(), ws.width, len(c.ts.Items), c.width)
		}
		all := strings.Split(words, " ")
		for i, tool := range c.ts.Items {
			own := Words(ToolText(tool))
			for p, w := range all {
				if got := ws.Holds(i, p); got != slices.Contains(own, w) {
					t.Fatalf("tool %s, word %d %q: set holds it %v, its words %v", tool.Name, p, w, got, own)
				}
			}
			if ws.Holds(i, len(all)) || ws.Holds(i, -1) {
				t.Errorf("tool %s holds a position past the words", tool.Name)
			}
		}
	}
	if _, sets := ToolWordsAndSets(small); sets != "1 01234  456789A" {
		t.Errorf("small list's word sets %q, want %q", sets, "1 01234  456789A")
	}
	var huge ToolSet
	for i := range 5000 {
		huge.Items = append(huge.Items, Tool{Name: fmt.Sprintf("t%d", i)})
	}
	if _, sets := ToolWordsAndSets(&huge); !strings.HasPrefix(sets, "3 000 001 ") {
		t.Errorf("5,000 words: word sets start %.12q, want three digits a position", sets)
	}
	if w, s := ToolWordsAndSets(nil); w != "" || s != "" {
		t.Errorf("no tools: %q, %q", w, s)
	}
}

// TestParseWordSets: what is not a word sets string is refused, as
// absent; an empty set is a tool without words.
func TestParseWordSets(t *testing.T) {
	for _, bad := range []string{"", "1", "0 1", "2 012", "x 1", "12 00", "9 00"} {
		if _, ok := ParseWordSets(bad); ok {
			t.Errorf("%q read as word sets", bad)
		}
	}
	ws, ok := ParseWordSets("2 0001  0A")
	if !ok || ws.Len() != 3 || !ws.Holds(0, 1) || ws.Holds(1, 0) || !ws.Holds(2, 10) || ws.Holds(2, 1) {
		t.Errorf("2 0001  0A: %+v (%v), want three tools: {0 1}, {}, {10}", ws, ok)
	}
}
