package search

import (
	"cmp"
	"slices"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/hybrid"
)

// MatchedTool is a tool of a result whose text holds words of the request:
// a result's matchedTools, the evidence's, and GET /tools's tool.
type MatchedTool struct {
	Name        string                     `json:"name"`
	Title       string                     `json:"title,omitempty"`
	Description string                     `json:"description,omitempty"`
	Params      []string                   `json:"params,omitempty"`
	Annotations *normalize.ToolAnnotations `json:"annotations,omitempty"`
	// Match is the share of the request's informative words the tool's
	// name, title and description hold (0..1).
	Match float64 `json:"match"`
}

// FieldMatchedTools is the member of a result entry holding its
// []MatchedTool.
const FieldMatchedTools = "matchedTools"

// maxMatchedTools bounds the tools named per result.
const maxMatchedTools = 3

// minToolMatch is the share of the request's words a tool must hold to be
// named: half, so a one-word request names tools with that word and a
// four-word request tools with two of them.
const minToolMatch = 0.5

// matchTools returns the tools of a result's server (st, as the tools
// sub-queries read them; nil when they did not find it) that match the
// request's informative words qterms, best first: at most
// maxMatchedTools, each holding at least minToolMatch of the words; a
// server namesTools refuses names none. A tool's words are among its
// server's, so each tool is asked only for the terms its server's words
// hold.
func matchTools(st *hybrid.ServerTools, qterms []string) []MatchedTool {
	if st == nil {
		return nil
	}
	held := heldTerms(st, qterms)
	if !namesEnough(len(held), len(qterms)) {
		return nil
	}
	tools, words := st.List()
	var out []MatchedTool
	for i, t := range tools {
		m := float64(toolHolds(words[i], held)) / float64(len(qterms))
		if m < minToolMatch {
			continue
		}
		out = append(out, MatchedTool{Name: t.Name, Title: t.Title, Description: t.Description, Params: t.Params, Annotations: t.Annotations, Match: Round3(m)})
	}
	slices.SortStableFunc(out, func(a, b MatchedTool) int { return cmp.Compare(b.Match, a.Match) })
	return out[:min(len(out), maxMatchedTools)]
}

// namesTools is the rule a server's tool words must meet for one of its
// tools to match the request's informative words qterms: a tool's words
// are among its server's, so a server whose words hold less than
// minToolMatch of qterms names none (hybrid.Request.NamesTools).
func namesTools(qterms []string) func(st *hybrid.ServerTools) bool {
	return func(st *hybrid.ServerTools) bool {
		return namesEnough(len(heldTerms(st, qterms)), len(qterms))
	}
}

// namesEnough reports whether held terms of a request's n informative
// words are enough for a server's tools to name one (namesTools).
func namesEnough(held, n int) bool {
	return n > 0 && float64(held)/float64(n) >= minToolMatch
}

// heldTerms are the terms st's tool words hold (ServerTools.Holds: equal,
// or one the other's stem).
func heldTerms(st *hybrid.ServerTools, terms []string) []string {
	var out []string
	for _, t := range terms {
		if st.Holds(t) {
			out = append(out, t)
		}
	}
	return out
}

// toolHolds is how many of terms a tool's words (one space apart) hold
// (hybrid.HoldsTerm).
func toolHolds(words string, terms []string) int {
	n := 0
	for _, t := range terms {
		if hybrid.HoldsTerm(words, t) {
			n++
		}
	}
	return n
}
