// Package hybrid runs the query shape measured in searchapi/query against
// Meilisearch: one multi-search request with a vector-only query and one
// single-word query per informative term of the request, fused by
// query.Fuse into one ranking whose keyword and semantic components explain
// each result; term hits the vector query's list left out are given their
// similarity by one more vector query when they could rank high
// (fillSemantic). It replaces Meilisearch's own hybrid search, whose keyword
// side requires the first or the rarest word of a long request and so adds
// little (R@1/R@10 on fixtures/relevance: 0.45/0.80 native, 0.52/0.85
// fused; keyword only 0.17/0.20 native, 0.39/0.66 fused).
package hybrid

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
	"github.com/agentfinder/agentfinder/searchapi/query"
)

// Client is the part of a meilisearch-go client Search and Fetch use; the
// client from ingest/meili.New satisfies it. Every search and fetch is a
// multi-search; Index reads tool lists by the documents route
// (ReadToolLists).
type Client interface {
	MultiSearchWithContext(ctx context.Context, q *meilisearch.MultiSearchRequest) (*meilisearch.MultiSearchResponse, error)
	Index(uid string) meilisearch.IndexManager
}

// Request is one search.
type Request struct {
	// Index is the index uid.
	Index string
	// Text is the request as the user typed it; its terms come from
	// query.Analyze unless Terms is set.
	Text string
	// Terms overrides the single-word queries (nil: Analyze(Text).SearchTerms()).
	Terms []string
	// Vector is the embedding of Text as typed (not rewritten); nil searches
	// by keywords only.
	Vector []float32
	// Embedder names the index's userProvided embedder; "" means
	// normalize.EmbedderName.
	Embedder string
	// Filter is a Meilisearch filter applied to every sub-query (nil: none).
	Filter any
	// Limit is how many fused results are wanted (offset + page size + 1 for
	// paging); every sub-query asks for max(Limit, query.SubQueryLimit).
	Limit int
	// KeywordWeight is the keyword share of the score, 1 - semanticRatio;
	// 0 means query.DefaultKeywordWeight. Ignored without Vector.
	KeywordWeight float64
	// IDField is a filterable field that identifies documents; "" means
	// "identifier".
	IDField string
	// Prefer, when set, boosts documents carrying a preferred value.
	Prefer *Preference
	// ToolIndex is the tools index beside Index (normalize.ToolsIndex),
	// "" for none: the terms are searched there too, under Filter, in a
	// multi-search of their own sent at the same time as Index's, and a
	// server whose tools hold a term counts as a hit of that term's
	// sub-query (toolhits.go). Index's own sub-queries do not search the
	// tools' text.
	ToolIndex string
	// Counts, when set, are the document counts terms are weighed by
	// (idf) instead of those under Filter: a filtered search given the
	// counts of the unfiltered one scores each document it keeps as the
	// unfiltered search does.
	Counts *Counts
}

// Counts are the document counts of a search: how many documents it could
// return and how many hold each of its terms (Result.Total and
// Result.TermDocs).
type Counts struct {
	Docs     int
	TermDocs []int
}

// Preference is a soft constraint: documents whose Field (a string or an
// array of strings) holds one of Values, compared case-insensitively, rank
// as if their fused score were multiplied by Weight. Scored.Score stays the
// unboosted score, so what a result shows does not depend on the boost.
type Preference struct {
	Field  string
	Values []string
	Weight float64
}

// Result is the fused ranking.
type Result struct {
	// Hits are the best Limit results, best first; ID is the IDField value.
	Hits []query.Scored
	// Total is how many documents the filter admits (Request.Counts.Docs
	// when given).
	Total int
	// Terms are the words searched one by one.
	Terms []string
	// TermDocs holds, for each of Terms, how many documents its query
	// matches (Meilisearch's estimatedTotalHits: the term's document
	// frequency under the filter; Request.Counts.TermDocs when given).
	TermDocs []int
	// Preferred holds the IDs of hits Request.Prefer boosted.
	Preferred map[string]bool
	// Tools holds, by ID, the tools of the servers the tools sub-queries
	// found: those whose tools may name a match.
	Tools map[string]*ServerTools
	// ToolErr is why the tools sub-queries found nothing when they failed
	// (nil otherwise): the result is then the records' alone.
	ToolErr error
}

