package search

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
	"github.com/agentfinder/agentfinder/searchapi/hybrid"
	"github.com/agentfinder/agentfinder/searchapi/query"
	"github.com/agentfinder/agentfinder/searchapi/score"
)

// filter returns the Meilisearch filter of the query's hard constraints:
// the caller's filters (userFilters) and the base every search has
// (baseFilter).
func (s *Engine) filter(q *Query) filter.Expr {
	return filter.And(append(s.userFilters(q), s.baseFilters(q)...)...)
}

// baseFilter is the filter of a search without the caller's filters: live
// records (unless stale ones are asked for) the caller may see. Scores are
// computed over what it admits, whatever else filters the results.
func (s *Engine) baseFilter(q *Query) filter.Expr {
	return filter.And(s.baseFilters(q)...)
}

// userFilters are the constraints the request itself adds.
func (s *Engine) userFilters(q *Query) []filter.Expr {
	parts := make([]filter.Expr, 0, len(q.Groups)+3)
	for _, g := range q.Groups {
		parts = append(parts, g.Expr())
	}
	if q.VerifiedOnly {
		parts = append(parts, filter.Is(normalize.FieldPublisherVerified, true))
	}
	if q.MaxIndexAge > 0 {
		parts = append(parts, filter.Since(normalize.FieldIndexedAtTs, s.now().Add(-q.MaxIndexAge)))
	}
	if q.MaxMetadataAge > 0 {
		parts = append(parts, filter.Since(normalize.FieldUpdatedAtTs, s.now().Add(-q.MaxMetadataAge)))
	}
	return parts
}

func (s *Engine) baseFilters(q *Query) []filter.Expr {
	var parts []filter.Expr
	if !q.IncludeStale {
		parts = append(parts, filter.Live(s.now()))
	}
	return append(parts, filter.Access(q.Access))
}

// searchAttributes are the document fields a search retrieves: everything a
// result shows plus what evidence needs. Internal fields stay in the index.
var searchAttributes = []string{
	"identifier", "displayName", "type", "url", "data", "description", "tags", "capabilities",
	"representativeQueries", "version", "updatedAt", "metadata", "trustManifest",
	"publisher", "publisherVerified", "compliance", "protocols", "skills", "bindings",
	"status", "expiresAt", "indexedAt", "trust", "health",
}

// evidenceAttributes are retrieved in addition when evidence is asked for.
var evidenceAttributes = []string{"examples"}

// matchingStrategy decides which documents match a multi-word query.
// Requests are long and conversational; "last" (Meilisearch's default) drops
// words from the end and always keeps the first one ("Can", "I", ...), while
// "frequency" drops the most frequent, least informative words first: it
// found about twice as many on the relevance set (docs/MEASUREMENTS.md).
// Config.QueryRewriter strips the filler before.
const matchingStrategy = meilisearch.Frequency

// exploreSearch is /explore's one keyword Meilisearch request over the
// rewritten text: no hits, an exact total and the distribution of facets.
// POST /search ranks with the fused search of localSearch instead.
func (s *Engine) exploreSearch(q *Query, facets []string) *meilisearch.SearchRequest {
	text := q.Text
	if s.cfg.QueryRewriter != nil {
		if t := s.cfg.QueryRewriter(text); strings.TrimSpace(t) != "" {
			text = t
		}
	}
	zero := int64(0)
	return &meilisearch.SearchRequest{
		Query:            text,
		Page:             1,
		HitsPerPage:      &zero, // no hits, an exact total
		Filter:           s.filter(q).Filter(),
		Facets:           facets,
		MatchingStrategy: matchingStrategy,
	}
}

// meiliHit is one hit as Meilisearch returns it: the retrieved fields plus
// _rankingScore and, with evidence, _rankingScoreDetails.
type meiliHit map[string]json.RawMessage

