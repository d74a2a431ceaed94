package hybrid

import (
	"context"
	"fmt"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/searchapi/filter"
	"github.com/agentfinder/agentfinder/searchapi/query"
)

// FillDepth is how deep in the fused ranking a keyword hit the semantic
// list left out is given its real similarity: the first FillDepth places.
// The semantic list holds the query.SubQueryLimit nearest documents; a
// document past them that a term matched was fused with a similarity of 0,
// so in a large index a document the request names by its words sank
// below documents that only sit near the request (docs/MEASUREMENTS.md).
const FillDepth = query.SubQueryLimit

// fillSemantic gives the keyword hits of each request that its semantic
// list left out, and that could reach the first FillDepth places of its
// fused ranking, their similarity to the request: one more multi-search
// of one vector sub-query per such request, restricted to those hits by
// identifier, sent only when some request has any. reqs[i] answered as[i].
func fillSemantic(ctx context.Context, c Client, reqs []*Request, as []*answers) error {
	var queries []*meilisearch.SearchRequest
	var owners []int
	for i, r := range reqs {
		ids := r.unscored(as[i])
		if len(ids) == 0 {
			continue
		}
		attrs, _ := r.retrieve()
		queries = append(queries, &meilisearch.SearchRequest{
			IndexUID: r.Index, Filter: andIDs(r.Filter, r.IDField, ids), Limit: int64(len(ids)),
			AttributesToRetrieve: attrs, ShowRankingScore: true,
			Vector: r.Vector, Hybrid: &meilisearch.SearchRequestHybrid{Embedder: r.Embedder, SemanticRatio: 1},
		})
		owners = append(owners, i)
	}
	if len(queries) == 0 {
		return nil
	}
	results, err := multiSearch(ctx, c, queries)
	if err != nil {
		return fmt.Errorf("fill semantic: %w", err)
	}
	for k, res := range results {
		r, a := reqs[owners[k]], as[owners[k]]
		_, want := r.retrieve()
		hits, err := scoredHits(res.Hits, r.IDField, r.Prefer, want, a.preferred)
		if err != nil {
			return err
		}
		a.sem = append(a.sem, hits...)
		a.fused = nil // fused without these hits' similarity
	}
	return nil
}

// unscored returns the identifiers of the keyword hits of a that r's
// semantic list did not return and that could reach the first FillDepth
// places of the fused ranking: their fused score with the list's lowest
// similarity (the most a document past the list can have) reaches the
// score at place FillDepth of the fusion without them, which giving them
// their similarity can only raise. None without a vector, or when the
// list is shorter than its limit (it then holds every document the
// filter admits that has a vector); at most FillDepth, the highest bounds
// first. The fusion it computes is kept in a.fused, for fuse.
func (r Request) unscored(a *answers) []string {
	if r.Vector == nil || len(a.sem) < max(r.Limit, query.SubQueryLimit) {
		return nil
	}
	listed := make(map[string]bool, len(a.sem))
	lowest := a.sem[0].Score
	for _, h := range a.sem {
		listed[h.ID] = true
		lowest = min(lowest, h.Score)
	}
	w := r.keywordWeight()
	fused := query.Fuse(a.sem, a.terms, a.total, w)
	a.fused = fused
	depth := min(len(fused), FillDepth)
	if depth == 0 {
		return nil
	}
	bar := fused[depth-1].Score
	var ids []string
	for _, h := range fused {
		if len(ids) == FillDepth {
			break // the best of them by their bound: a bounded filter
		}
		if !listed[h.ID] && h.Score+(1-w)*lowest >= bar {
			ids = append(ids, h.ID)
		}
	}
	return ids
}

// andIDs is the filter f (a Meilisearch filter: nil, a string or an
// array) narrowed to the documents whose idField is one of ids.
func andIDs(f any, idField string, ids []string) any {
	in := filter.In(idField, ids)
	switch f := f.(type) {
	case nil:
		return in.Filter()
	case string:
		return filter.And(filter.Expr(f), in).Filter()
	case filter.Expr:
		return filter.And(f, in).Filter()
	default:
		return []any{f, in.Filter()}
	}
}
