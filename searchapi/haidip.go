package searchapi

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/searchapi/filter"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// POST /agents/search is the HAIDIP binding
// (draft-cui-ai-agent-discovery-invocation): its search request (query,
// filters, top, skip, ranked, include_metadata) is translated into the
// shared search, and the shared result into its response (results, count,
// query, top, skip, search_time). GET /agents takes its capability and
// language shorthands (agents.go).

// haidipRequest is HAIDIP's search request.
type haidipRequest struct {
	Query           *string                    `json:"query"`
	Filters         map[string]json.RawMessage `json:"filters"`
	Top             json.RawMessage            `json:"top"`
	Skip            *int                       `json:"skip"`
	Ranked          *bool                      `json:"ranked"`
	IncludeMetadata bool                       `json:"include_metadata"`
	Federation      *string                    `json:"federation"`
}

// haidipResponse is HAIDIP's search response.
type haidipResponse struct {
	Results    []haidipResult `json:"results"`
	Count      int            `json:"count"`
	Query      string         `json:"query"`
	Top        int            `json:"top"`
	Skip       int            `json:"skip"`
	SearchTime float64        `json:"search_time"` // milliseconds
}

type haidipResult struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Score       *float64        `json:"score,omitempty"` // absent when ranked is false
	Trust       *bindingTrust   `json:"trust,omitempty"`
	Health      *bindingHealth  `json:"health,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
}

// haidipError is HAIDIP's error object: {"error":{"code","message"}} with
// its CamelCase codes, plus our correlation id.
func haidipError(ae *APIError, cid string) any {
	code := map[string]string{
		CodeInvalidRequest: "InvalidInput", CodeUnsupportedFilter: "UnsupportedFilter", CodeUnauthorized: "Unauthorized",
		CodeForbidden: "Forbidden", CodeNotFound: "NotFound", CodeRateLimited: "RateLimited", CodeUnavailable: "ServiceUnavailable",
	}[ae.Code]
	if code == "" {
		code = "InternalError"
	}
	return map[string]any{"error": map[string]string{"code": code, "message": ae.Message, "correlationId": cid}}
}

// haidipFilters maps HAIDIP filter names (both spellings the draft uses)
// to the shared filter keys.
var haidipFilters = map[string]string{
	"capability": "capability", "capabilities": "capability",
	"language": "languages", "supported_language": "languages", "supported_languages": "languages",
	"provider": "publisher", "tags": "tags", "protocols": "protocols", "type": "type", "authentication": "auth",
	"trust": "trust.level", "trust_level": "trust.level", "health": "health", "health_status": "health",
}

// haidipQuery translates a HAIDIP search request into the shared query. top
// + skip results are searched (one page of at most search.MaxPageSize) and the
// first skip dropped, so pages stay consistent with federation's ranking.
func haidipQuery(req *haidipRequest) (q *search.Query, top, skip int, err error) {
	if req.Query == nil || strings.TrimSpace(*req.Query) == "" {
		return nil, 0, 0, invalid("query is required and must not be empty")
	}
	q = &search.Query{}
	if q.Text, err = search.ParseText(req.Query, true); err != nil {
		return nil, 0, 0, err
	}
	if q.Mode, err = search.ParseFederation(nil, req.Federation); err != nil {
		return nil, 0, 0, err
	}
	if top, err = search.ParsePageSize(req.Top, nil); err != nil {
		return nil, 0, 0, invalid("top must be an integer from 1 to %d", search.MaxPageSize)
	}
	if req.Skip != nil {
		skip = *req.Skip
	}
	if skip < 0 || skip+top > search.MaxPageSize {
		return nil, 0, 0, invalid("skip must be 0 or more and skip + top at most %d", search.MaxPageSize)
	}
	q.PageSize = skip + top
	for _, name := range slices.Sorted(maps.Keys(req.Filters)) {
		if name == "signed_only" || name == "live_only" {
			var on bool
			if err := json.Unmarshal(req.Filters[name], &on); err != nil {
				return nil, 0, 0, invalid("filters.%s must be true or false", name)
			}
			if err := q.AddOptions(on && name == "signed_only", on && name == "live_only"); err != nil {
				return nil, 0, 0, err
			}
			continue
		}
		key, ok := haidipFilters[name]
		if !ok {
			return nil, 0, 0, unsupported("filter %q is not supported (supported: capabilities, supported_language, authentication, provider, tags, protocols, type, trust_level, health, signed_only, live_only)", name)
		}
		var l search.StringList
		if err := json.Unmarshal(req.Filters[name], &l); err != nil {
			return nil, 0, 0, invalid("filters.%s must be a string or an array of strings", name)
		}
		if err := q.AddFilter(key, l); err != nil {
			return nil, 0, 0, err
		}
	}
	return q, top, skip, nil
}

func (s *Server) handleAgentsSearch(w http.ResponseWriter, r *http.Request) error {
	start := time.Now()
	var req haidipRequest
	if _, err := decodeBody(w, r, &req); err != nil {
		return err
	}
	q, top, skip, err := haidipQuery(&req)
	if err != nil {
		return err
	}
	ans, err := s.runSearch(r.Context(), q, federation.ParseVia(r.Header.Values("Via")))
	if err != nil {
		return err
	}
	hits := ans.Hits
	if skip < len(hits) {
		hits = hits[skip:]
	} else {
		hits = nil
	}
	out := haidipResponse{Results: make([]haidipResult, 0, len(hits)), Query: q.Text, Top: top, Skip: skip}
	ranked := req.Ranked == nil || *req.Ranked
	for _, h := range hits {
		res := haidipResult{ID: h.Identifier, Name: entryString(h.Entry, "displayName"), Description: entryString(h.Entry, "description")}
		res.Trust, res.Health = bindingTrustHealth(h.Entry)
		if ranked {
			sc := search.Round3(h.Score / 100)
			res.Score = &sc
		}
		if req.IncludeMetadata {
			res.Metadata = mustJSON(h.Entry)
		}
		out.Results = append(out.Results, res)
	}
	if !ranked {
		slices.SortStableFunc(out.Results, func(a, b haidipResult) int {
			return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
		})
	}
	out.Count = len(out.Results)
	out.SearchTime = search.Round3(float64(time.Since(start).Microseconds()) / 1000)
	writeJSON(w, http.StatusOK, out)
	return nil
}

// listShorthands are GET /agents's HAIDIP query parameters and the shared
// filter keys they stand for.
var listShorthands = map[string]string{"capability": "capability", "language": "languages"}

// shorthandExpr returns the filter of GET /agents's HAIDIP shorthands
// (capability=translation&language=es; repeated or comma-separated values):
// every capability, any of the languages.
func shorthandExpr(values map[string][]string) (filter.Expr, error) {
	var parts []filter.Expr
	for _, name := range slices.Sorted(maps.Keys(listShorthands)) {
		var vals []string
		for _, v := range values[name] {
			vals = append(vals, strings.Split(v, ",")...)
		}
		vals = slices.DeleteFunc(vals, func(v string) bool { return strings.TrimSpace(v) == "" })
		if len(vals) == 0 {
			continue
		}
		q := &search.Query{}
		if err := q.AddFilter(listShorthands[name], vals); err != nil {
			return "", err
		}
		for _, g := range q.Groups {
			parts = append(parts, g.Expr())
		}
	}
	return filter.And(parts...), nil
}