type meiliSearchResponse struct {
	Hits               []meiliHit      `json:"hits"`
	EstimatedTotalHits int64           `json:"estimatedTotalHits"`
	TotalHits          int64           `json:"totalHits"`
	FacetDistribution  json.RawMessage `json:"facetDistribution"`
}

// rawSearch runs req and decodes the answer.
func (s *Engine) rawSearch(ctx context.Context, req *meilisearch.SearchRequest) (*meiliSearchResponse, error) {
	raw, err := s.index.SearchRawWithContext(ctx, req.Query, req)
	if err != nil {
		return nil, err
	}
	return decodeSearchResponse(*raw)
}

// preferredWeight is how much an entry carrying a preferred tag is boosted:
// its fused score is multiplied by this for ranking (the score it shows is
// not), so a preferred entry passes others scoring up to a third more, but
// not a much better match (xu §5.1: preferred tags are soft).
const preferredWeight = 1.5

// searchTerms returns the words searched one by one on the keyword side:
// the informative terms of the rewritten request (query.Analyze), or, with
// no rewriter or when none is left, the request's distinct words; at most
// query.MaxTerms.
func (s *Engine) searchTerms(text string) []string {
	if s.cfg.QueryRewriter != nil {
		if t := query.Analyze(s.cfg.QueryRewriter(text)).SearchTerms(); len(t) > 0 {
			return t
		}
	}
	var out []string
	for _, w := range normalize.Words(text) {
		if !slices.Contains(out, w) {
			out = append(out, w)
			if len(out) == query.MaxTerms {
				break
			}
		}
	}
	return out
}

// queryVector embeds the request text as typed (the sentence model reads
// sentences; the rewritten keyword list embeds worse), once per request;
// the first request embeds the small-talk phrases in the same call
// (Server.smallTalk). It returns nil without an embedder or when embedding
// fails (keyword only).
func (s *Engine) queryVector(ctx context.Context, text string) []float32 {
	if !s.embeds(text) {
		return nil
	}
	texts := []string{text}
	talk := s.talk.missing()
	if talk {
		texts = append(texts, score.SmallTalk...)
	}
	vecs, err := s.cfg.Embedder.Embed(ctx, texts)
	switch {
	case err == nil && len(vecs) == len(texts) && len(vecs[0]) > 0:
		if talk {
			s.talk.set(vecs[1:])
		}
		return vecs[0]
	case ctx.Err() == nil:
		s.log.Warn("query embedding failed; keyword search only", "correlationId", s.correlationID(ctx), "err", err)
	}
	return nil
}

// newPlan prepares the fused search of q: its terms, its filter (applied
// to every sub-query), its preferred tags and its vector (nil: keyword only,
// never a semanticRatio of 0, which the Go client drops).
func (s *Engine) newPlan(ctx context.Context, q *Query, vec []float32) hybrid.Request {
	return s.planOf(ctx, q, preparedQuery{terms: s.searchTerms(q.Text), vec: vec})
}

// planOf is newPlan with the request's terms and vector prepared.
func (s *Engine) planOf(ctx context.Context, q *Query, p preparedQuery) hybrid.Request {
	terms, vec := p.terms, p.vec
	r := hybrid.Request{
		Index:         s.cfg.Index,
		ToolIndex:     s.toolIndex(ctx),
		Text:          q.Text,
		Terms:         terms,
		Vector:        vec,
		Filter:        s.filter(q).Filter(),
		KeywordWeight: s.keywordWeight,
		IDField:       normalize.FieldIdentifier,
	}
	if len(q.PreferredTags) > 0 {
		r.Prefer = &hybrid.Preference{Field: normalize.FieldTags, Values: q.PreferredTags, Weight: preferredWeight}
	}
	return r
}

// shallowDepth is the sub-query depth of the first tier of results: what
// the relevance set was tuned with (query.SubQueryLimit hits per sub-query).
const shallowDepth = query.SubQueryLimit

