package search

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
)

// NameMatch asks for the records whose identifier contains a text.
type NameMatch struct {
	// Text is what the identifier must contain, compared without case.
	Text string
	// Filter narrows the records looked at (besides access and liveness).
	Filter filter.Expr
	// Limit is the most matches returned (at least 1).
	Limit int
	// Access are the caller's groups (Query.Access).
	Access []string
	// Attributes are record fields retrieved beyond the engine's own
	// (Listing.Attributes).
	Attributes []string
}

// NameMatches returns the live records n.Filter keeps whose identifier
// contains n.Text (without case), in identifier order, at most n.Limit: the
// name matches an MCP registry's search lists first. Meilisearch finds the
// candidates by the identifier's words (whole words, and a prefix of the
// last one, as it matches any query); the substring rule is checked here,
// so a candidate that matched only by typo tolerance is left out, and a
// text inside a word ("system" of "filesystem") finds no candidate.
func (s *Engine) NameMatches(ctx context.Context, n NameMatch) ([]map[string]json.RawMessage, error) {
	text := strings.ToLower(strings.TrimSpace(n.Text))
	if text == "" || n.Limit < 1 {
		return nil, nil
	}
	f := filter.And(n.Filter, filter.Access(n.Access), filter.Live(s.now()))
	hpp := int64(nameCandidates)
	resp, err := s.rawSearch(ctx, &meilisearch.SearchRequest{
		Query:                text,
		Filter:               f.Filter(),
		AttributesToSearchOn: []string{normalize.FieldIdentifier},
		MatchingStrategy:     meilisearch.All,
		Page:                 1,
		HitsPerPage:          &hpp,
		AttributesToRetrieve: listAttributes(n.Attributes),
	})
	if err != nil {
		return nil, err
	}
	var keep []meiliHit
	for _, h := range resp.Hits {
		var id string
		if json.Unmarshal(h[normalize.FieldIdentifier], &id) == nil && strings.Contains(strings.ToLower(id), text) {
			keep = append(keep, h)
		}
	}
	slices.SortFunc(keep, func(a, b meiliHit) int {
		return strings.Compare(string(a[normalize.FieldIdentifier]), string(b[normalize.FieldIdentifier]))
	})
	if len(keep) > n.Limit {
		keep = keep[:n.Limit]
	}
	return s.listItems(ctx, keep, n.Access, n.Attributes)
}

// nameCandidates is how many keyword candidates NameMatches checks.
const nameCandidates = 200
