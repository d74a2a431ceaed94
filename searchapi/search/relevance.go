package search

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/hybrid"

	"github.com/agentfinder/agentfinder/searchapi/query"
	"github.com/agentfinder/agentfinder/searchapi/score"
)

// poolSize is how many of the fused ranking's first results the relevance
// model re-orders and compares with each other (score.Model.Rank): the
// pool it was fitted with.
const poolSize = 30

// textAttributes are the fields whose words count towards how much of a
// request an entry covers (score.Candidate.Text); all are retrieved with
// searchAttributes.
var textAttributes = []string{"description", "tags", "capabilities", "representativeQueries", "publisher"}

// relevance is the scoring of one request: the model's ranking of its
// pool, against which every result of the request is scored, later pages
// and other registries' results included.
type relevance struct {
	model *score.Model
	req   score.Request
	rk    *score.Ranking
	// floor is the pool's lowest score: a result past the pool never
	// scores above it, so scores fall along the ranking.
	floor float64
	// vec is the query vector (nil: keyword only), for upstream results.
	vec []float32
	// pool holds the pool's candidates in fused order, cands every local
	// candidate scored so far by identifier, for scoring a federated page
	// again with other registries' results.
	pool  []score.Candidate
	ids   []string
	cands map[string]score.Candidate
	// tools holds the tools sub-queries' servers by identifier, whose
	// tool words score their documents (localCandidate).
	tools map[string]*hybrid.ServerTools
}

// rankPool scores the pool (the first results of the fused ranking res,
// docs holding their fetched documents by identifier) and orders it,
// placing its candidates among res's first tier (score.Request.Tier);
// tools are the servers the tools sub-queries found, by identifier; talk
// is the request's similarity with small talk (Server.smallTalk).
func rankPool(res rankedResult, pool []query.Scored, docs map[string]meiliHit, tools map[string]*hybrid.ServerTools, vec []float32, talk float64) *relevance {
	rel := &relevance{model: &score.Default, req: score.Request{Docs: res.Total, SmallTalk: talk}, vec: vec, floor: 1,
		cands: make(map[string]score.Candidate, len(pool)), tools: tools}
	if vec == nil {
		rel.model = &score.KeywordOnly
	}
	for i, t := range res.Terms {
		n := 0
		if i < len(res.TermDocs) {
			n = res.TermDocs[i]
		}
		rel.req.Terms = append(rel.req.Terms, score.Term{Word: t, Docs: n})
	}
	for _, h := range res.Hits[:res.Shallow] {
		rel.req.Tier = append(rel.req.Tier, score.Sides{Semantic: h.Semantic, Keyword: h.Keyword})
	}
	cands := make([]score.Candidate, len(pool))
	for i, h := range pool {
		cands[i] = rel.localCandidate(h.ID, docs[h.ID], h.Keyword, h.Semantic)
		if res.Preferred[h.ID] {
			cands[i].Weight = preferredWeight
		}
		rel.cands[h.ID] = cands[i]
	}
	rel.pool = cands
	for _, h := range pool {
		rel.ids = append(rel.ids, h.ID)
	}
	rel.rk = rel.model.Rank(&rel.req, cands)
	for _, p := range rel.rk.Scores {
		rel.floor = math.Min(rel.floor, p)
	}
	if len(pool) == 0 {
		rel.floor = 0
	}
	return rel
}

// scoreOf scores a result outside the pool (0..1), never above the pool's
// lowest score.
func (rel *relevance) scoreOf(id string, doc map[string]json.RawMessage, keyword, semantic float64) float64 {
	c := rel.localCandidate(id, doc, keyword, semantic)
	rel.cands[id] = c
	return math.Min(rel.model.Score(&rel.req, rel.rk, &c), rel.floor)
}

// localCandidate describes this registry's entry id (its fetched
// document doc) for scoring: candidateOf, with the words of its tools when
// the tools sub-queries found it (a server they did not find holds few of
// the request's words in its tools), handed over as they were read.
func (rel *relevance) localCandidate(id string, doc map[string]json.RawMessage, keyword, semantic float64) score.Candidate {
	c := candidateOf(doc, keyword, semantic)
	if st := rel.tools[id]; st != nil && doc != nil {
		c.ToolWords = st.Words
	}
	return c
}

// candidateOf describes an entry (a fetched document or an upstream
// result) for scoring; a missing document is an empty candidate.
func candidateOf(doc map[string]json.RawMessage, keyword, semantic float64) score.Candidate {
	c := score.Candidate{Keyword: keyword, Semantic: semantic}
	if doc == nil {
		return c
	}
	c.Name, _ = hybrid.String(doc["displayName"])
	for _, f := range textAttributes {
		c.Text = append(c.Text, hybrid.Strings(doc[f])...)
	}
	return c
}

// cutoff is the minimum score q's results must reach: the request's,
// else the server's, else the scoring model's (rel nil: keyword only).
func (s *Engine) cutoff(q *Query, rel *relevance) int {
	switch {
	case q.MinScore != nil:
		return *q.MinScore
	case s.minScore != nil:
		return *s.minScore
	case rel != nil:
		return rel.model.MinScore
	}
	return score.KeywordOnly.MinScore
}