// rankedResult is the fused ranking of one request.
type rankedResult struct {
	// Hits are the results, best first: every result of the first tier,
	// then, when a page reaches past it, those of the deep tier.
	Hits []query.Scored
	// Shallow is how many of Hits come from the first tier.
	Shallow int
	// Preferred holds the identifiers a preferred tag boosted.
	Preferred map[string]bool
	// Terms, TermDocs and Total are the first tier's hybrid.Result fields.
	Terms    []string
	TermDocs []int
	Total    int
	// Tools are the tools of the servers the tools sub-queries found, by
	// identifier (hybrid.Result.Tools); a filtered search's
	// (Engine.scaled) hold also those its base search found.
	Tools map[string]*hybrid.ServerTools
}

// ranked returns at least the first n results of p's ranking when there
// are as many (n <= MaxOffset+1). The ranking is two tiers, each
// fused deterministically: every result of the fusion of shallowDepth hits
// per sub-query, then the results of the fusion of MaxOffset+1 hits
// per sub-query not already listed. Every page slices the same sequence,
// so pages neither repeat nor skip results while the index does not
// change; the deep tier is fetched only by pages that reach past the
// first.
func (s *Engine) ranked(ctx context.Context, r hybrid.Request, n int) (rankedResult, error) {
	r.Limit = 0 // every fused result of shallowDepth hits per sub-query
	first, err := hybrid.Search(ctx, s.cfg.Meili, r)
	if err != nil {
		return rankedResult{}, err
	}
	s.toolsFailed(ctx, first.ToolErr, &r)
	return s.deepen(ctx, r, first, n)
}

// deepen is ranked given the first tier of r's ranking (first, fused with
// r.Limit 0): the deep tier is fetched when first holds fewer than n
// results.
func (s *Engine) deepen(ctx context.Context, r hybrid.Request, first hybrid.Result, n int) (rankedResult, error) {
	res := rankedResult{Hits: first.Hits, Shallow: len(first.Hits), Preferred: first.Preferred,
		Terms: first.Terms, TermDocs: first.TermDocs, Total: first.Total, Tools: first.Tools}
	if len(first.Hits) >= n {
		return res, nil
	}
	r.Limit = MaxOffset + 1
	deep, err := hybrid.Search(ctx, s.cfg.Meili, r)
	if err != nil {
		return rankedResult{}, err
	}
	s.toolsFailed(ctx, deep.ToolErr)
	seen := make(map[string]bool, len(first.Hits))
	res.Hits = slices.Clip(first.Hits)
	for _, h := range first.Hits {
		seen[h.ID] = true
	}
	for _, h := range deep.Hits {
		if len(res.Hits) == n {
			break
		}
		if !seen[h.ID] {
			res.Hits = append(res.Hits, h)
		}
	}
	for id := range deep.Preferred {
		if res.Preferred == nil {
			res.Preferred = map[string]bool{}
		}
		res.Preferred[id] = true
	}
	res.Tools = withTools(res.Tools, deep.Tools)
	return res, nil
}

// localPage is one page of local results.
type localPage struct {
	Hits []federation.Hit
	// Next is the offset of the next page, 0 when done.
	Next int
	// Rel scores every result of the request (upstream ones too).
	Rel *relevance
	// Best is the highest score of the request's results (-1: none), for
	// the reason of an empty answer.
	Best int
	// Facets counts the values of q.Facets over the first tier of
	// candidates (nil when it named none).
	Facets map[string]map[string]int
}

