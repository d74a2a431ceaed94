// Package haidip is the door of AI Agent Discovery and Invocation
// (draft-cui-ai-agent-discovery-invocation): POST /agents/search. Its
// search request (query, filters, top, skip, ranked, include_metadata) is
// translated into a searchapi/search Query, and the engine's answer into
// its response (results, count, query, top, skip, search_time); errors are
// answered in its error object. GET /agents takes its capability and
// language shorthands (the Agent Finder door, searchapi/api). It imports
// the engine and searchapi/door only.
package haidip

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// Door serves POST /agents/search over an engine.
type Door struct{ engine *search.Engine }

// New returns the HAIDIP door over e.
func New(e *search.Engine) *Door { return &Door{engine: e} }

// Routes are the door's one route, answering errors in HAIDIP's shape.
func (d *Door) Routes() []door.Route {
	return []door.Route{{Pattern: "POST /agents/search", Handle: d.handleAgentsSearch, Shape: haidipError}}
}

// Request is HAIDIP's search request.
type Request struct {
	Query           *string                    `json:"query"`
	Filters         map[string]json.RawMessage `json:"filters"`
	Top             json.RawMessage            `json:"top"`
	Skip            *int                       `json:"skip"`
	Ranked          *bool                      `json:"ranked"`
	IncludeMetadata bool                       `json:"include_metadata"`
	Federation      *string                    `json:"federation"`
}

// Response is HAIDIP's search response.
type Response struct {
	Results    []Result `json:"results"`
	Count      int      `json:"count"`
	Query      string   `json:"query"`
	Top        int      `json:"top"`
	Skip       int      `json:"skip"`
	SearchTime float64  `json:"search_time"` // milliseconds
}

// Result is one agent of a Response.
type Result struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Score       *float64        `json:"score,omitempty"` // absent when ranked is false
	Trust       *door.Trust     `json:"trust,omitempty"`
	Health      *door.Health    `json:"health,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
}

// haidipError is HAIDIP's error object: {"error":{"code","message"}} with
// its CamelCase codes, plus our correlation id.
func haidipError(ae *door.APIError, cid string) any {
	code := map[string]string{
		door.CodeInvalidRequest: "InvalidInput", door.CodeUnsupportedFilter: "UnsupportedFilter", door.CodeUnauthorized: "Unauthorized",
		door.CodeForbidden: "Forbidden", door.CodeNotFound: "NotFound", door.CodeRateLimited: "RateLimited", door.CodeUnavailable: "ServiceUnavailable",
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
func haidipQuery(req *Request) (q *search.Query, top, skip int, err error) {
	if req.Query == nil || strings.TrimSpace(*req.Query) == "" {
		return nil, 0, 0, door.Invalid("query is required and must not be empty")
	}
	q = &search.Query{}
	if q.Text, err = search.ParseText(req.Query, true); err != nil {
		return nil, 0, 0, err
	}
	if q.Mode, err = search.ParseFederation(nil, req.Federation); err != nil {
		return nil, 0, 0, err
	}
	if top, err = search.ParsePageSize(req.Top, nil); err != nil {
		return nil, 0, 0, door.Invalid("top must be an integer from 1 to %d", search.MaxPageSize)
	}
	if req.Skip != nil {
		skip = *req.Skip
	}
	if skip < 0 || skip+top > search.MaxPageSize {
		return nil, 0, 0, door.Invalid("skip must be 0 or more and skip + top at most %d", search.MaxPageSize)
	}
	q.PageSize = skip + top
	for _, name := range slices.Sorted(maps.Keys(req.Filters)) {
		if name == "signed_only" || name == "live_only" {
			var on bool
			if err := json.Unmarshal(req.Filters[name], &on); err != nil {
				return nil, 0, 0, door.Invalid("filters.%s must be true or false", name)
			}
			if err := q.AddOptions(on && name == "signed_only", on && name == "live_only"); err != nil {
				return nil, 0, 0, err
			}
			continue
		}
		key, ok := haidipFilters[name]
		if !ok {
			return nil, 0, 0, door.Unsupported("filter %q is not supported (supported: capabilities, supported_language, authentication, provider, tags, protocols, type, trust_level, health, signed_only, live_only)", name)
		}
		var l search.StringList
		if err := json.Unmarshal(req.Filters[name], &l); err != nil {
			return nil, 0, 0, door.Invalid("filters.%s must be a string or an array of strings", name)
		}
		if err := q.AddFilter(key, l); err != nil {
			return nil, 0, 0, err
		}
	}
	return q, top, skip, nil
}

func (d *Door) handleAgentsSearch(w http.ResponseWriter, r *http.Request) error {
	start := time.Now()
	var req Request
	if _, err := door.DecodeBody(w, r, &req); err != nil {
		return err
	}
	q, top, skip, err := haidipQuery(&req)
	if err != nil {
		return err
	}
	ans, err := door.Search(r, d.engine, q)
	if err != nil {
		return err
	}
	hits := ans.Hits
	if skip < len(hits) {
		hits = hits[skip:]
	} else {
		hits = nil
	}
	out := Response{Results: make([]Result, 0, len(hits)), Query: q.Text, Top: top, Skip: skip}
	ranked := req.Ranked == nil || *req.Ranked
	for _, h := range hits {
		res := Result{ID: h.Identifier, Name: door.EntryString(h.Entry, "displayName"), Description: door.EntryString(h.Entry, "description")}
		res.Trust, res.Health = door.TrustHealth(h.Entry)
		if ranked {
			sc := search.Round3(h.Score / 100)
			res.Score = &sc
		}
		if req.IncludeMetadata {
			res.Metadata = door.MustJSON(h.Entry)
		}
		out.Results = append(out.Results, res)
	}
	if !ranked {
		slices.SortStableFunc(out.Results, func(a, b Result) int {
			return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
		})
	}
	out.Count = len(out.Results)
	out.SearchTime = search.Round3(float64(time.Since(start).Microseconds()) / 1000)
	door.WriteJSON(w, http.StatusOK, out)
	return nil
}
