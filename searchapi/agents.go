package searchapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
	"github.com/agentfinder/agentfinder/searchapi/filterlang"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

const (
	defaultListSize = 20
	maxListSize     = 100
)

// listResponse is GET /agents's answer.
type listResponse struct {
	Items     []map[string]json.RawMessage `json:"items"`
	Total     int64                        `json:"total"`
	PageToken string                       `json:"pageToken,omitempty"`
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) error {
	var body search.Request
	raw, err := decodeBody(w, r, &body)
	if err != nil {
		return err
	}
	q, err := search.ParseRequest(&body, raw, true)
	if err != nil {
		return err
	}
	ans, err := s.runSearch(r.Context(), q, federation.ParseVia(r.Header.Values("Via")))
	if err != nil {
		return err
	}
	writeSearch(w, ans)
	return nil
}

// handleList serves GET /agents (§7.2): deterministic browsing by filter and
// order, no relevance.
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) error {
	qv := r.URL.Query()
	lq, err := parseListQuery(qv)
	if err != nil {
		return err
	}
	page, err := s.engine.List(r.Context(), search.Listing{Filter: lq.expr, Sort: lq.sort, Size: lq.size,
		IncludeStale: lq.includeStale, PageToken: qv.Get("pageToken"), Access: accessOf(r.Context())})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, listResponse{Items: page.Items, Total: page.Total, PageToken: page.PageToken})
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
			return listQuery{}, invalid("unknown query parameter %q", k)
		}
	}
	lq := listQuery{size: defaultListSize}
	if v := qv.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListSize {
			return listQuery{}, invalid("pageSize must be an integer from 1 to %d", maxListSize)
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
		return false, invalid("%s must be true or false", name)
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
func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) error {
	w.Header().Add("Vary", "Accept")
	id := r.PathValue("identifier")
	if id == "" {
		return invalid("identifier is required")
	}
	if prefersHTML(r) {
		s.detailPage(w, r, id)
		return nil
	}
	doc, err := s.Agent(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, doc)
	return nil
}

// exploreBody is POST /explore: facet counts over a query and filters.
// Facets names the fields (this registry's shape); ResultType is the ARD
// shape ({"facets": [{"field", "limit", "minCount"}]}), answered in ARD's
// response shape.
type exploreBody struct {
	search.Request
	Facets     []string        `json:"facets"`
	ResultType json.RawMessage `json:"resultType"`
}

var defaultFacets = []string{"type", "publisher", "tags", "compliance"}

// exploreResponse is POST /explore's answer.
type exploreResponse struct {
	Total  int64                     `json:"total"`
	Facets map[string]map[string]int `json:"facets"`
}

func (s *Server) handleExplore(w http.ResponseWriter, r *http.Request) error {
	var body exploreBody
	raw, err := decodeBody(w, r, &body)
	if err != nil {
		return err
	}
	if body.ResultType != nil {
		q, err := search.ParseRequest(&body.Request, raw, false)
		if err != nil {
			return err
		}
		return s.exploreARD(w, r, q, body.ResultType)
	}
	out, err := s.explore(r.Context(), &body, raw)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// explore answers a decoded POST /explore body (raw is the body as sent).
func (s *Server) explore(ctx context.Context, body *exploreBody, raw []byte) (*exploreResponse, error) {
	q, err := search.ParseRequest(&body.Request, raw, false)
	if err != nil {
		return nil, err
	}
	names := body.Facets
	if len(names) == 0 {
		names = defaultFacets
	}
	fields := make([]string, 0, len(names))
	for _, n := range names {
		f, ok := normalize.FacetFields[n]
		if !ok {
			return nil, unsupported("facet %q is not supported", n)
		}
		fields = append(fields, f)
	}
	total, dist, err := s.exploreCounts(ctx, q, fields)
	if err != nil {
		return nil, err
	}
	out := &exploreResponse{Total: total, Facets: map[string]map[string]int{}}
	for i, n := range names {
		m := dist[fields[i]]
		if m == nil {
			m = map[string]int{}
		}
		out.Facets[n] = m
	}
	return out, nil
}