// localSearch answers q from the index, starting at offset. The first
// poolSize results of the fused ranking under the base filter (scaled) are
// re-ordered and scored by the relevance model; the request's results are
// those of the pool its filters keep, in the model's order, then the rest
// of its own fused ranking, each scored on the pool's scale, so that a
// filter never changes the score of a record it keeps. Results the cut-off
// rule (score.Model.Keep) leaves out are left out.
func (s *Engine) localSearch(ctx context.Context, q *Query, offset int) (localPage, error) {
	out := localPage{Best: -1}
	limit := q.PageSize
	if offset+limit > MaxOffset {
		limit = MaxOffset - offset
	}
	if limit <= 0 {
		return out, nil
	}
	w := s.stopwatch(ctx)
	prep := s.prepare(ctx, q.Text, &w)
	vec := prep.vec
	res, scale, err := s.scaled(ctx, q, prep, offset+limit+1)
	if err != nil && vec != nil && noEmbedder(err) {
		// The index has no embedder yet (a read node of a cluster serves
		// before the leader's first setup adds it): keyword search only.
		s.log.Warn("the index has no embedder yet; keyword search only", "correlationId", s.correlationID(ctx), "err", err)
		prep.vec, vec = nil, nil
		res, scale, err = s.scaled(ctx, q, prep, offset+limit+1)
	}
	if err != nil {
		return out, err
	}
	w.lap(StageSearch)
	pool := scale.Hits[:min(poolSize, scale.Shallow)]
	present, rest := split(res.Hits, pool)
	n := present + len(rest)
	end := min(offset+limit, n)
	ids := pageIDs(pool, rest, present, offset, end)
	qt := normalize.Terms(q.Text) // for evidence and matched tools
	byID, err := s.fetchPage(ctx, q, ids, vec, res.Hits[:res.Shallow], &out)
	if err != nil {
		return out, err
	}
	w.lap(StageFetch)
	rel := rankPool(scale, pool, byID, res.Tools, vec, s.smallTalk(vec))
	dead := orderByLiveness(rel, pool, byID)
	out.Rel = rel
	seq, poolScores := rel.sequence(pool, hitIDs(res.Hits), rest)
	scoreAt := func(i int) float64 {
		if i < len(poolScores) {
			return poolScores[i]
		}
		return rel.scoreOf(seq[i].ID, byID[seq[i].ID], seq[i].Keyword, seq[i].Semantic)
	}
	cut := s.cutoff(q, rel)
	for _, p := range poolScores {
		out.Best = max(out.Best, score.Percent(p))
	}
	if out.Best < 0 && n > 0 {
		out.Best = score.Percent(scoreAt(0))
	}
	crowdPool(rel.model, seq, poolScores, byID, func(p float64) bool { return rel.model.Keep(score.Percent(p), out.Best, cut) })
	w.lap(StageRerank)
	var shown, pct []int
	for i := offset; i < end; i++ {
		p := score.Percent(scoreAt(i))
		if _, ok := byID[seq[i].ID]; ok && rel.model.Keep(p, out.Best, cut) {
			shown, pct = append(shown, i), append(pct, p) // else below the cut-off, or removed since the search
		}
	}
	tools := s.matchTools(ctx, q, qt, res.Tools, shownIDs(seq, shown))
	for j, i := range shown {
		id := seq[i].ID
		out.Hits = append(out.Hits, s.toHit(byID[id], q, qt, tools[id], seq[i], pct[j], vec, res.Preferred[id] || scale.Preferred[id], dead[id]))
	}
	if n > offset+limit && rel.mayPass(poolScores, offset+limit, out.Best, cut) {
		out.Next = offset + limit
	}
	w.lap(StageHits)
	return out, nil
}

// shownIDs are the identifiers of the results of seq at places shown.
func shownIDs(seq []query.Scored, shown []int) []string {
	ids := make([]string, len(shown))
	for j, i := range shown {
		ids[j] = seq[i].ID
	}
	return ids
}

// sequence is the sequence every page of a search slices: the members of
// pool the request keeps (kept) in the model's order, then rest, the
// request's other results, in fused order; and the model's scores of the
// pool members, in the same order.
func (rel *relevance) sequence(pool []query.Scored, kept map[string]bool, rest []query.Scored) ([]query.Scored, []float64) {
	seq := make([]query.Scored, 0, len(pool)+len(rest))
	var poolScores []float64
	for _, i := range rel.rk.Order {
		if kept[pool[i].ID] {
			seq = append(seq, pool[i])
			poolScores = append(poolScores, rel.rk.Scores[i])
		}
	}
	return append(seq, rest...), poolScores
}

