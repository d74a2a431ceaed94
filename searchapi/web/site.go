package web

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
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
	// Unseeded says this registry crawls but has no seeds at all: its
	// index holds only what others wrote, and an empty search says why.
	Unseeded bool
}

// Options are what the site says about the registry around the engine's
// answers.
type Options struct {
	// Name, URN and PublicURL name the registry (PublicURL without a
	// trailing slash).
	Name, URN, PublicURL string
	// AuthNote says how the API authenticates, for the about page.
	AuthNote string
	// MCP is true when the registry serves MCP on PublicURL + "/mcp".
	MCP bool
	// Federating is true when searches may ask other registries.
	Federating bool
	// Crawl, when set, tells the about page what this registry crawls.
	Crawl func() CrawlInfo
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Fail answers an error as the server answers a page's errors (its
	// error page, after logging); the detail page calls it. nil: ErrorPage
	// without a log line.
	Fail func(w http.ResponseWriter, r *http.Request, err error)
	// Logger receives the site's warnings; nil discards them.
	Logger *slog.Logger
}

// Site is the search site for people over an engine: the home and results
// page (GET /), the about page, an entry's page and the error pages.
type Site struct {
	engine   *search.Engine
	renderer *Renderer
	opts     Options
	log      *slog.Logger
}

// NewSite returns the site over e.
func NewSite(e *search.Engine, opts Options) (*Site, error) {
	r, err := New()
	if err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Site{engine: e, renderer: r, opts: opts, log: log}
	if s.opts.Fail == nil {
		s.opts.Fail = func(w http.ResponseWriter, r *http.Request, err error) { s.ErrorPage(w, r, door.Classify(err)) }
	}
	return s, nil
}

// Routes are the site's pages (behind the server's page middleware) and
// its assets.
func (s *Site) Routes() []door.Route {
	static := Static("/static/")
	return []door.Route{
		{Pattern: "GET /{$}", Handle: s.handlePage, Page: true},
		{Pattern: "GET /about", Handle: s.handleAbout, Page: true},
		{Pattern: "GET /static/", Handle: func(w http.ResponseWriter, r *http.Request) error {
			static.ServeHTTP(w, r)
			return nil
		}, Bare: true},
	}
}

// PageSize is how many results a page shows.
const PageSize = 10

// homeExamples are the searches the home page offers.
var homeExamples = []string{
	"book a flight to Tokyo",
	"why is my kubernetes deployment crashlooping",
	"read patient medical records",
	"weather forecast for tomorrow",
	"file an expense report",
}

// ErrorPage writes a classified error for people: the same status and
// code the API would answer, as a page that says what happened and what to
// do (the server classified and logged it).
func (s *Site) ErrorPage(w http.ResponseWriter, r *http.Request, ae *door.APIError) {
	v := ErrorView{Page: Page{Title: "Error", Section: "search"}, Status: ae.Status, CorrelationID: door.CorrelationID(r.Context())}
	switch ae.Code {
	case door.CodeInvalidRequest, door.CodeUnsupportedFilter:
		v.Heading, v.Message = "That search could not be run", ae.Message+"."
	case door.CodeNotFound:
		v.Heading, v.Message = "Not found", "There is no agent or page at this address. It may have been removed from its catalog."
	case door.CodeRateLimited:
		v.Heading, v.Message = "Too busy right now", "This registry is answering many searches at once. Try again in a moment."
	case door.CodeUnavailable:
		v.Heading, v.Message = "Search is unavailable", "The search index cannot be reached right now. Nothing is lost; try again in a moment."
	default:
		v.Heading, v.Message = "Something went wrong", "This registry could not answer. Quote the reference below if you report it."
	}
	v.Title = v.Heading
	if err := s.renderer.Render(w, ae.Status, "error", v); err != nil {
		s.log.Error("render error page", "correlationId", v.CorrelationID, "err", err)
	}
}

// handlePage serves GET /: the home page without a query, the results of
// one with it.
func (s *Site) handlePage(w http.ResponseWriter, r *http.Request) error {
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
	federated := q.Mode != federation.ModeNone && s.opts.Federating
	if err := s.pageOf(q, sq.page, federated); err != nil {
		return err
	}
	q.Facets = siteFacetFields
	ans, err := door.Search(r, s.engine, q)
	if err != nil {
		return err
	}
	hits := ans.Hits
	more := ans.PageToken != ""
	if federated {
		// The federation answered pages 1..n in one: show the last.
		first := (sq.page - 1) * PageSize
		hits = hits[min(first, len(hits)):]
		more = more && (sq.page+1)*PageSize <= search.MaxPageSize
	}
	v := s.resultsView(sq, vals, hits, ans)
	if more && len(hits) > 0 { // an empty page has no next one
		v.Next = PageURL(vals, sq.page+1)
	}
	v.Count = resultCount(v.Start-1+len(v.Results), more)
	return s.renderer.Render(w, http.StatusOK, "search", v)
}

// resultCount says how many results a search has: shown is how many the
// pages up to this one hold, more whether another page follows (results
// end where relevance ends, so most searches fit one page and the count
// is exact).
func resultCount(shown int, more bool) string {
	switch {
	case more:
		return "more than " + strconv.Itoa(shown) + " results"
	case shown == 1:
		return "1 result"
	}
	return strconv.Itoa(shown) + " results"
}

