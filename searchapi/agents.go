package searchapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
	"github.com/agentfinder/agentfinder/searchapi/filterlang"
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

// handleList serves GET /agents (§7.2): deterministic browsing by filter and
// order, no relevance.
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) error {
	qv := r.URL.Query()
	lq, err := parseListQuery(qv)
	if err != nil {
		return err
	}
	access := accessOf(r.Context())
	f := filter.And(lq.expr, filter.Access(access))
	if !lq.includeStale {
		f = filter.And(f, filter.Live(s.now()))
	}
	// The token is bound to the translated filter, the order, the page size,
	// includeStale and the caller's access: a token only continues the
	// listing it came from.
	norm := "agents\x00" + string(lq.expr) + "\x00" + strings.Join(lq.sort, ",") + "\x00" + strconv.Itoa(lq.size) + "\x00" + strconv.FormatBool(lq.includeStale) + accessKey(access)
	offset := 0
	if t := qv.Get("pageToken"); t != "" {
		if offset, err = s.tokens.decode(norm, t); err != nil {
			return err
		}
	}
	hpp := int64(lq.size)
	req := &meilisearch.SearchRequest{
		Filter:               f.Filter(),
		Sort:                 lq.sort,
		Page:                 int64(offset/lq.size + 1),
		HitsPerPage:          &hpp,
		AttributesToRetrieve: searchAttributes,
	}
	resp, err := s.rawSearch(r.Context(), req)
	if err != nil {
		return err
	}
	out := listResponse{Items: make([]map[string]json.RawMessage, 0, len(resp.Hits)), Total: resp.TotalHits}
	for _, h := range resp.Hits {
		h["source"] = s.sourceJSON
		fillTrustHealth(h)
		out.Items = append(out.Items, h)
	}
	if next := offset + lq.size; int64(next) < resp.TotalHits && next < maxOffset {
		out.PageToken = s.tokens.encode(norm, next)
	}
	writeJSON(w, http.StatusOK, out)
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
	q := &searchQuery{}
	if err := q.addOptions(signed, live); err != nil {
		return "", err
	}
	parts := make([]filter.Expr, 0, len(q.Groups))
	for _, g := range q.Groups {
		parts = append(parts, g.expr())
	}
	return filter.And(parts...), nil
}

// internalFields are index fields never shown to clients.
var internalFields = []string{
	normalize.FieldID, normalize.FieldContentHash, normalize.FieldPublisherNames, normalize.FieldSourceCatalog,
	normalize.FieldUpdatedAtTs, normalize.FieldIndexedAtTs, normalize.FieldExpiresAtTs, "_vectors", "_rankingScore",
	"_rankingScoreDetails",
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

// Agent returns the stored record of identifier as clients see it: every
// spelling the index keys as one identifier (normalize.SameIdentifier: urn:ai:
// or urn:air:, the publisher domain in any case) finds it, and its
// "identifier" is the one its winning catalog wrote. The record's own
// provenance is under "provenance", other catalogs' claims on the identifier
// that lost to it under "lostClaims"; "source" is this registry. A missing
// record is an *APIError with Code CodeNotFound. Every binding's get-by-id
// calls this.
func (s *Server) Agent(ctx context.Context, identifier string) (map[string]json.RawMessage, error) {
	// One filtered read, whether the record is missing or hidden from the
	// caller: the same answer and the same work for both.
	var docs meilisearch.DocumentsResult
	err := s.index.GetDocumentsWithContext(ctx, &meilisearch.DocumentsQuery{
		Filter: filter.And(filter.Eq(normalize.FieldID, normalize.DocID(identifier)), filter.Access(accessOf(ctx))).Filter(),
		Limit:  1,
	}, &docs)
	if err != nil {
		return nil, err
	}
	if len(docs.Results) == 0 {
		return nil, errNotFound
	}
	doc := map[string]json.RawMessage(docs.Results[0])
	var got string
	if json.Unmarshal(doc[normalize.FieldIdentifier], &got) != nil || !normalize.SameIdentifier(got, identifier) {
		return nil, errNotFound // a key collision or a malformed document: never show another record
	}
	for _, f := range internalFields {
		delete(doc, f)
	}
	// The record's provenance moves to "provenance"; "source" is this registry.
	if p, ok := doc["source"]; ok {
		doc["provenance"] = p
	}
	doc["source"] = s.sourceJSON
	fillTrustHealth(doc)
	return doc, nil
}

// exploreBody is POST /explore: facet counts over a query and filters.
// Facets names the fields (this registry's shape); ResultType is the ARD
// shape ({"facets": [{"field", "limit", "minCount"}]}), answered in ARD's
// response shape.
type exploreBody struct {
	searchBody
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
		q, err := parseSearch(&body.searchBody, raw, false)
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
	q, err := parseSearch(&body.searchBody, raw, false)
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