// emptyReason is the reason an answer gives for an empty first page: the
// cut-off left out every result. "" otherwise.
func (s *Engine) emptyReason(q *Query, hits []federation.Hit, lp localPage) string {
	if len(hits) > 0 || q.PageToken != "" {
		return ""
	}
	if r := noMatchReason(lp.Best, s.cutoff(q, lp.Rel)); r != "" {
		return r
	}
	if s.cfg.Unseeded != nil && s.cfg.Unseeded() {
		return UnseededReason
	}
	return ""
}

// UnseededReason is why a registry with no seeds finds nothing.
const UnseededReason = "this registry has no seeds, so it has crawled nothing: its operator gives it seeds (agentfinder serve --seed DOMAIN or --seeds FILE)"

// noMatchReason says why a first page came back empty when results were
// left out by the cut-off; "" when none was (nothing matched the filters).
func noMatchReason(best, cut int) string {
	if best < 0 {
		return ""
	}
	return fmt.Sprintf("no entry matches this request well enough: the best scored %d, below minScore %d; send minScore 0 to see every result", best, cut)
}

// rescoreFederated scores a federated page again, on this registry's
// scale: other registries' scores are not comparable, so their results
// are described like local ones (each entry's name and text against the
// request's terms, its entry text's vector against the query vector) and
// ranked together with the local pool, whose confidence then also reflects
// the best upstream match. Results the cut-off rule (score.Model.Keep)
// leaves out are dropped, the rest sorted by score (stable: ties keep the
// federated order). best is the highest score before the cut (-1: no
// result).
func (s *Engine) rescoreFederated(ctx context.Context, rel *relevance, hits []federation.Hit, cut int) (out []federation.Hit, best int) {
	upstream := s.upstreamCandidates(ctx, rel, hits)
	pool := append(slices.Clip(rel.pool), upstream...)
	rk := rel.model.Rank(&rel.req, pool)
	floor := 1.0
	for _, p := range rk.Scores {
		floor = math.Min(floor, p)
	}
	at := make(map[string]int, len(rel.pool))
	for i, id := range rel.ids {
		at[id] = i
	}
	best, u := -1, len(rel.pool)
	pct := make([]int, len(hits))
	for i, h := range hits {
		var p float64
		switch j, ok := at[h.Identifier]; {
		case !h.Local:
			p, u = rk.Scores[u], u+1
		case ok:
			p = rk.Scores[j]
		default:
			c := rel.cands[h.Identifier]
			p = math.Min(rel.model.Score(&rel.req, rk, &c), floor)
		}
		pct[i] = score.Percent(p)
		best = max(best, pct[i])
	}
	for i, h := range hits {
		if !rel.model.Keep(pct[i], best, cut) {
			continue
		}
		h.Score = float64(pct[i])
		h.Entry["score"] = json.RawMessage(strconv.Itoa(pct[i]))
		out = append(out, h)
	}
	slices.SortStableFunc(out, func(a, b federation.Hit) int { return cmp.Compare(b.Score, a.Score) })
	return crowdHits(rel.model, out), best
}

// upstreamCandidates describes the other registries' results of hits, in
// order, with the similarity of their entry texts' vectors to the query
// vector (0 keyword only, or when embedding fails).
func (s *Engine) upstreamCandidates(ctx context.Context, rel *relevance, hits []federation.Hit) []score.Candidate {
	var texts []string
	var out []score.Candidate
	for _, h := range hits {
		if !h.Local {
			texts = append(texts, normalize.EntryText(upstreamRecord(h.Entry)))
			out = append(out, candidateOf(h.Entry, 0, 0))
		}
	}
	if len(out) == 0 || rel.vec == nil || s.cfg.Embedder == nil {
		return out
	}
	vecs, err := s.cfg.Embedder.Embed(ctx, texts)
	if err != nil || len(vecs) != len(texts) {
		if ctx.Err() == nil {
			s.log.Warn("embedding upstream results failed; scored by words only", "correlationId", s.correlationID(ctx), "err", err)
		}
		return out
	}
	for i := range out {
		if _, c := hybrid.BestMatch(rel.vec, vecs[i:i+1]); c != 0 {
			out[i].Semantic = (1 + c) / 2 // as Meilisearch reports semantic scores
		}
	}
	return out
}

// upstreamRecord reads the fields of an upstream result that its entry
// text is made of.
func upstreamRecord(e map[string]json.RawMessage) normalize.Record {
	var r normalize.Record
	_ = json.Unmarshal(e["displayName"], &r.DisplayName)
	_ = json.Unmarshal(e["description"], &r.Description)
	r.Capabilities = hybrid.Strings(e["capabilities"])
	r.SkillNames = hybrid.Strings(e["skillNames"])
	r.Tags = hybrid.Strings(e["tags"])
	return r
}
