package embed

import (
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// reservedIDs is the number of vocabulary entries (ids 0-5) that never match
// input text; id 0 stands for an unknown character.
const reservedIDs = 6

// tokenizer is a port of the TF.js Universal Sentence Encoder tokenizer: a
// SentencePiece unigram Viterbi search over code points with a trie of the
// vocabulary pieces.
type tokenizer struct {
	pieceLen []int // length in code points of each vocabulary piece
	root     *trieNode
}

type trieNode struct {
	children map[rune]*trieNode
	id       int32 // vocabulary id when a piece ends here, else -1
	score    float32
}

// newTokenizer builds the tokenizer from vocab.json: an array of
// [piece, score] pairs (score may be null, which counts as 0).
func newTokenizer(vocabJSON []byte) (*tokenizer, error) {
	var raw [][2]json.RawMessage
	if err := json.Unmarshal(vocabJSON, &raw); err != nil {
		return nil, fmt.Errorf("parse vocab.json: %w", err)
	}
	if len(raw) <= reservedIDs {
		return nil, fmt.Errorf("parse vocab.json: only %d entries", len(raw))
	}
	t := &tokenizer{pieceLen: make([]int, len(raw)), root: newTrieNode()}
	for i, e := range raw {
		var piece string
		if err := json.Unmarshal(e[0], &piece); err != nil {
			return nil, fmt.Errorf("parse vocab.json entry %d: %w", i, err)
		}
		var score *float64
		if err := json.Unmarshal(e[1], &score); err != nil {
			return nil, fmt.Errorf("parse vocab.json entry %d score: %w", i, err)
		}
		t.pieceLen[i] = len([]rune(piece))
		if i < reservedIDs {
			continue
		}
		n := t.root
		for _, r := range piece {
			c := n.children[r]
			if c == nil {
				c = newTrieNode()
				n.children[r] = c
			}
			n = c
		}
		n.id = int32(i)
		if score != nil {
			n.score = float32(*score)
		}
	}
	return t, nil
}

func newTrieNode() *trieNode { return &trieNode{children: map[rune]*trieNode{}, id: -1} }

// lattice edge: a piece from start to end (exclusive, in code points).
type edge struct {
	start int
	id    int32
	score float32
}

// encode returns the token ids of text, as the TF.js tokenizer does: NFKC,
// a leading "▁" with spaces replaced by "▁", Viterbi with "replace when
// best is 0 or the new score is at least as good", backtrack, merge runs of
// unknown (id 0) tokens.
func (t *tokenizer) encode(text string) []int32 {
	s := "\u2581" + strings.ReplaceAll(norm.NFKC.String(text), " ", "\u2581")
	sym := []rune(s)
	n := len(sym)
	// ends[e] lists edges ending at e in ascending start order, because
	// starts are visited in ascending order.
	ends := make([][]edge, n+1)
	for i := 0; i < n; i++ {
		node := t.root.children[sym[i]]
		matched := false
		for j := i; node != nil; j++ {
			if node.id >= 0 {
				ends[j+1] = append(ends[j+1], edge{start: i, id: node.id, score: node.score})
				matched = true
			}
			if j+1 >= n {
				break
			}
			node = node.children[sym[j+1]]
		}
		if !matched {
			ends[i+1] = append(ends[i+1], edge{start: i, id: 0, score: 0})
		}
	}
	best := make([]float32, n+1)
	words := make([]int32, n+1)
	for e := 0; e <= n; e++ {
		for _, ed := range ends[e] {
			score := ed.score + best[ed.start]
			if best[e] == 0 || score >= best[e] {
				best[e] = score
				words[e] = ed.id
			}
		}
	}
	var rev []int32
	for it := n; it > 0; {
		id := words[it]
		rev = append(rev, id)
		step := t.pieceLen[id]
		if step < 1 {
			step = 1
		}
		it -= step
	}
	out := make([]int32, 0, len(rev))
	prevUnk := false
	for _, id := range rev {
		if !(prevUnk && id == 0) {
			out = append(out, id)
		}
		prevUnk = id == 0
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
