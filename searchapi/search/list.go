package search

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/meilisearch/meilisearch-go"

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
		AttributesToRetrieve: searchAttributes,
	})
	if err != nil {
		return nil, err
	}
	out := &ListPage{Items: make([]map[string]json.RawMessage, 0, len(resp.Hits)), Total: resp.TotalHits}
	for _, h := range resp.Hits {
		h["source"] = s.sourceJSON
		fillTrustHealth(h)
		out.Items = append(out.Items, h)
	}
	if next := offset + l.Size; int64(next) < resp.TotalHits && next < maxOffset {
		out.PageToken = s.tokens.encode(norm, next)
	}
	return out, nil
}