// pageOf points q at page n (1-based). Searches answered from the index
// alone continue at an offset (a page token of ours); federated ones ask
// for the first n pages at once, since upstream continuations cannot be
// made up, which bounds them to search.MaxPageSize results.
func (s *Site) pageOf(q *search.Query, n int, federated bool) error {
	offset := (n - 1) * PageSize
	switch {
	case n == 1:
	case federated:
		if n*PageSize > search.MaxPageSize {
			return door.Invalid("a search that asks other registries shows at most %d pages", search.MaxPageSize/PageSize)
		}
		q.PageSize = n * PageSize
	default:
		if offset >= search.MaxOffset {
			return door.Invalid("page must be at most %d", search.MaxOffset/PageSize)
		}
		q.PageToken = s.engine.PageToken(q, offset)
	}
	return nil
}

// resultsView builds the results page.
func (s *Site) resultsView(sq *siteQuery, vals url.Values, hits []federation.Hit, ans *search.Answer) SearchView {
	now := s.opts.Now()
	qterms := normalize.Terms(sq.text)
	match := func(word string) bool {
		for _, t := range qterms {
			if normalize.WordMatch(word, t) {
				return true
			}
		}
		return false
	}
	v := SearchView{
		Page:     sq.page0(),
		Searched: true,
		PageNum:  sq.page,
		Start:    (sq.page-1)*PageSize + 1,
	}
	for _, h := range hits {
		r := NewResult(h.Entry, h.Local, now, match)
		v.Results = append(v.Results, r)
	}
	if sq.page > 1 {
		v.Prev = PageURL(vals, sq.page-1)
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
		v.Referrals = append(v.Referrals, Referral{Name: name, Description: OneLine(e.Description, 160), URL: door.SafeURL(e.URL)})
	}
	failed := 0
	for _, o := range ans.Upstreams {
		v.Upstreams = append(v.Upstreams, Upstream{Registry: o.Registry, Status: o.Status, Results: o.Results, LatencyMS: o.LatencyMS, Error: o.Error})
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
func (s *Site) renderHome(w http.ResponseWriter, r *http.Request, sq *siteQuery) error {
	v := SearchView{Page: sq.page0()}
	v.Title = ""
	for _, ex := range homeExamples {
		v.Examples = append(v.Examples, FacetValue{Label: ex, URL: "/?" + url.Values{"q": {ex}}.Encode()})
	}
	if st, err := s.indexStats(r.Context()); err == nil {
		v.Stats = strconv.FormatInt(st.entries, 10) + " entries from " + strconv.Itoa(st.publishers) + " publishers, and other registries on request."
	} else if r.Context().Err() == nil {
		s.log.Warn("index stats for the home page failed", "correlationId", door.CorrelationID(r.Context()), "err", err)
	}
	return s.renderer.Render(w, http.StatusOK, "search", v)
}

// handleAbout serves GET /about: what this registry is and holds.
func (s *Site) handleAbout(w http.ResponseWriter, r *http.Request) error {
	v := AboutView{
		Page:       Page{Title: "About this registry", Section: "about"},
		Name:       s.opts.Name,
		URN:        s.opts.URN,
		PublicURL:  s.opts.PublicURL,
		SearchURL:  s.opts.PublicURL + "/search",
		AgentsURL:  s.opts.PublicURL + "/agents",
		OpenAPIURL: s.opts.PublicURL + "/openapi.json",
		CatalogURL: s.opts.PublicURL + "/.well-known/ai-catalog.json",
		Auth:       s.opts.AuthNote,
	}
	if s.opts.MCP {
		v.MCPURL = s.opts.PublicURL + "/mcp"
	}
	st, err := s.indexStats(r.Context())
	switch {
	case err == nil:
		v.Entries, v.Publishers = int(st.entries), st.publishers
		for _, t := range st.types {
			label, _ := TypeLabel(t.value)
			v.Types = append(v.Types, FacetValue{Label: label, Count: t.count})
		}
	case r.Context().Err() != nil:
		return err
	default:
		s.log.Warn("index stats for the about page failed", "correlationId", door.CorrelationID(r.Context()), "err", err)
		v.IndexDown = true
	}
	if s.opts.Crawl != nil {
		ci := s.opts.Crawl()
		v.Seeds, v.Upstreams = ci.Seeds, ci.Upstreams
		if !ci.LastCrawl.IsZero() {
			v.LastCrawl = Ago(ci.LastCrawl, s.opts.Now()) + " (" + ci.LastCrawl.UTC().Format("2006-01-02 15:04 UTC") + ")"
			v.LastCrawlAt = ci.LastCrawl.UTC().Format(time.RFC3339)
		}
	}
	status := http.StatusOK
	if v.IndexDown {
		status = http.StatusServiceUnavailable
	}
	return s.renderer.Render(w, status, "about", v)
}

// DetailPage serves an entry's page: GET /agents/{identifier} for a
// client that prefers HTML (the Agent Finder door's hook).
func (s *Site) DetailPage(w http.ResponseWriter, r *http.Request, id string) {
	doc, err := s.engine.Agent(r.Context(), id, door.AccessOf(r.Context()))
	if err != nil {
		s.opts.Fail(w, r, err)
		return
	}
	v := NewDetail(doc, s.opts.Now())
	v.Page = Page{Title: v.Name, Section: "search"}
	v.JSONURL = s.opts.PublicURL + DetailPath(id)
	if err := s.renderer.Render(w, http.StatusOK, "detail", v); err != nil {
		s.opts.Fail(w, r, err)
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
func (s *Site) indexStats(ctx context.Context) (indexStatsResult, error) {
	total, dist, err := s.engine.Facets(ctx, door.Prepare(ctx, &search.Query{}), []string{normalize.FieldPublisher, normalize.FieldType})
	if err != nil {
		return indexStatsResult{}, err
	}
	return indexStatsResult{
		entries:    total,
		publishers: len(dist[normalize.FieldPublisher]),
		types:      sortedCounts(dist[normalize.FieldType], nil, 0),
	}, nil
}