// ErrBadResponse reports a multi-search answer that does not match the request.
var ErrBadResponse = errors.New("hybrid: unexpected multi-search response")

// Search runs r as one multi-search request, and its tools sub-queries as
// another at the same time, and fuses the answers.
func Search(ctx context.Context, c Client, r Request) (Result, error) {
	r.fillDefaults()
	attrs, want := r.retrieve()
	tools := startTools(ctx, c, r.toolQueries(attrs), r.IDField)
	defer tools.stop()
	results, err := multiSearch(ctx, c, r.queries(attrs))
	if err != nil {
		return Result{}, err
	}
	a, err := r.answers(results, want)
	if err != nil {
		return Result{}, err
	}
	found, toolErr := tools.hits(&r)
	if toolErr == nil {
		r.addTools(&a, found[0], want)
	}
	a.useCounts(r.Counts)
	if err := fillSemantic(ctx, c, []*Request{&r}, []*answers{&a}); err != nil {
		return Result{}, err
	}
	res := r.fuse(a)
	res.ToolErr = toolErr
	return res, nil
}

// Scaled runs base and r in one multi-search request (one round trip
// instead of two; their tools sub-queries in another at the same time)
// and fuses each: base as Search would, r weighing its
// terms by base's document counts (r.Counts from base's Total and
// TermDocs), as Search of r with those counts would.
func Scaled(ctx context.Context, c Client, base, r Request) (baseRes, res Result, err error) {
	base.fillDefaults()
	r.fillDefaults()
	battrs, bwant := base.retrieve()
	rattrs, rwant := r.retrieve()
	tools := startTools(ctx, c, append(base.toolQueries(battrs), r.toolQueries(rattrs)...), r.IDField)
	defer tools.stop()
	bq, rq := base.queries(battrs), r.queries(rattrs)
	// Keyword only, r's first sub-query only counts the documents its
	// filter admits, and base's counts replace that count: it is not sent.
	uncounted := r.Vector == nil && len(r.Terms) == len(base.Terms)
	if uncounted {
		rq = rq[1:]
	}
	results, err := multiSearch(ctx, c, append(bq, rq...))
	if err != nil {
		return Result{}, Result{}, err
	}
	ba, err := base.answers(results[:len(bq)], bwant)
	if err != nil {
		return Result{}, Result{}, err
	}
	rres := results[len(bq):]
	if uncounted {
		rres = append([]meilisearch.SearchResponse{{}}, rres...)
	}
	ra, err := r.answers(rres, rwant)
	if err != nil {
		return Result{}, Result{}, err
	}
	found, toolErr := tools.hits(&base, &r)
	if toolErr == nil {
		base.addTools(&ba, found[0], bwant)
		r.addTools(&ra, found[1], rwant)
	}
	ba.useCounts(base.Counts)
	// r's terms are weighed by base's counts, tool hits among them.
	r.Counts = &Counts{Docs: ba.total, TermDocs: ba.termDocs}
	ra.useCounts(r.Counts)
	if err := fillSemantic(ctx, c, []*Request{&base, &r}, []*answers{&ba, &ra}); err != nil {
		return Result{}, Result{}, err
	}
	bres, rres2 := base.fuse(ba), r.fuse(ra)
	bres.ToolErr, rres2.ToolErr = toolErr, toolErr
	return bres, rres2, nil
}