// pageIDs returns the identifiers of the documents a page from offset to
// end needs: the pool's, then those of the page's results past the pool
// members the request keeps (present of them; rest are its other results,
// in order), and on a later page with no pool member, the best result, for
// the cut-off rule.
func pageIDs(pool, rest []query.Scored, present, offset, end int) []string {
	ids := make([]string, 0, len(pool)+max(end-offset, 0)+1)
	for _, h := range pool {
		ids = append(ids, h.ID)
	}
	for i := max(offset, present); i < end; i++ {
		ids = append(ids, rest[i-present].ID)
	}
	if present == 0 && len(rest) > 0 && offset > 0 {
		ids = append(ids, rest[0].ID)
	}
	return ids
}

// scaled returns the fused ranking of q (at least its first n results) and
// the ranking its scores are on: the same one when q has no filters of its
// own; otherwise the ranking under the base filter alone, whose document
// counts the filtered search weighs its terms by. A record's score then
// depends on the request and the index, never on the filter that kept it.
func (s *Engine) scaled(ctx context.Context, q *Query, prep preparedQuery, n int) (res, scale rankedResult, err error) {
	plan := s.planOf(ctx, q, prep)
	if len(s.userFilters(q)) == 0 {
		res, err = s.ranked(ctx, plan, n)
		return res, res, err
	}
	base := plan
	base.Filter = s.baseFilter(q).Filter()
	// Both first tiers in one round trip; the deep tiers, when a page
	// reaches past them, apart.
	base.Limit, plan.Limit = 0, 0
	bfirst, first, err := hybrid.Scaled(ctx, s.cfg.Meili, base, plan)
	if err != nil {
		return res, scale, err
	}
	s.toolsFailed(ctx, first.ToolErr, &base, &plan)
	if scale, err = s.deepen(ctx, base, bfirst, poolSize); err != nil {
		return res, scale, err
	}
	plan.Counts = &hybrid.Counts{Docs: scale.Total, TermDocs: scale.TermDocs}
	res, err = s.deepen(ctx, plan, first, n)
	// The base search's tools sub-queries may have found servers the
	// filtered one did not: the page reads the tools of both.
	res.Tools = withTools(withTools(nil, scale.Tools), res.Tools)
	return res, scale, err
}

// split counts the hits that are pool members and returns the others, in
// order.
func split(hits, pool []query.Scored) (present int, rest []query.Scored) {
	inPool := hitIDs(pool)
	for _, h := range hits {
		if inPool[h.ID] {
			present++
		} else {
			rest = append(rest, h)
		}
	}
	return present, rest
}

// hitIDs is the set of the hits' identifiers.
func hitIDs(hits []query.Scored) map[string]bool {
	out := make(map[string]bool, len(hits))
	for _, h := range hits {
		out[h.ID] = true
	}
	return out
}

// fetchPage fetches the documents of ids (the pool and the page) and, in
// the same round trip, when q.Facets names fields, their values counted
// over the best of the first tier of candidates (what the search found,
// whichever page is shown) into out.Facets. The records' tool lists are
// not read: the tools sub-queries read those of the servers whose tools
// may name a match (hybrid.ServerTools).
func (s *Engine) fetchPage(ctx context.Context, q *Query, ids []string, vec []float32, tier []query.Scored, out *localPage) (map[string]meiliHit, error) {
	var also []*meilisearch.SearchRequest
	if len(q.Facets) > 0 && len(tier) > 0 {
		also = append(also, s.candidateFacets(tier, q.Facets, q.Access))
	}
	attrs := searchAttributes
	if q.Evidence {
		attrs = append(slices.Clip(attrs), evidenceAttributes...)
	}
	if len(q.Attributes) > 0 {
		attrs = append(slices.Clip(attrs), q.Attributes...)
	}
	// The page is read under the caller's access: an identifier can name
	// records for different readers (normalize.RecordKey).
	docs, more, err := hybrid.FetchScoped(ctx, s.cfg.Meili, s.cfg.Index, normalize.FieldIdentifier, filter.Access(q.Access), ids, attrs, q.Evidence && vec != nil, also...)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]meiliHit, len(docs))
	for _, d := range docs {
		id, _ := hybrid.String(d[normalize.FieldIdentifier])
		byID[id] = meiliHit(d)
	}
	if len(more) > 0 {
		out.Facets = s.facetCounts(ctx, more[0].FacetDistribution)
	}
	return byID, nil
}

