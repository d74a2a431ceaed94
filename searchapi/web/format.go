package web

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentfinder/agentfinder/normalize"
)

// typeLabels names the media types a person meets in results. Keys are
// canonical types (normalize.CanonicalType) without "+json".
var typeLabels = map[string]struct{ label, class string }{
	"application/a2a-agent-card": {"A2A agent", "a2a"},
	"application/mcp-server":     {"MCP server", "mcp"},
	"application/ai-skill":       {"skill", "skill"},
	"application/ai-catalog":     {"bundle", "bundle"},
	"application/ai-registry":    {"registry", "registry"},
	"application/adp-agent-card": {"ADP agent", "a2a"},
	"application/haidip-agent":   {"HAIDIP agent", "a2a"},
	"application/agent-metadata": {"agent metadata", "other"},
}

// TypeLabel returns the readable name of a media type ("MCP server") and a
// CSS class for its badge; unknown types are shown as published.
func TypeLabel(mediaType string) (label, class string) {
	c := normalize.CanonicalType(mediaType)
	base := c
	if i := strings.IndexByte(base, '+'); i >= 0 {
		base = base[:i]
	}
	if l, ok := typeLabels[base]; ok {
		return l.label, l.class
	}
	if mediaType == "" {
		return "unknown type", "other"
	}
	return c, "other"
}

// Ago says how long before now t was, in words ("3 hours ago"); the zero
// time is "at an unknown time".
func Ago(t, now time.Time) string {
	if t.IsZero() {
		return "at an unknown time"
	}
	d := now.Sub(t)
	if d < 0 {
		return "just now"
	}
	unit := func(n int64, name string) string {
		if n == 1 {
			return "1 " + name + " ago"
		}
		return fmt.Sprintf("%d %ss ago", n, name)
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return unit(int64(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return unit(int64(d/time.Hour), "hour")
	case d < 60*24*time.Hour:
		return unit(int64(d/(24*time.Hour)), "day")
	case d < 2*365*24*time.Hour:
		return unit(int64(d/(30*24*time.Hour)), "month")
	}
	return unit(int64(d/(365*24*time.Hour)), "year")
}

// OneLine collapses whitespace and cuts s to at most n runes at a word
// boundary, with an ellipsis when cut.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := []rune(s)[:n]
	if i := strings.LastIndexFunc(string(cut), unicode.IsSpace); i > n/2 {
		return strings.TrimRightFunc(string(cut)[:i], unicode.IsPunct) + "…"
	}
	return string(cut) + "…"
}

// Segment is a piece of text, marked when it matched the query.
type Segment struct {
	Text string
	Hit  bool
}

// Highlight splits text into words (as normalize.Words cuts them) and the
// text between them, marking the words match accepts (match sees each word
// as normalize.Words gives it). Adjacent pieces of the same kind are
// merged.
func Highlight(text string, match func(word string) bool) []Segment {
	var out []Segment
	add := func(s string, hit bool) {
		if s == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].Hit == hit {
			out[n-1].Text += s
			return
		}
		out = append(out, Segment{Text: s, Hit: hit})
	}
	isWord := normalize.IsWordRune
	// hit reads a word as normalize.Words does (NFKC, lower case).
	hit := func(w string) bool {
		for _, x := range normalize.Words(w) {
			if match(x) {
				return true
			}
		}
		return false
	}
	start := -1
	for i, r := range text {
		switch {
		case isWord(r) && start < 0:
			start = i
		case !isWord(r) && start >= 0:
			w := text[start:i]
			add(w, hit(w))
			start = -1
			add(string(r), false)
		case !isWord(r):
			add(string(r), false)
		}
	}
	if start >= 0 {
		w := text[start:]
		add(w, hit(w))
	}
	return out
}