// multiSearch sends queries as one multi-search request and returns their
// answers in order.
func multiSearch(ctx context.Context, c Client, queries []*meilisearch.SearchRequest) ([]meilisearch.SearchResponse, error) {
	resp, err := c.MultiSearchWithContext(ctx, &meilisearch.MultiSearchRequest{Queries: queries})
	if err != nil {
		return nil, fmt.Errorf("hybrid search: %w", err)
	}
	if len(resp.Results) != len(queries) {
		return nil, fmt.Errorf("%w: %d results for %d queries", ErrBadResponse, len(resp.Results), len(queries))
	}
	return resp.Results, nil
}

// answers is what r's queries returned, read: the semantic list, each
// term's hits and document count (the tools sub-queries' servers among
// them), the hits a preference boosts, and the tools of the servers the
// tools sub-queries found.
type answers struct {
	sem       []query.Hit
	terms     []query.TermResult
	total     int
	termDocs  []int
	preferred map[string]bool
	tools     map[string]*ServerTools
	// fused is query.Fuse of the above when unscored fused them and
	// fillSemantic added nothing since (nil otherwise): fuse reuses it.
	fused []query.Scored
}

// answers reads the answers of r's queries (r.queries, in order); want
// holds the preferred values (r.retrieve). The tools search's hits
// (addTools) and r.Counts (useCounts) are added after.
func (r Request) answers(results []meilisearch.SearchResponse, want map[string]bool) (answers, error) {
	var a answers
	if want != nil {
		a.preferred = map[string]bool{}
	}
	var err error
	if r.Vector != nil {
		if a.sem, err = scoredHits(results[0].Hits, r.IDField, r.Prefer, want, a.preferred); err != nil {
			return answers{}, err
		}
	}
	a.terms = make([]query.TermResult, len(r.Terms))
	a.termDocs = make([]int, len(r.Terms))
	for i, t := range r.Terms {
		res := results[i+1]
		hits, err := scoredHits(res.Hits, r.IDField, r.Prefer, want, a.preferred)
		if err != nil {
			return answers{}, err
		}
		a.terms[i] = query.TermResult{Term: t, TotalHits: int(res.EstimatedTotalHits), Hits: hits}
		a.termDocs[i] = a.terms[i].TotalHits
	}
	a.total = int(results[0].EstimatedTotalHits)
	return a, nil
}

// useCounts weighs a's terms by c (nil: by their own counts).
func (a *answers) useCounts(c *Counts) {
	if c == nil || len(c.TermDocs) != len(a.terms) {
		return
	}
	a.total = c.Docs
	for i := range a.terms {
		a.terms[i].TotalHits, a.termDocs[i] = c.TermDocs[i], c.TermDocs[i]
	}
}

// fuse fuses r's answers into one ranking.
func (r Request) fuse(a answers) Result {
	fused := a.fused
	if fused == nil {
		fused = query.Fuse(a.sem, a.terms, a.total, r.keywordWeight())
	}
	if len(a.preferred) > 0 {
		boost(fused, a.preferred, r.Prefer.Weight)
	}
	if r.Limit > 0 && len(fused) > r.Limit {
		fused = fused[:r.Limit]
	}
	return Result{Hits: fused, Total: a.total, Terms: r.Terms, TermDocs: a.termDocs, Preferred: a.preferred, Tools: a.tools}
}

// keywordWeight is the keyword share of the fused score.
func (r Request) keywordWeight() float64 {
	if r.KeywordWeight == 0 {
		return query.DefaultKeywordWeight
	}
	return r.KeywordWeight
}

// fillDefaults gives IDField, Embedder and Terms the values their zero
// values stand for.
func (r *Request) fillDefaults() {
	if r.IDField == "" {
		r.IDField = normalize.FieldIdentifier
	}
	if r.Embedder == "" {
		r.Embedder = normalize.EmbedderName
	}
	if r.Terms == nil {
		r.Terms = query.Analyze(r.Text).SearchTerms()
	}
}