// facetCandidates bounds the candidates facets are counted over: the best
// ten pages. The filter naming them is most of the request's cost, so the
// count stays small next to the search it describes.
const facetCandidates = 100

// candidateFacets is the request that counts the values of fields over
// the best facetCandidates candidates (at least one; filtered to their
// identifiers, no hits).
func (s *Engine) candidateFacets(candidates []query.Scored, fields []string, access []string) *meilisearch.SearchRequest {
	candidates = candidates[:min(len(candidates), facetCandidates)]
	ids := make([]string, len(candidates))
	for i, c := range candidates {
		ids[i] = c.ID
	}
	zero := int64(0)
	return &meilisearch.SearchRequest{IndexUID: s.cfg.Index, Filter: filter.And(filter.In(normalize.FieldIdentifier, ids), filter.Access(access)).Filter(), Page: 1, HitsPerPage: &zero, Facets: fields}
}

// facetCounts decodes the counts candidateFacets asked for. A bad answer is
// logged and counts nothing: the results do not depend on it.
func (s *Engine) facetCounts(ctx context.Context, raw json.RawMessage) map[string]map[string]int {
	dist, err := decodeFacets(raw)
	if err != nil {
		s.log.Warn("facet counts unreadable", "correlationId", s.correlationID(ctx), "err", err)
		return nil
	}
	return dist
}

// mayPass reports whether a result at or after position from of the
// sequence can pass the cut-off (score.Model.Keep, best the answer's best
// score): known for the pool members (poolScores, in sequence order),
// bounded by the pool's lowest score past them.
func (rel *relevance) mayPass(poolScores []float64, from, best, cut int) bool {
	for i := from; i < len(poolScores); i++ {
		if rel.model.Keep(score.Percent(poolScores[i]), best, cut) {
			return true
		}
	}
	return rel.model.Keep(score.Percent(rel.floor), best, cut)
}

// toHit turns a fetched document, its fused components and its score
// (0..100) into a result entry. The record's tools are not shown: the ones
// matching the request are (tools, matchedTools). dead is the health
// status of an endpoint ordered below live ones ("" when live).
func (s *Engine) toHit(h meiliHit, q *Query, qterms []string, tools []MatchedTool, sc query.Scored, pct int, vec []float32, preferred bool, dead string) federation.Hit {
	fillTrustHealth(h)
	delete(h, normalize.FieldTools)
	if len(tools) > 0 {
		h[FieldMatchedTools] = mustJSON(tools)
	}
	if q.Evidence {
		examples := h["examples"]
		vectors := h["_vectors"]
		delete(h, "examples")
		delete(h, "_vectors")
		ev := buildEvidence(h, examples, vectors, q, qterms, sc, vec, preferred)
		ev.MatchedTools = tools
		if dead != "" {
			ev.Liveness = livenessNote(dead)
		}
		h["evidence"] = mustJSON(ev)
	}
	delete(h, "_vectors")
	h["score"] = json.RawMessage(strconv.Itoa(pct))
	h["source"] = s.sourceJSON
	id, _ := hybrid.String(h["identifier"])
	return federation.Hit{
		Identifier: id,
		Entry:      h,
		Score:      float64(pct),
		Source:     s.publicURL,
		Verified:   bytes.Equal(h["publisherVerified"], []byte("true")),
		Local:      true,
	}
}
