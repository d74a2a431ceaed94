package searchapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/search"
	"github.com/agentfinder/agentfinder/searchapi/web"
)

// CrawlInfo is what the about page says about crawling and federating;
// Config.Crawl supplies it.
type CrawlInfo struct {
	// Seeds are the sites and catalogs this registry crawls.
	Seeds []string
	// LastCrawl is when the last crawl finished (zero: none yet).
	LastCrawl time.Time
	// Upstreams are the registries it federates to.
	Upstreams []string
}

// sitePageSize is how many results a page shows.
const sitePageSize = 10

// homeExamples are the searches the home page offers.
var homeExamples = []string{
	"book a flight to Tokyo",
	"why is my kubernetes deployment crashlooping",
	"read patient medical records",
	"weather forecast for tomorrow",
	"file an expense report",
}

// page wraps a page handler: the concurrency limit of the API, and errors
// as HTML pages with the status classify gives them.
func (s *Server) page(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, err := s.authenticate(w, r)
		if err != nil {
			s.writeErrorPage(w, r, err)
			return
		}
		release, err := s.slot(r)
		if err != nil {
			s.writeErrorPage(w, r, err)
			return
		}
		defer release()
		if err := h(w, r); err != nil {
			s.writeErrorPage(w, r, err)
		}
	})
}

// writeErrorPage is writeError for people: the same status, code and log
// line, as a page that says what happened and what to do.
func (s *Server) writeErrorPage(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.reportError(w, r, err)
	if ae == nil {
		return
	}
	v := web.ErrorView{Page: web.Page{Title: "Error", Section: "search"}, Status: ae.Status, CorrelationID: correlationID(r.Context())}
	switch ae.Code {
	case CodeInvalidRequest, CodeUnsupportedFilter:
		v.Heading, v.Message = "That search could not be run", ae.Message+"."
	case CodeNotFound:
		v.Heading, v.Message = "Not found", "There is no agent or page at this address. It may have been removed from its catalog."
	case CodeRateLimited:
		v.Heading, v.Message = "Too busy right now", "This registry is answering many searches at once. Try again in a moment."
	case CodeUnavailable:
		v.Heading, v.Message = "Search is unavailable", "The search index cannot be reached right now. Nothing is lost; try again in a moment."
	default:
		v.Heading, v.Message = "Something went wrong", "This registry could not answer. Quote the reference below if you report it."
	}
	v.Title = v.Heading
	if err := s.site.Render(w, ae.Status, "error", v); err != nil {
		s.log.Error("render error page", "correlationId", v.CorrelationID, "err", err)
	}
}

// handlePage serves GET /: the home page without a query, the results of
// one with it.
func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) error {
	vals := r.URL.Query()
	sq, err := parseSiteQuery(vals)
	if err != nil {
		return err
	}
	if sq.text == "" {
		return s.renderHome(w, r, sq)
	}
	q, err := sq.searchQuery()
	if err != nil {
		return err
	}
	federated := q.Mode != federation.ModeNone && s.cfg.Federation != nil
	if err := s.pageOf(q, sq.page, federated); err != nil {
		return err
	}
	q.Facets = siteFacetFields
	ans, err := s.runSearch(r.Context(), q, federation.ParseVia(r.Header.Values("Via")))
	if err != nil {
		return err
	}
	hits := ans.Hits
	more := ans.PageToken != ""
	if federated {
		// The federation answered pages 1..n in one: show the last.
		first := (sq.page - 1) * sitePageSize
		hits = hits[min(first, len(hits)):]
		more = more && (sq.page+1)*sitePageSize <= search.MaxPageSize
	}
	v := s.resultsView(sq, vals, hits, ans)
	if more {
		v.Next = web.PageURL(vals, sq.page+1)
	}
	return s.site.Render(w, http.StatusOK, "search", v)
}