// retrieve returns the attributes every sub-query retrieves (the ID, and
// the preference's field) and the preferred values, folded (nil without a
// preference).
func (r Request) retrieve() ([]string, map[string]bool) {
	attrs := []string{r.IDField}
	if r.Prefer == nil || len(r.Prefer.Values) == 0 {
		return attrs, nil
	}
	want := make(map[string]bool, len(r.Prefer.Values))
	for _, v := range r.Prefer.Values {
		want[strings.ToLower(strings.TrimSpace(v))] = true
	}
	return append(attrs, r.Prefer.Field), want
}

// queries are the sub-queries of the multi-search: first the semantic list,
// or (keywords only) just the count of documents the filter admits, which
// weighs the terms; then one per term. The tools sub-queries
// (toolQueries) are sent apart (startTools).
func (r Request) queries(attrs []string) []*meilisearch.SearchRequest {
	limit := int64(max(r.Limit, query.SubQueryLimit))
	first := &meilisearch.SearchRequest{IndexUID: r.Index, Filter: r.Filter, Limit: 1, AttributesToRetrieve: attrs}
	if r.Vector != nil {
		first = &meilisearch.SearchRequest{
			IndexUID: r.Index, Filter: r.Filter, Limit: limit, AttributesToRetrieve: attrs, ShowRankingScore: true,
			Vector: r.Vector, Hybrid: &meilisearch.SearchRequestHybrid{Embedder: r.Embedder, SemanticRatio: 1},
		}
	}
	queries := []*meilisearch.SearchRequest{first}
	for _, t := range r.Terms {
		queries = append(queries, &meilisearch.SearchRequest{
			IndexUID: r.Index, Query: t, Filter: r.Filter, Limit: limit,
			AttributesToRetrieve: attrs, ShowRankingScore: true,
		})
	}
	return queries
}

// boost reorders fused as if the scores of the preferred IDs were
// multiplied by weight (ties: the unboosted score, then the ID); the
// scores themselves stay.
func boost(fused []query.Scored, preferred map[string]bool, weight float64) {
	boosted := func(s query.Scored) float64 {
		if preferred[s.ID] {
			return s.Score * weight
		}
		return s.Score
	}
	sort.SliceStable(fused, func(i, j int) bool {
		bi, bj := boosted(fused[i]), boosted(fused[j])
		if bi != bj {
			return bi > bj
		}
		if fused[i].Score != fused[j].Score {
			return fused[i].Score > fused[j].Score
		}
		return fused[i].ID < fused[j].ID
	})
}

// scoredHits reads the identifiers and ranking scores of hits and, with a
// preference, records in preferred the IDs whose p.Field holds a value of
// want.
func scoredHits(hits meilisearch.Hits, idField string, p *Preference, want, preferred map[string]bool) ([]query.Hit, error) {
	out := make([]query.Hit, 0, len(hits))
	for _, h := range hits {
		id, ok := String(h[idField])
		if !ok {
			return nil, fmt.Errorf("%w: hit without a string %s", ErrBadResponse, idField)
		}
		if want != nil && !preferred[id] && holdsAny(h[p.Field], want) {
			preferred[id] = true
		}
		var score float64
		if raw, ok := h["_rankingScore"]; ok {
			if score, ok = Number(raw); !ok {
				return nil, fmt.Errorf("%w: _rankingScore %s is not a number", ErrBadResponse, raw)
			}
		}
		out = append(out, query.Hit{ID: id, Score: score})
	}
	return out, nil
}

// Fetch returns the documents whose idField is in ids, in the order of ids
// (missing ones left out), with the given attributes ("" idField means
// "identifier"; nil attrs means all). withVectors also retrieves _vectors,
// for Vectors and BestMatch (evidence only: 2 KiB per vector).
func Fetch(ctx context.Context, c Client, index, idField string, ids []string, attrs []string, withVectors bool) (meilisearch.Hits, error) {
	hits, _, err := FetchAlso(ctx, c, index, idField, ids, attrs, withVectors)
	return hits, err
}

