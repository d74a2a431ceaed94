package normalize

import (
	"slices"
	"strings"
)

// FieldToolWordSets is the tools index's member telling which of the
// record's tool words (FieldToolWords) each of its tools holds
// (ToolWordSets): stored, not searched, read by a search's tools queries
// with the words, so that which of a server's tools match a request is
// known from their answer, and the tool list itself is read only for the
// servers shown with a matching tool.
const FieldToolWordSets = "toolWordSets"

// wordSetDigits are the digits of a position in ToolWordSets, in base 64:
// none needs escaping in JSON, and none is a space.
const wordSetDigits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"

// ToolWordsAndSets returns ToolWords(ts) and the word sets of ts's tools:
// for each tool, in list order, the positions in the words (0: the first)
// of its own words (Words of its ToolText, normalize.WordText's), each
// once and ascending, each written in the same number of wordSetDigits
// (the fewest that write the last position); the first member is that
// number, and the members are one space apart ("" for no tools). A
// tool's words are among its server's, so its set names all of them: a
// reader tells whether a tool holds a word by looking its position up
// (WordSets.Holds). Its length is about two or three bytes a word of
// every tool's text, a third of the tool list it describes.
func ToolWordsAndSets(ts *ToolSet) (words, sets string) {
	if ts == nil || len(ts.Items) == 0 {
		return "", ""
	}
	at := map[string]int{}
	var wb strings.Builder
	toolPos := make([][]int, len(ts.Items))
	for i, t := range ts.Items {
		for _, w := range Words(ToolText(t)) {
			p, ok := at[w]
			if !ok {
				p = len(at)
				at[w] = p
				if wb.Len() > 0 {
					wb.WriteByte(' ')
				}
				wb.WriteString(w)
			}
			toolPos[i] = append(toolPos[i], p)
		}
	}
	width := digitsFor(len(at) - 1)
	var sb strings.Builder
	sb.WriteByte(wordSetDigits[width])
	for _, ps := range toolPos {
		slices.Sort(ps)
		sb.WriteByte(' ')
		for j, p := range ps {
			if j > 0 && p == ps[j-1] {
				continue
			}
			writeDigits(&sb, p, width)
		}
	}
	return wb.String(), sb.String()
}

// digitsFor is how many wordSetDigits write n (at least one).
func digitsFor(n int) int {
	d := 1
	for n >= len(wordSetDigits) {
		n /= len(wordSetDigits)
		d++
	}
	return d
}

// writeDigits writes p in width wordSetDigits, most significant first.
func writeDigits(b *strings.Builder, p, width int) {
	var buf [8]byte
	for i := width - 1; i >= 0; i-- {
		buf[i] = wordSetDigits[p%len(wordSetDigits)]
		p /= len(wordSetDigits)
	}
	b.Write(buf[:width])
}

// digitValue is the value of the wordSetDigits digit c (-1: none).
func digitValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'A' <= c && c <= 'Z':
		return int(c-'A') + 10
	case 'a' <= c && c <= 'z':
		return int(c-'a') + 36
	case c == '-':
		return 62
	case c == '_':
		return 63
	}
	return -1
}

// WordSets is a server's ToolWordSets as read for matching (ParseWordSets).
type WordSets struct {
	width int
	tools []string // each tool's positions, width digits each
}

// ParseWordSets reads sets, written by ToolWordsAndSets; false when it is
// not such a string (absent: a tools index an older ingest wrote).
func ParseWordSets(sets string) (WordSets, bool) {
	head, rest, ok := strings.Cut(sets, " ")
	if !ok || len(head) != 1 {
		return WordSets{}, false
	}
	width := digitValue(head[0])
	if width < 1 || width > 8 {
		return WordSets{}, false
	}
	tools := strings.Split(rest, " ")
	for _, t := range tools {
		if len(t)%width != 0 {
			return WordSets{}, false
		}
	}
	return WordSets{width: width, tools: tools}, true
}

// Len is how many tools ws describes.
func (ws WordSets) Len() int { return len(ws.tools) }

// Holds reports whether tool (its place in the list) holds the word at
// position p of its server's tool words: a binary search of its set.
func (ws WordSets) Holds(tool, p int) bool {
	set := ws.tools[tool]
	lo, hi := 0, len(set)/ws.width
	for lo < hi {
		m := (lo + hi) / 2
		v := ws.at(set, m)
		switch {
		case v == p:
			return true
		case v < p:
			lo = m + 1
		default:
			hi = m
		}
	}
	return false
}

// at is the value of the m-th position of set.
func (ws WordSets) at(set string, m int) int {
	v := 0
	for _, c := range []byte(set[m*ws.width : (m+1)*ws.width]) {
		v = v*len(wordSetDigits) + max(digitValue(c), 0)
	}
	return v
}