// pageOf points q at page n (1-based). Searches answered from the index
// alone continue at an offset (a page token of ours); federated ones ask
// for the first n pages at once, since upstream continuations cannot be
// made up, which bounds them to search.MaxPageSize results.
func (s *Server) pageOf(q *search.Query, n int, federated bool) error {
	offset := (n - 1) * sitePageSize
	switch {
	case n == 1:
	case federated:
		if n*sitePageSize > search.MaxPageSize {
			return invalid("a search that asks other registries shows at most %d pages", search.MaxPageSize/sitePageSize)
		}
		q.PageSize = n * sitePageSize
	default:
		if offset >= search.MaxOffset {
			return invalid("page must be at most %d", search.MaxOffset/sitePageSize)
		}
		q.PageToken = s.engine.PageToken(q, offset)
	}
	return nil
}

// resultsView builds the results page.
func (s *Server) resultsView(sq *siteQuery, vals url.Values, hits []federation.Hit, ans *search.Answer) web.SearchView {
	now := s.now()
	qterms := normalize.Terms(sq.text)
	match := func(word string) bool {
		for _, t := range qterms {
			if search.WordMatch(word, t) {
				return true
			}
		}
		return false
	}
	v := web.SearchView{
		Page:     sq.page0(),
		Searched: true,
		PageNum:  sq.page,
		Start:    (sq.page-1)*sitePageSize + 1,
	}
	for _, h := range hits {
		r := web.NewResult(h.Entry, h.Local, now, match)
		v.Results = append(v.Results, r)
	}
	if sq.page > 1 {
		v.Prev = web.PageURL(vals, sq.page-1)
	}
	v.Facets, v.Toggles = sq.facetGroups(vals, ans.Facets)
	v.Active = sq.active(vals)
	for _, raw := range ans.Referrals {
		var e struct {
			DisplayName string `json:"displayName"`
			Identifier  string `json:"identifier"`
			Description string `json:"description"`
			URL         string `json:"url"`
		}
		if json.Unmarshal(raw, &e) != nil {
			continue
		}
		name := e.DisplayName
		if name == "" {
			name = e.Identifier
		}
		v.Referrals = append(v.Referrals, web.Referral{Name: name, Description: web.OneLine(e.Description, 160), URL: web.SafeURL(e.URL)})
	}
	failed := 0
	for _, o := range ans.Upstreams {
		v.Upstreams = append(v.Upstreams, web.Upstream{Registry: o.Registry, Status: o.Status, Results: o.Results, LatencyMS: o.LatencyMS, Error: o.Error})
		if o.Status != federation.StatusOK {
			failed++
		}
	}
	if failed > 0 {
		v.Notice = strconv.Itoa(failed) + " of " + strconv.Itoa(len(ans.Upstreams)) + " other registries did not answer; these are the results of the rest."
	}
	if len(v.Results) == 0 && sq.page > 1 {
		v.Notice = "There are no more results for this search."
	}
	return v
}

// renderHome renders the home page, with the index's size when it answers.
func (s *Server) renderHome(w http.ResponseWriter, r *http.Request, sq *siteQuery) error {
	v := web.SearchView{Page: sq.page0()}
	v.Title = ""
	for _, ex := range homeExamples {
		v.Examples = append(v.Examples, web.FacetValue{Label: ex, URL: "/?" + url.Values{"q": {ex}}.Encode()})
	}
	if st, err := s.indexStats(r.Context()); err == nil {
		v.Stats = strconv.FormatInt(st.entries, 10) + " entries from " + strconv.Itoa(st.publishers) + " publishers, and other registries on request."
	} else if r.Context().Err() == nil {
		s.log.Warn("index stats for the home page failed", "correlationId", correlationID(r.Context()), "err", err)
	}
	return s.site.Render(w, http.StatusOK, "search", v)
}

