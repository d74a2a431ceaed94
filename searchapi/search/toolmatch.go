package search

import (
	"cmp"
	"context"
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

// toolPlan is what a result's server needs for its tools to be named:
// the request's informative words its tool words hold (held) and, when its
// tools answer carried word sets (known), how many of them each tool holds
// by those sets (counts) and the places of the tools holding enough (cand).
// Without word sets every tool is asked.
type toolPlan struct {
	held   []string
	counts []int
	cand   []int
	known  bool
}

// planTools returns the toolPlan of a result's server st (nil when the
// tools sub-queries did not find it) for the request's informative words
// qterms; false when none of its tools can match them: a tool's words are
// among its server's, so a server whose words hold less than minToolMatch
// of qterms names none, and a tool whose word set holds less names none.
func planTools(st *hybrid.ServerTools, qterms []string) (toolPlan, bool) {
	if st == nil {
		return toolPlan{}, false
	}
	held := heldTerms(st, qterms)
	if !namesEnough(len(held), len(qterms)) {
		return toolPlan{}, false
	}
	p := toolPlan{held: held}
	p.counts, p.known = st.ToolHolds(held)
	if !p.known {
		return p, true
	}
	for i, n := range p.counts {
		if namesEnough(n, len(qterms)) {
			p.cand = append(p.cand, i)
		}
	}
	return p, len(p.cand) > 0
}

// match returns the tools of tools, the server's list, that match the
// request's informative words qterms, best first: at most
// maxMatchedTools, each holding at least minToolMatch of the words. It
// asks the tools the word sets named (p.cand), each once, when the list
// is the one they describe (as many tools, each named one holding as many
// of the words as its set said); else (a list written since the tools
// answer, or one without word sets) every tool.
func (p toolPlan) match(tools []normalize.Tool, qterms []string) []MatchedTool {
	named, ok := p.namedHolds(tools)
	var out []MatchedTool
	add := func(t normalize.Tool, n int) {
		if namesEnough(n, len(qterms)) {
			m := float64(n) / float64(len(qterms))
			out = append(out, MatchedTool{Name: t.Name, Title: t.Title, Description: t.Description, Params: t.Params, Annotations: t.Annotations, Match: Round3(m)})
		}
	}
	if ok {
		for k, i := range p.cand {
			add(tools[i], named[k])
		}
	} else {
		for _, t := range tools {
			add(t, hybrid.ListHolds(t, p.held))
		}
	}
	slices.SortStableFunc(out, func(a, b MatchedTool) int { return cmp.Compare(b.Match, a.Match) })
	return out[:min(len(out), maxMatchedTools)]
}

// namedHolds returns how many of the held words each tool the word sets
// named (p.cand) holds by its own words (hybrid.ListHolds), and whether
// tools is the list the sets describe: as many tools, and each named one
// holding what its set said.
func (p toolPlan) namedHolds(tools []normalize.Tool) ([]int, bool) {
	if !p.known || len(p.counts) != len(tools) {
		return nil, false
	}
	named := make([]int, len(p.cand))
	for k, i := range p.cand {
		if named[k] = hybrid.ListHolds(tools[i], p.held); named[k] != p.counts[i] {
			return nil, false
		}
	}
	return named, true
}

// matchTools returns, by identifier, the tools of the results ids that
// match the request q's informative words qterms (toolPlan.match), their
// servers' tools as the tools sub-queries read them in servers. The tool
// lists of the servers whose word sets name a tool are read in one
// request, under the search's filter (hybrid.ReadToolLists): most pages
// have none, and read nothing. A failed read costs those results their
// matched tools alone, and is logged.
func (s *Engine) matchTools(ctx context.Context, q *Query, qterms []string, servers map[string]*hybrid.ServerTools, ids []string) map[string][]MatchedTool {
	plans := map[string]toolPlan{}
	var read []string
	for _, id := range ids {
		if p, ok := planTools(servers[id], qterms); ok {
			plans[id] = p
			read = append(read, id)
		}
	}
	if len(plans) == 0 {
		return nil
	}
	lists, err := s.readLists(ctx, q, read)
	if err != nil && ctx.Err() == nil {
		s.log.Warn("reading the tool lists failed; answering without matched tools", "correlationId", s.correlationID(ctx), "err", err)
	}
	out := make(map[string][]MatchedTool, len(plans))
	for id, p := range plans {
		if m := p.match(lists[id], qterms); len(m) > 0 {
			out[id] = m
		}
	}
	return out
}

// readLists reads the tool lists of the servers ids (identifiers) under
// q's filter (none when ids is empty or the tools index is missing).
func (s *Engine) readLists(ctx context.Context, q *Query, ids []string) (map[string][]normalize.Tool, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	uid := s.toolIndex(ctx)
	if uid == "" {
		return nil, nil
	}
	return hybrid.ReadToolLists(ctx, s.cfg.Meili, uid, normalize.FieldIdentifier, s.filter(q), ids)
}

// namesEnough reports whether held terms of a request's n informative
// words are enough for a server's tools, or a tool, to name one
// (planTools).
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
