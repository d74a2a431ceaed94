// Package api is the door of the Agent Finder API and its successor ARD:
// POST /search, GET /agents (deterministic browsing, with the filter
// language of searchapi/filterlang and HAIDIP's shorthands),
// GET /agents/{identifier} and POST /explore (this registry's facet counts
// and ARD's resultType.facets). Requests become searchapi/search queries;
// answers and errors keep the Agent Finder shapes
// ({"error":{"code","message","correlationId"}}). It imports the engine,
// searchapi/filter, searchapi/filterlang and searchapi/door only.
package api

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/filter"
	"github.com/agentfinder/agentfinder/searchapi/filterlang"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// Door serves the Agent Finder API over an engine.
type Door struct {
	engine *search.Engine
	page   func(w http.ResponseWriter, r *http.Request, identifier string)
}

// New returns the Agent Finder door over e; page, when set, answers
// GET /agents/{identifier} for a client that prefers HTML (a browser) with
// the entry's page (the site's).
func New(e *search.Engine, page func(w http.ResponseWriter, r *http.Request, identifier string)) *Door {
	return &Door{engine: e, page: page}
}

// Routes are the door's routes, answering errors in the Agent Finder shape.
func (d *Door) Routes() []door.Route {
	return []door.Route{
		{Pattern: "POST /search", Handle: d.handleSearch},
		{Pattern: "GET /agents", Handle: d.handleList},
		{Pattern: "GET /agents/{identifier...}", Handle: d.handleGet},
		{Pattern: "POST /explore", Handle: d.handleExplore},
	}
}

const (
	defaultListSize = 20
	maxListSize     = 100
)

// ListResponse is GET /agents's answer.
type ListResponse struct {
	Items     []map[string]json.RawMessage `json:"items"`
	Total     int64                        `json:"total"`
	PageToken string                       `json:"pageToken,omitempty"`
}

func (d *Door) handleSearch(w http.ResponseWriter, r *http.Request) error {
	var body search.Request
	raw, err := door.DecodeBody(w, r, &body)
	if err != nil {
		return err
	}
	q, err := search.ParseRequest(&body, raw, true)
	if err != nil {
		return err
	}
	ans, err := door.Search(r, d.engine, q)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(ans.Encode())
	return nil
}

// handleList serves GET /agents (§7.2): deterministic browsing by filter and
// order, no relevance.
func (d *Door) handleList(w http.ResponseWriter, r *http.Request) error {
	qv := r.URL.Query()
	lq, err := parseListQuery(qv)
	if err != nil {
		return err
	}
	page, err := d.engine.List(r.Context(), search.Listing{Filter: lq.expr, Sort: lq.sort, Size: lq.size,
		IncludeStale: lq.includeStale, PageToken: qv.Get("pageToken"), Access: door.AccessOf(r.Context())})
	if err != nil {
		return err
	}
	door.WriteJSON(w, http.StatusOK, ListResponse{Items: page.Items, Total: page.Total, PageToken: page.PageToken})
	return nil
}

// listQuery is a GET /agents request as its URL gives it.
type listQuery struct {
	expr         filter.Expr // the filter, shorthand parameters and options, translated
	sort         []string    // Meilisearch sort rules
	size         int
	includeStale bool
}

// parseListQuery reads and checks GET /agents's parameters (pageToken is
// read against the listing it continues, by the caller).
func parseListQuery(qv url.Values) (listQuery, error) {
	for k := range qv {
		switch k {
		case "filter", "orderBy", "pageSize", "pageToken", "includeStale", "capability", "language", "signedOnly", "liveOnly":
		default:
			return listQuery{}, door.Invalid("unknown query parameter %q", k)
		}
	}
	lq := listQuery{size: defaultListSize}
	if v := qv.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListSize {
			return listQuery{}, door.Invalid("pageSize must be an integer from 1 to %d", maxListSize)
		}
		lq.size = n
	}
	var err error
	if lq.includeStale, err = boolParam(qv, "includeStale"); err != nil {
		return listQuery{}, err
	}
	expr, err := filterlang.Parse(qv.Get("filter"))
	if err != nil {
		return listQuery{}, err
	}
	short, err := shorthandExpr(qv)
	if err != nil {
		return listQuery{}, err
	}
	opts, err := listOptionsExpr(qv)
	if err != nil {
		return listQuery{}, err
	}
	lq.expr = filter.And(expr, short, opts)
	if lq.sort, err = filterlang.OrderBy(qv.Get("orderBy")); err != nil {
		return listQuery{}, err
	}
	return lq, nil
}

// boolParam reads a true/false query parameter (false when absent).
func boolParam(qv url.Values, name string) (bool, error) {
	v := qv.Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, door.Invalid("%s must be true or false", name)
	}
	return b, nil
}

// listOptionsExpr is the filter of GET /agents's signedOnly and liveOnly
// parameters, the same filters as POST /search's options.
func listOptionsExpr(qv url.Values) (filter.Expr, error) {
	signed, err := boolParam(qv, "signedOnly")
	if err != nil {
		return "", err
	}
	live, err := boolParam(qv, "liveOnly")
	if err != nil {
		return "", err
	}
	q := &search.Query{}
	if err := q.AddOptions(signed, live); err != nil {
		return "", err
	}
	parts := make([]filter.Expr, 0, len(q.Groups))
	for _, g := range q.Groups {
		parts = append(parts, g.Expr())
	}
	return filter.And(parts...), nil
}

// handleGet serves GET /agents/{identifier}: the full record of one
// (percent-encoded) identifier, in any spelling of it, as JSON, or as the
// entry's page when the client prefers HTML (a browser).
func (d *Door) handleGet(w http.ResponseWriter, r *http.Request) error {
	w.Header().Add("Vary", "Accept")
	id := r.PathValue("identifier")
	if id == "" {
		return door.Invalid("identifier is required")
	}
	if d.page != nil && door.PrefersHTML(r) {
		d.page(w, r, id)
		return nil
	}
	doc, err := d.engine.Agent(r.Context(), id, door.AccessOf(r.Context()))
	if err != nil {
		return err
	}
	door.WriteJSON(w, http.StatusOK, doc)
	return nil
}

func (d *Door) handleExplore(w http.ResponseWriter, r *http.Request) error {
	var body search.ExploreRequest
	raw, err := door.DecodeBody(w, r, &body)
	if err != nil {
		return err
	}
	if body.ResultType != nil {
		q, err := search.ParseRequest(&body.Request, raw, false)
		if err != nil {
			return err
		}
		return d.exploreARD(w, r, q, body.ResultType)
	}
	out, err := d.engine.Explore(r.Context(), &body, raw, door.AccessOf(r.Context()))
	if err != nil {
		return err
	}
	door.WriteJSON(w, http.StatusOK, out)
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