// FetchAlso is Fetch with more requests sent in the same multi-search (one
// round trip); it returns their responses in order. With no ids it sends
// only those.
func FetchAlso(ctx context.Context, c Client, index, idField string, ids []string, attrs []string, withVectors bool, also ...*meilisearch.SearchRequest) (meilisearch.Hits, []meilisearch.SearchResponse, error) {
	return FetchScoped(ctx, c, index, idField, "", ids, attrs, withVectors, also...)
}

// FetchScoped is FetchAlso reading only documents that match scope too
// (empty: all): the caller's access, when idField does not name one
// document alone (records of one identifier for different readers).
func FetchScoped(ctx context.Context, c Client, index, idField string, scope filter.Expr, ids []string, attrs []string, withVectors bool, also ...*meilisearch.SearchRequest) (meilisearch.Hits, []meilisearch.SearchResponse, error) {
	if len(ids) == 0 && len(also) == 0 {
		return nil, nil, nil
	}
	if idField == "" {
		idField = "identifier"
	}
	if attrs != nil && !slices.Contains(attrs, idField) {
		attrs = append(slices.Clip(attrs), idField)
	}
	queries := also
	if len(ids) > 0 {
		req := &meilisearch.SearchRequest{IndexUID: index, Filter: filter.And(filter.In(idField, ids), scope).Filter(), Limit: int64(len(ids)),
			AttributesToRetrieve: attrs, RetrieveVectors: withVectors}
		queries = append([]*meilisearch.SearchRequest{req}, also...)
	}
	resp, err := c.MultiSearchWithContext(ctx, &meilisearch.MultiSearchRequest{Queries: queries})
	if err != nil {
		return nil, nil, fmt.Errorf("hybrid fetch: %w", err)
	}
	if len(resp.Results) != len(queries) {
		return nil, nil, fmt.Errorf("%w: %d results for %d queries", ErrBadResponse, len(resp.Results), len(queries))
	}
	if len(ids) == 0 {
		return nil, resp.Results, nil
	}
	byID := make(map[string]meilisearch.Hit, len(resp.Results[0].Hits))
	for _, h := range resp.Results[0].Hits {
		if id, ok := String(h[idField]); ok {
			byID[id] = h
		}
	}
	out := make(meilisearch.Hits, 0, len(ids))
	for _, id := range ids {
		if h, ok := byID[id]; ok {
			out = append(out, h)
		}
	}
	return out, resp.Results[1:], nil
}

// holdsAny reports whether raw, a JSON string or array of strings, holds a
// value of want (lower-case keys), compared case-insensitively.
func holdsAny(raw json.RawMessage, want map[string]bool) bool {
	for _, v := range Strings(raw) {
		if want[strings.ToLower(strings.TrimSpace(v))] {
			return true
		}
	}
	return false
}

// Vectors returns the embeddings a hit fetched with vectors holds for the
// embedder ("" means normalize.EmbedderName), in the order they were
// stored (entry text, representative queries, examples: see
// normalize.EmbeddedQueries).
func Vectors(h meilisearch.Hit, embedder string) ([][]float32, error) {
	if embedder == "" {
		embedder = normalize.EmbedderName
	}
	raw, ok := h["_vectors"]
	if !ok {
		return nil, nil
	}
	var all map[string]struct {
		Embeddings [][]float32 `json:"embeddings"`
	}
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, fmt.Errorf("%w: _vectors: %v", ErrBadResponse, err)
	}
	return all[embedder].Embeddings, nil
}

// BestMatch returns the index of the vector closest to q by cosine and that
// cosine, or -1 and 0 when there are none. Vectors need not be normalised.
func BestMatch(q []float32, vectors [][]float32) (int, float64) {
	best, bestCos := -1, 0.0
	qn := norm(q)
	for i, v := range vectors {
		if len(v) != len(q) || qn == 0 {
			continue
		}
		vn := norm(v)
		if vn == 0 {
			continue
		}
		var d float64
		for k := range v {
			d += float64(q[k]) * float64(v[k])
		}
		if c := d / (qn * vn); best < 0 || c > bestCos {
			best, bestCos = i, c
		}
	}
	return best, bestCos
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}
