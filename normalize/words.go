package normalize

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Words splits text into lower-case NFKC words: runs of letters and digits
// (combining marks stay with their letter). Apostrophes, hyphens and all
// other punctuation separate words. The query rewriter, the evidence of a
// search result and the registry book all read text through it.
func Words(text string) []string {
	if isASCII(text) {
		return asciiWords(text)
	}
	return unicodeWords(text)
}

// unicodeWords is Words of any text.
func unicodeWords(text string) []string {
	text = strings.ToLower(norm.NFKC.String(text))
	return strings.FieldsFunc(text, func(r rune) bool { return !IsWordRune(r) })
}

// asciiWords is Words of an ASCII text in one pass without tables (the
// re-ranking reads the words of every candidate of every search): NFKC
// leaves ASCII as it is, and its word runes are the letters and digits.
func asciiWords(text string) []string {
	text = strings.ToLower(text)
	n := 0
	for i := 0; i < len(text); i++ {
		if isASCIIWordByte(text[i]) && (i == 0 || !isASCIIWordByte(text[i-1])) {
			n++
		}
	}
	out := make([]string, 0, n)
	start := -1
	for i := 0; i < len(text); i++ {
		switch word := isASCIIWordByte(text[i]); {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			out = append(out, text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, text[start:])
	}
	return out
}

// WordText is Words of text, one space apart: one string, built for an
// ASCII text in one pass, without the slice of words (searchapi matches
// a request's terms in it, hybrid.HoldsTerm, for every tool a search may
// name).
func WordText(text string) string {
	if !isASCII(text) {
		return strings.Join(unicodeWords(text), " ")
	}
	var b strings.Builder
	b.Grow(len(text))
	gap := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if !isASCIIWordByte(c) {
			gap = b.Len() > 0
			continue
		}
		if gap {
			b.WriteByte(' ')
			gap = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// isASCIIWordByte is IsWordRune of a lower-case ASCII byte.
func isASCIIWordByte(b byte) bool { return 'a' <= b && b <= 'z' || '0' <= b && b <= '9' }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// IsWordRune reports whether r belongs to a word of Words: a letter, a
// digit or a combining mark. The search page cuts the text it highlights
// by it, so it highlights the words a search read.
func IsWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// IsStopWord reports whether w, a word of Words, says how something is asked
// rather than what: see stopWords.
func IsStopWord(w string) bool { return stopWords[w] }

// Terms returns the distinct words of text, in order, that are not stop
// words and have more than one byte.
func Terms(text string) []string {
	var out []string
	for _, w := range Words(text) {
		if len(w) > 1 && !stopWords[w] && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// stopWords is a general English stop-word list (function words, pronouns,
// auxiliaries, contractions split at the apostrophe) plus generic words of
// conversational requests ("please", "need", "looking") that say how
// something is asked, not what is asked for. Nothing here comes from any
// evaluation set.
var stopWords = setOf(
	// Articles, determiners, quantifiers.
	"a", "an", "the", "this", "that", "these", "those", "some", "any", "each", "every",
	"all", "both", "either", "neither", "no", "other", "another", "such", "own", "same",
	"much", "many", "more", "most", "less", "least", "few", "fewer", "several", "enough",
	"lot", "lots", "bit", "kind", "sort", "type", "thing", "things", "something",
	"anything", "everything", "nothing", "someone", "anyone", "everyone", "somebody",
	"anybody", "somewhere", "anywhere", "way", "ways",
	// Pronouns.
	"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves", "you",
	"your", "yours", "yourself", "yourselves", "he", "him", "his", "himself", "she",
	"her", "hers", "herself", "it", "its", "itself", "they", "them", "their", "theirs",
	"themselves", "one", "ones",
	// Question words and relatives.
	"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "whether",
	"whatever", "whichever", "whoever",
	// Auxiliaries and modals.
	"am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had",
	"having", "do", "does", "did", "doing", "done", "can", "could", "will", "would",
	"shall", "should", "may", "might", "must", "ought", "cannot",
	// Contraction fragments left after splitting at the apostrophe.
	"s", "t", "m", "re", "ve", "ll", "d", "don", "doesn", "didn", "isn", "aren", "wasn",
	"weren", "haven", "hasn", "hadn", "won", "wouldn", "couldn", "shouldn", "mustn",
	"needn", "ain", "im", "ive", "id", "dont", "cant", "wont",
	// Prepositions and conjunctions.
	"about", "above", "across", "after", "against", "along", "among", "around", "as",
	"at", "before", "behind", "below", "beneath", "beside", "between", "beyond", "by",
	"down", "during", "except", "for", "from", "in", "inside", "into", "near", "of",
	"off", "on", "onto", "out", "outside", "over", "past", "per", "since", "through",
	"throughout", "till", "to", "toward", "towards", "under", "until", "up", "upon",
	"via", "with", "within", "without", "and", "but", "or", "nor", "so", "yet", "if",
	"then", "than", "because", "while", "although", "though", "unless", "whereas",
	"also", "too", "very", "just", "only", "even", "still", "again", "ever", "never",
	"always", "already", "soon", "now", "here", "there", "not", "quite", "rather",
	"really", "actually", "basically", "perhaps", "maybe", "probably", "possibly",
	"else", "etc", "eg", "ie", "via", "like", "well", "oh", "ok", "okay", "yes", "yeah",
	// Conversational request words: how a request is phrased, not its topic.
	"please", "pls", "plz", "kindly", "thanks", "thank", "hi", "hello", "hey",
	"want", "wants", "wanted", "wanting", "need", "needs", "needed", "needing",
	"wish", "hope", "hoping", "looking", "seeking", "trying", "try", "wondering",
	"wonder", "curious", "able", "possible", "let", "lets", "help", "helps", "assist",
	"get", "gets", "getting", "got", "give", "tell", "show", "know",
	"recommend", "recommendation", "recommendations", "suggest", "suggestion",
	"suggestions", "use", "using", "provide", "currently", "planning", "going",
)

// WordMatch reports equal words, or words of at least four letters where
// one is a prefix of the other ("flight" and "flights"): how the keyword
// side's words meet a request's everywhere they are compared.
func WordMatch(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 4 && strings.HasPrefix(b, a)
}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// TextHolds reports whether text, words one space apart (as ToolWords and
// WordText write them), holds a word starting with lead for which match
// is true. It reads text in place: only the words starting with lead are
// cut out and asked, found by strings.Index, so a caller matching a term
// (WordMatch and its kin) passes the letters every matching word starts
// with and pays for the few words that do.
func TextHolds(text, lead string, match func(word string) bool) bool {
	if lead == "" {
		return false
	}
	for at := 0; at < len(text); {
		i := strings.Index(text[at:], lead)
		if i < 0 {
			return false
		}
		start := at + i
		word, _, _ := strings.Cut(text[start:], " ")
		if (start == 0 || text[start-1] == ' ') && match(word) {
			return true
		}
		at = start + len(word) + 1
	}
	return false
}