// handleAbout serves GET /about: what this registry is and holds.
func (s *Server) handleAbout(w http.ResponseWriter, r *http.Request) error {
	v := web.AboutView{
		Page:       web.Page{Title: "About this registry", Section: "about"},
		Name:       s.cfg.RegistryName,
		URN:        s.urn,
		PublicURL:  s.publicURL,
		SearchURL:  s.publicURL + "/search",
		AgentsURL:  s.publicURL + "/agents",
		OpenAPIURL: s.publicURL + "/openapi.json",
		CatalogURL: s.publicURL + "/.well-known/ai-catalog.json",
		Auth:       s.authNote(),
	}
	if s.hasRoute(http.MethodPost, "/mcp") {
		v.MCPURL = s.publicURL + "/mcp"
	}
	st, err := s.indexStats(r.Context())
	switch {
	case err == nil:
		v.Entries, v.Publishers = int(st.entries), st.publishers
		for _, t := range st.types {
			label, _ := web.TypeLabel(t.value)
			v.Types = append(v.Types, web.FacetValue{Label: label, Count: t.count})
		}
	case r.Context().Err() != nil:
		return err
	default:
		s.log.Warn("index stats for the about page failed", "correlationId", correlationID(r.Context()), "err", err)
		v.IndexDown = true
	}
	if s.cfg.Crawl != nil {
		ci := s.cfg.Crawl()
		v.Seeds, v.Upstreams = ci.Seeds, ci.Upstreams
		if !ci.LastCrawl.IsZero() {
			v.LastCrawl = web.Ago(ci.LastCrawl, s.now()) + " (" + ci.LastCrawl.UTC().Format("2006-01-02 15:04 UTC") + ")"
			v.LastCrawlAt = ci.LastCrawl.UTC().Format(time.RFC3339)
		}
	}
	status := http.StatusOK
	if v.IndexDown {
		status = http.StatusServiceUnavailable
	}
	return s.site.Render(w, status, "about", v)
}

// hasRoute reports whether the server routes method and path to a handler
// of its own (not the fallback).
func (s *Server) hasRoute(method, path string) bool {
	_, pattern := s.mux.Handler(&http.Request{Method: method, Host: "localhost", URL: &url.URL{Path: path}})
	return pattern != "" && pattern != "/"
}

// detailPage serves an entry's page: GET /agents/{identifier} for a
// client that prefers HTML.
func (s *Server) detailPage(w http.ResponseWriter, r *http.Request, id string) {
	doc, err := s.Agent(r.Context(), id)
	if err != nil {
		s.writeErrorPage(w, r, err)
		return
	}
	v := web.NewDetail(doc, s.now())
	v.Page = web.Page{Title: v.Name, Section: "search"}
	v.JSONURL = s.publicURL + web.DetailPath(id)
	if err := s.site.Render(w, http.StatusOK, "detail", v); err != nil {
		s.writeErrorPage(w, r, err)
	}
}

// indexStatsResult is what the home and about pages say about the index.
type indexStatsResult struct {
	entries    int64
	publishers int
	types      []facetCount
}

// indexStats counts the live entries, their publishers and their types in
// one keyword request.
func (s *Server) indexStats(ctx context.Context) (indexStatsResult, error) {
	total, dist, err := s.exploreCounts(ctx, &search.Query{}, []string{normalize.FieldPublisher, normalize.FieldType})
	if err != nil {
		return indexStatsResult{}, err
	}
	return indexStatsResult{
		entries:    total,
		publishers: len(dist[normalize.FieldPublisher]),
		types:      sortedCounts(dist[normalize.FieldType], nil, 0),
	}, nil
}

// prefersHTML reports whether the request's Accept header ranks text/html
// above application/json, as browsers' do. Without an Accept header, or
// with */* alone (curl), JSON wins: API clients keep their answers.
func prefersHTML(r *http.Request) bool {
	accept := r.Header.Values("Accept")
	if len(accept) == 0 {
		return false
	}
	return acceptQuality(accept, "text", "html") > acceptQuality(accept, "application", "json")
}

// acceptQuality is the q value the Accept header gives type/sub: that of
// the most specific range matching it (type/sub, then type/*, then */*), 0
// when none does.
func acceptQuality(accept []string, typ, sub string) float64 {
	best, q := -1, 0.0
	for _, h := range accept {
		for part := range strings.SplitSeq(h, ",") {
			mt, params, _ := strings.Cut(part, ";")
			t, st, _ := strings.Cut(strings.ToLower(strings.TrimSpace(mt)), "/")
			spec := -1
			switch {
			case t == typ && st == sub:
				spec = 2
			case t == typ && st == "*":
				spec = 1
			case t == "*" && st == "*":
				spec = 0
			}
			if spec <= best {
				continue
			}
			best, q = spec, 1
			for p := range strings.SplitSeq(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					}
				}
			}
		}
	}
	return q
}
