package search

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
)

// Listing is a deterministic browse of the index (GET /agents): records
// by filter and order, no relevance.
type Listing struct {
	// Filter is the listing's own filter (searchapi/filterlang's and the
	// door's shorthands, translated).
	Filter filter.Expr
	// Sort are Meilisearch sort rules (filterlang.OrderBy).
	Sort []string
	// Size is the page size (at least 1).
	Size int
	// IncludeStale keeps stale and expired records.
	IncludeStale bool
	// PageToken continues the listing a previous page returned.
	PageToken string
	// Access are the caller's groups (Query.Access).
	Access []string
	// ByIdentifier lists in identifier order from After on, with no page
	// token: keyset paging, stable under concurrent writes (a record written
	// during a walk is neither skipped because others moved nor listed
	// twice). Sort and PageToken are ignored.
	ByIdentifier bool
	// After, with ByIdentifier, keeps only records whose identifier sorts
	// after it ("" starts at the first).
	After string
	// Attributes are record fields retrieved beyond the engine's own; a
	// record's own "source" asked for here is returned as "provenance"
	// ("source" is this registry).
	Attributes []string
}

// ListPage is one page of a Listing.
type ListPage struct {
	Items []map[string]json.RawMessage
	Total int64
	// PageToken continues the listing; "" on its last page.
	PageToken string
}

// List answers one page of l. Its page token is bound to the translated
// filter, the order, the page size, IncludeStale and the caller's access:
// a token only continues the listing it came from.
func (s *Engine) List(ctx context.Context, l Listing) (*ListPage, error) {
	f := filter.And(l.Filter, filter.Access(l.Access))
	if !l.IncludeStale {
		f = filter.And(f, filter.Live(s.now()))
	}
	if l.ByIdentifier {
		return s.listByIdentifier(ctx, l, f)
	}
	norm := "agents\x00" + string(l.Filter) + "\x00" + strings.Join(l.Sort, ",") + "\x00" + strconv.Itoa(l.Size) + "\x00" + strconv.FormatBool(l.IncludeStale) + accessKey(l.Access)
	offset := 0
	if l.PageToken != "" {
		var err error
		if offset, err = s.tokens.decode(norm, l.PageToken); err != nil {
			return nil, err
		}
	}
	hpp := int64(l.Size)
	resp, err := s.rawSearch(ctx, &meilisearch.SearchRequest{
		Filter:               f.Filter(),
		Sort:                 l.Sort,
		Page:                 int64(offset/l.Size + 1),
		HitsPerPage:          &hpp,
		AttributesToRetrieve: listAttributes(l.Attributes),
	})
	if err != nil {
		return nil, err
	}
	items, err := s.listItems(ctx, resp.Hits, l.Access, l.Attributes)
	if err != nil {
		return nil, err
	}
	out := &ListPage{Items: items, Total: resp.TotalHits}
	if next := offset + l.Size; int64(next) < resp.TotalHits && next < maxOffset {
		out.PageToken = s.tokens.encode(norm, next)
	}
	return out, nil
}

// listByIdentifier answers a ByIdentifier listing: the records after
// l.After in identifier order, f holding the caller's access and liveness.
func (s *Engine) listByIdentifier(ctx context.Context, l Listing, f filter.Expr) (*ListPage, error) {
	if l.After != "" {
		f = filter.And(f, filter.Compare(normalize.FieldIdentifier, filter.OpGt, filter.String(l.After)))
	}
	// A document listing, not a search: no ranking to compute.
	var docs meilisearch.DocumentsResult
	err := s.index.GetDocumentsWithContext(ctx, &meilisearch.DocumentsQuery{
		Filter: f.Filter(),
		Sort:   []string{normalize.FieldIdentifier + ":asc"},
		Limit:  int64(l.Size),
		Fields: listAttributes(l.Attributes),
	}, &docs)
	if err != nil {
		return nil, err
	}
	hits := make([]meiliHit, len(docs.Results))
	for i, d := range docs.Results {
		hits[i] = meiliHit(d)
	}
	items, err := s.listItems(ctx, hits, l.Access, l.Attributes)
	if err != nil {
		return nil, err
	}
	return &ListPage{Items: items, Total: docs.Total}, nil
}

// listedAttributes are the fields a listing retrieves of every record: a
// search's, the record's id, by which listItems joins its tools (a
// listing shows each record whole, where a search shows the tools matching
// the request), and the tools a record an older ingest wrote still holds
// (toolRead.join).
var listedAttributes = append(slices.Clone(searchAttributes), normalize.FieldID, normalize.FieldTools)

// listAttributes are the fields a listing retrieves: listedAttributes and
// extra.
func listAttributes(extra []string) []string {
	if len(extra) == 0 {
		return listedAttributes
	}
	out := slices.Clone(listedAttributes)
	for _, a := range extra {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// listItems turns a listing's hits, read under the caller's access with
// the extra attributes extra, into items: the record's tools joined
// (withToolLists), its own source (when retrieved) under "provenance",
// "source" this registry, trust and health filled in, its id left out
// unless extra asks for it.
func (s *Engine) listItems(ctx context.Context, hits []meiliHit, access, extra []string) ([]map[string]json.RawMessage, error) {
	if err := s.withToolLists(ctx, hits, access); err != nil {
		return nil, err
	}
	keepID := slices.Contains(extra, normalize.FieldID)
	out := make([]map[string]json.RawMessage, 0, len(hits))
	for _, h := range hits {
		if !keepID {
			delete(h, normalize.FieldID)
		}
		if p, ok := h["source"]; ok {
			h["provenance"] = p
		}
		h["source"] = s.sourceJSON
		fillTrustHealth(h)
		out = append(out, h)
	}
	return out, nil
}
