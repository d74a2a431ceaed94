package search

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/hybrid"
	"github.com/agentfinder/agentfinder/searchapi/query"
	"github.com/agentfinder/agentfinder/searchapi/score"
)

// TestOrderByLiveness: a result whose endpoint is not live goes below the
// live results scoring up to 10 points less, not below those scoring less
// still; scores never change.
func TestOrderByLiveness(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e"}
	scores := []float64{0.90, 0.85, 0.78, 0.70, 0.60}
	health := map[string]string{"a": "down", "b": "up", "c": "unknown", "d": "not_mcp", "e": "up"}
	pool := make([]query.Scored, len(ids))
	docs := map[string]meiliHit{}
	for i, id := range ids {
		pool[i] = query.Scored{ID: id}
		docs[id] = meiliHit{"health": json.RawMessage(`{"status":"` + health[id] + `"}`)}
	}
	rel := &relevance{rk: &score.Ranking{Order: []int{0, 1, 2, 3, 4}, Scores: slices.Clone(scores)}}
	dead := orderByLiveness(rel, pool, docs)
	var got []string
	for _, i := range rel.rk.Order {
		got = append(got, ids[i])
	}
	// a (0.90, down) ranks as 0.80: below b (0.85), above c (0.78).
	// d (0.70, not_mcp) ranks as 0.60: below e (0.60) too, stably.
	if want := []string{"b", "a", "c", "e", "d"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if !slices.Equal(rel.rk.Scores, scores) {
		t.Errorf("scores changed: %v, want %v", rel.rk.Scores, scores)
	}
	if len(dead) != 2 || dead["a"] != "down" || dead["d"] != "not_mcp" {
		t.Errorf("dead %v, want a down and d not_mcp", dead)
	}
}

// TestMatchTools: a server's tools holding half of the request's words
// or more are named, best first; a plural matches its stem; a server the
// tools sub-queries did not find names none. The word sets name them
// (planTools) as the list does: a list the word sets do not describe (a
// tool document written since the tools answer), or a server whose answer
// carried no word sets, has every tool asked.
func TestMatchTools(t *testing.T) {
	var ts normalize.ToolSet
	err := json.Unmarshal([]byte(`{"source": "tools/list", "listed": 3, "items": [
	  {"name": "docx_to_text", "description": "Extract the plain text of a Word (.docx) file."},
	  {"name": "pdf_to_markdown", "title": "PDF to Markdown", "description": "Convert a PDF document into clean Markdown text."},
	  {"name": "markdown_lint", "description": "Check Markdown files for style problems."}]}`), &ts)
	if err != nil {
		t.Fatal(err)
	}
	tools := hybrid.NewServerTools(ts.Items)
	got := matchOf(tools, ts.Items, []string{"convert", "pdf", "markdown"})
	if len(got) != 1 || got[0].Name != "pdf_to_markdown" || got[0].Match != 1 {
		t.Errorf("matchTools: %+v, want pdf_to_markdown alone with match 1 (markdown_lint holds one word of three)", got)
	}
	if got := matchOf(tools, ts.Items, []string{"markdowns"}); len(got) != 2 {
		t.Errorf("a plural matches its stem: %+v, want the two markdown tools", got)
	}
	if got := matchOf(tools, ts.Items, []string{"geocode", "address", "markdown"}); got != nil {
		t.Errorf("a server whose words hold a third of the request's: %+v, want none", got)
	}
	if got := matchOf(nil, nil, []string{"pdf"}); got != nil {
		t.Errorf("no tools: %+v", got)
	}
	if p, ok := planTools(tools, []string{"plain", "word", "geocode"}); !ok || !slices.Equal(p.cand, []int{0}) {
		t.Errorf("plain word geocode: plan %+v (%v), want docx_to_text alone named by the word sets", p, ok)
	}
	// Written since: a tool added before the matching one, another list.
	since := append([]normalize.Tool{{Name: "pdf_convert", Description: "Convert a PDF to Markdown."}}, ts.Items...)
	if got := matchOf(tools, since, []string{"convert", "pdf", "markdown"}); len(got) != 2 || got[0].Name != "pdf_convert" || got[1].Name != "pdf_to_markdown" {
		t.Errorf("a list the word sets do not describe: %+v, want its every tool asked (pdf_convert and pdf_to_markdown)", got)
	}
	older := &hybrid.ServerTools{Words: normalize.ToolWords(&ts)}
	if got := matchOf(older, ts.Items, []string{"convert", "pdf", "markdown"}); len(got) != 1 || got[0].Name != "pdf_to_markdown" {
		t.Errorf("no word sets: %+v, want pdf_to_markdown, from the list", got)
	}
}

// matchOf is what matchTools names of a server st, its list read as list.
func matchOf(st *hybrid.ServerTools, list []normalize.Tool, qterms []string) []MatchedTool {
	p, ok := planTools(st, qterms)
	if !ok {
		return nil
	}
	return p.match(list, qterms)
}
