package searchapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
	"github.com/agentfinder/agentfinder/searchapi/searchtest"
	"github.com/agentfinder/agentfinder/searchapi/web"
)

// siteCrawl is what the site fixture's about page is told about crawling.
var siteCrawl = web.CrawlInfo{Seeds: searchtest.SiteSeeds, LastCrawl: searchtest.SiteLastCrawl, Upstreams: searchtest.SiteUpstreams}

// siteRecords are the test catalogs plus testdata/site.json: an entry
// whose name, description, URL, tags and trust manifest carry markup and
// script, an MCP server with a remote and an npm package, and an A2A agent
// with an endpoint.
func siteRecords(t testing.TB) []normalize.Record {
	t.Helper()
	return searchtest.SiteRecords(t, "testdata")
}

// newSiteFixture indexes siteRecords and serves them; mut adjusts the
// config (nil: no federation).
func newSiteFixture(t testing.TB, mut func(*Config)) *fixture {
	t.Helper()
	// No cut-off: the page's tests are about facets, paging and shapes on a
	// small catalog; relevance_test.go tests the cut-off.
	cfg := Config{PublicURL: "https://finder.test.example", RegistryName: "Test Finder", MinScore: new(int),
		PageTokenKey: []byte("test-key"), Now: func() time.Time { return testNow },
		Crawl: func() web.CrawlInfo { return siteCrawl }}
	return serveRecords(t, "site", siteRecords(t), nil, nil, cfg, mut)
}

// sitePage is one page as a browser would get it.
type sitePage struct {
	status int
	header http.Header
	body   string
	doc    *html.Node
}

// get fetches path as a browser does (Accept: text/html first), checks
// what every page must hold (checkPage) and returns it.
func (f *fixture) get(t *testing.T, path string) sitePage {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, f.http.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	resp, err := f.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	p := sitePage{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Fatalf("GET %s: Content-Type %q, want HTML; body %.300s", path, ct, b)
	}
	if p.doc, err = html.Parse(strings.NewReader(p.body)); err != nil {
		t.Fatalf("GET %s: parse: %v", path, err)
	}
	checkPage(t, path, p)
	return p
}

// checkPage asserts what every page must hold: the strict CSP, a skip
// link to the main landmark, a labelled search box, no inline script or
// style, no event handler attribute, only same-site or http(s) links, and
// rel="nofollow noopener" on every link leaving the site.
func checkPage(t *testing.T, path string, p sitePage) {
	t.Helper()
	csp := p.header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("GET %s: CSP %q lacks %q", path, csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("GET %s: CSP allows inline code: %q", path, csp)
	}
	var skip, mainID, label, search bool
	walk(p.doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		for _, a := range n.Attr {
			if strings.HasPrefix(a.Key, "on") || a.Key == "style" {
				t.Errorf("GET %s: <%s %s=%q>: inline code or style", path, n.Data, a.Key, a.Val)
			}
		}
		switch n.Data {
		case "script":
			if attr(n, "src") == "" || n.FirstChild != nil {
				t.Errorf("GET %s: inline <script>", path)
			}
		case "style":
			t.Errorf("GET %s: inline <style>", path)
		case "main":
			mainID = attr(n, "id") == "main"
		case "label":
			label = label || attr(n, "for") == "q"
		case "input":
			search = search || attr(n, "id") == "q" && attr(n, "name") == "q"
		case "a":
			href := attr(n, "href")
			if href == "#main" {
				skip = true
			}
			u, err := url.Parse(href)
			switch {
			case err != nil:
				t.Errorf("GET %s: bad href %q", path, href)
			case u.Scheme == "" && u.Host == "":
				// this site
			case u.Scheme != "http" && u.Scheme != "https":
				t.Errorf("GET %s: link %q is not http(s)", path, href)
			case !strings.Contains(" "+attr(n, "rel")+" ", " nofollow ") || !strings.Contains(" "+attr(n, "rel")+" ", " noopener"):
				t.Errorf("GET %s: outbound link %q has rel=%q, want nofollow noopener", path, href, attr(n, "rel"))
			}
		}
	})
	if !skip || !mainID || !label || !search {
		t.Errorf("GET %s: skip link %v, <main id=main> %v, label for q %v, search box %v: want all", path, skip, mainID, label, search)
	}
}

func walk(n *html.Node, fn func(*html.Node)) {
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// texts returns the text of every element matching class (one string each).
func texts(doc *html.Node, class string) []string {
	var out []string
	walk(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && strings.Contains(" "+attr(n, "class")+" ", " "+class+" ") {
			var b strings.Builder
			walk(n, func(c *html.Node) {
				if c.Type == html.TextNode {
					b.WriteString(c.Data)
				}
			})
			out = append(out, strings.Join(strings.Fields(b.String()), " "))
		}
	})
	return out
}

// links returns the hrefs of the <a> elements whose text contains label.
func links(doc *html.Node, label string) []string {
	var out []string
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode || n.Data != "a" {
			return
		}
		var b strings.Builder
		walk(n, func(c *html.Node) {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		})
		if strings.Contains(b.String(), label) {
			out = append(out, attr(n, "href"))
		}
	})
	return out
}

// resultNames are the result headings of a results page, in order.
func resultNames(doc *html.Node) []string {
	var out []string
	walk(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "h2" && strings.HasPrefix(attr(n, "id"), "r") {
			var b strings.Builder
			walk(n, func(c *html.Node) {
				if c.Type == html.TextNode {
					b.WriteString(c.Data)
				}
			})
			out = append(out, strings.TrimSpace(b.String()))
		}
	})
	return out
}

func TestSitePages(t *testing.T) {
	f := newSiteFixture(t, nil)

	t.Run("home", func(t *testing.T) {
		p := f.get(t, "/")
		if p.status != http.StatusOK {
			t.Fatalf("status %d", p.status)
		}
		total := len(f.byName)
		for _, d := range f.byName {
			if d.Stale || d.ExpiresAt != "" && d.ExpiresAt < testNow.Format(time.RFC3339) {
				total--
			}
		}
		if want := "entries from"; !strings.Contains(p.body, want) || len(texts(p.doc, "stats")) != 1 {
			t.Errorf("home lacks the index summary: %v", texts(p.doc, "stats"))
		}
		if got := texts(p.doc, "stats")[0]; !strings.HasPrefix(got, strconv.Itoa(total)+" entries") {
			t.Errorf("stats %q, want %d entries", got, total)
		}
		if l := links(p.doc, "book a flight to Tokyo"); len(l) != 1 || l[0] != "/?q=book+a+flight+to+Tokyo" {
			t.Errorf("example link %v", l)
		}
	})

	t.Run("results", func(t *testing.T) {
		p := f.get(t, "/?q=insurance+claims&federation=none")
		if p.status != http.StatusOK {
			t.Fatalf("status %d: %s", p.status, p.body)
		}
		names := resultNames(p.doc)
		if len(names) == 0 || names[0] != "Claims Triage Assistant" {
			t.Fatalf("results %v, want Claims Triage Assistant first", names)
		}
		first := texts(p.doc, "result")[0]
		if strings.Contains(first, "soc2 ") || strings.Contains(first, "hipaa ") {
			t.Errorf("first result %q repeats a compliance family next to its specific value", first)
		}
		for _, want := range []string{"A2A agent", "acme.com", "verified", "soc2-type2", "hipaa-audit", "ClaimReview", "insurance",
			"from this registry", "indexed 30 minutes ago", "relevance "} {
			if !strings.Contains(first, want) {
				t.Errorf("first result %q lacks %q", first, want)
			}
		}
		if strings.Contains(strings.ToLower(first), "trust") {
			t.Errorf("first result %q presents something as trust", first)
		}
		if m := texts(p.doc, "match"); len(m) == 0 || !strings.Contains(m[0], "triage a medical insurance claim") {
			t.Errorf("matched example %v", m)
		}
		if !regexp.MustCompile(`<mark>insurance</mark>`).MatchString(p.body) {
			t.Errorf("the query word is not highlighted in the matched example")
		}
		if l := links(p.doc, "Claims Triage Assistant"); len(l) == 0 || l[0] != "/agents/urn:ai:acme.com:agent:claims" {
			t.Errorf("detail link %v", l)
		}
		if !strings.Contains(p.body, `value="insurance claims"`) {
			t.Errorf("the search box does not keep the query")
		}
		// One page: the count is exact, the number of results shown.
		want := strconv.Itoa(len(names)) + " results"
		if len(names) == 1 {
			want = "1 result"
		}
		if c := texts(p.doc, "count"); len(c) != 1 || c[0] != want {
			t.Errorf("count %v, want %q", c, want)
		}
	})

	t.Run("facets", func(t *testing.T) {
		p := f.get(t, "/?q=weather&federation=none")
		facets := texts(p.doc, "facet")
		joined := strings.Join(facets, " | ")
		for _, want := range []string{"MCP server 1", "A2A agent", "weather.example"} {
			if !strings.Contains(joined, want) {
				t.Errorf("facets %q lack %q", joined, want)
			}
		}
		mcp := links(p.doc, "MCP server")
		if len(mcp) == 0 {
			t.Fatalf("no MCP server facet link in %q", joined)
		}
		p = f.get(t, mcp[0])
		names := resultNames(p.doc)
		if len(names) != 1 || !strings.Contains(names[0], "Forecast") && !strings.Contains(names[0], "Weather") {
			t.Errorf("with type=MCP server: %v, want only the forecast server", names)
		}
		// The counts are over what the narrowed search found.
		if joined := strings.Join(texts(p.doc, "facet"), " | "); !strings.Contains(joined, "MCP server 1") || strings.Contains(joined, "A2A agent") {
			t.Errorf("facets after choosing MCP server: %q", joined)
		}
		active := texts(p.doc, "active")
		if len(active) != 1 || !strings.Contains(active[0], "Type: MCP server") {
			t.Errorf("active filters %v", active)
		}
		if !strings.Contains(p.body, `type="hidden" name="type" value="application/mcp-server&#43;json"`) {
			t.Errorf("the search form does not carry the type filter")
		}
		// Removing it goes back to the unfiltered search.
		rm := links(p.doc, "Type: MCP server")
		if len(rm) != 1 {
			t.Fatalf("remove link %v", rm)
		}
		u, _ := url.Parse(rm[0])
		if u.Query().Has("type") || u.Query().Get("q") != "weather" {
			t.Errorf("remove link %q", rm[0])
		}
		// Verified only: the mirror serves weather.example's catalog, so
		// none of its entries are verified.
		p = f.get(t, "/?q=weather&federation=none&verified=1")
		for _, n := range resultNames(p.doc) {
			if strings.Contains(n, "Forecast") || strings.Contains(n, "Flight Finder") {
				t.Errorf("verified only shows %q from an unverified mirror", n)
			}
		}
		// Tags combine with AND.
		p = f.get(t, "/?q=healthcare&federation=none&tag=healthcare&tag=scheduling")
		if names := resultNames(p.doc); len(names) != 1 || names[0] != "Patient Appointment Scheduler" {
			t.Errorf("tags healthcare+scheduling: %v", names)
		}
	})

	t.Run("pages", func(t *testing.T) {
		p1 := f.get(t, "/?q=general+assistant&federation=none")
		n1 := resultNames(p1.doc)
		if len(n1) != web.PageSize {
			t.Fatalf("page 1 has %d results", len(n1))
		}
		next := links(p1.doc, "Next")
		if len(next) != 1 || len(links(p1.doc, "Previous")) != 0 {
			t.Fatalf("page 1 links: next %v previous %v", next, links(p1.doc, "Previous"))
		}
		p2 := f.get(t, next[0])
		n2 := resultNames(p2.doc)
		if len(n2) != web.PageSize {
			t.Fatalf("page 2 has %d results", len(n2))
		}
		for _, n := range n2 {
			for _, m := range n1 {
				if n == m {
					t.Errorf("%q on pages 1 and 2", n)
				}
			}
		}
		prev := links(p2.doc, "Previous")
		if len(prev) != 1 {
			t.Fatalf("page 2 previous %v", prev)
		}
		if again := resultNames(f.get(t, prev[0]).doc); strings.Join(again, ",") != strings.Join(n1, ",") {
			t.Errorf("back to page 1: %v, want %v", again, n1)
		}
		if !strings.Contains(p2.body, `<ol class="list" start="11">`) {
			t.Errorf("page 2 does not number from 11")
		}
		past := f.get(t, "/?q=general+assistant&federation=none&page=40")
		if past.status != http.StatusOK || len(resultNames(past.doc)) != 0 || !strings.Contains(past.body, "no more results") {
			t.Errorf("past the last page: status %d, results %v", past.status, resultNames(past.doc))
		}
	})

	t.Run("empty", func(t *testing.T) {
		p := f.get(t, "/?q=zqxjvbnm+plorf&federation=none")
		if p.status != http.StatusOK || !strings.Contains(p.body, "No agents match") || len(resultNames(p.doc)) != 0 {
			t.Errorf("empty: status %d, results %v", p.status, resultNames(p.doc))
		}
	})

	t.Run("bad requests", func(t *testing.T) {
		for _, path := range []string{
			"/?q=x&federation=everywhere",
			"/?q=x&page=0",
			"/?q=x&page=two",
			"/?q=x&verified=maybe",
			"/?q=" + strings.Repeat("a", search.MaxTextRunes+1),
		} {
			p := f.get(t, path)
			if p.status != http.StatusBadRequest || !strings.Contains(p.body, "That search could not be run") {
				t.Errorf("GET %.60s: status %d, want 400 with a message", path, p.status)
			}
		}
	})

	t.Run("detail", func(t *testing.T) {
		p := f.get(t, "/agents/urn:ai:tools.example.org:mcp:tickets")
		if p.status != http.StatusOK {
			t.Fatalf("status %d", p.status)
		}
		if v := p.header.Values("Vary"); !strings.Contains(strings.Join(v, ","), "Accept") {
			t.Errorf("Vary %v lacks Accept", v)
		}
		cfg := strings.Join(texts(p.doc, "copy"), "")
		for _, want := range []string{`"mcpServers"`, `"ticket-desk-mcp"`, `"url": "https://mcp.tools.example.org/tickets"`,
			`"type": "http"`, `"command": "npx"`, `"@example/tickets-mcp@1.4.0"`, `"mcp-remote"`} {
			if !strings.Contains(cfg, want) {
				t.Errorf("MCP config %q lacks %s", cfg, want)
			}
		}
		for _, want := range []string{"streamable-http", "npm/@example/tickets-mcp@1.4.0", "tools.example.org/.well-known/ai-catalog.json",
			"its /.well-known/ai-catalog.json", "Full record", "curl -s https://finder.test.example/agents/urn:ai:tools.example.org:mcp:tickets"} {
			if !strings.Contains(p.body, want) {
				t.Errorf("detail page lacks %q", want)
			}
		}
		a2a := f.get(t, "/agents/"+url.PathEscape("urn:ai:tools.example.org:agent:translator"))
		use := strings.Join(texts(a2a.doc, "use"), "")
		if !strings.Contains(use, "https://a2a.tools.example.org/translator") {
			t.Errorf("A2A use box %q lacks the endpoint", use)
		}
		claims := f.get(t, "/agents/urn%3Aai%3Aacme.com%3Aagent%3Aclaims")
		if l := links(claims.doc, "https://agents.acme.com/claims/agent-card.json"); len(l) == 0 {
			t.Errorf("no agent card link on the claims page")
		}
		if l := links(claims.doc, "HIPAA-Audit"); len(l) != 1 || l[0] != "https://acme.com/attest/hipaa.pdf" {
			t.Errorf("attestation links %v", l)
		}
		missing := f.get(t, "/agents/urn:ai:nowhere.example:agent:none")
		if missing.status != http.StatusNotFound || !strings.Contains(missing.body, "Not found") {
			t.Errorf("missing entry: %d", missing.status)
		}
	})

	t.Run("detail JSON", func(t *testing.T) {
		for _, accept := range []string{"", "*/*", "application/json", "application/json, text/html;q=0.5"} {
			var doc map[string]any
			hdr := map[string]string{}
			if accept != "" {
				hdr["Accept"] = accept
			}
			resp := f.do(http.MethodGet, "/agents/urn:ai:acme.com:agent:claims", nil, hdr, &doc)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || doc["identifier"] != "urn:ai:acme.com:agent:claims" {
				t.Errorf("Accept %q: %d %s %v", accept, resp.StatusCode, resp.Header.Get("Content-Type"), doc["identifier"])
			}
		}
	})

	t.Run("about", func(t *testing.T) {
		p := f.get(t, "/about")
		if p.status != http.StatusOK {
			t.Fatalf("status %d", p.status)
		}
		for _, want := range []string{"Test Finder", "acme.com", "tools.example.org", "3 hours ago", "https://upstream.test.example/search",
			"POST https://finder.test.example/search", "https://finder.test.example/openapi.json", "publishers"} {
			if !strings.Contains(p.body, want) {
				t.Errorf("about page lacks %q", want)
			}
		}
		if got, want := strings.Contains(p.body, "MCP endpoint"), slices.Contains(f.srv.Routes(), "POST /mcp"); got != want {
			t.Errorf("about page shows an MCP endpoint: %v, server has one: %v", got, want)
		}
	})

	t.Run("not found", func(t *testing.T) {
		p := f.get(t, "/no/such/page")
		if p.status != http.StatusNotFound {
			t.Errorf("status %d", p.status)
		}
	})

	t.Run("assets", func(t *testing.T) {
		for path, ct := range map[string]string{"/static/style.css": "text/css", "/static/app.js": "text/javascript", "/static/icon.svg": "image/svg+xml"} {
			resp, err := f.http.Client().Get(f.http.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), ct) || resp.Header.Get("Cache-Control") == "" {
				t.Errorf("GET %s: %d %q cache %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"))
			}
		}
		resp, err := f.http.Client().Get(f.http.URL + "/static/nope.js")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("missing asset: %d", resp.StatusCode)
		}
	})
}

// TestSiteUntrustedText shows an entry whose name, description, URL, tags,
// representative query and trust manifest hold markup and script: the
// pages show it as text and carry no link other than http(s).
func TestSiteUntrustedText(t *testing.T) {
	f := newSiteFixture(t, nil)
	for _, path := range []string{"/?q=cheap+flights+booker&federation=none", "/agents/urn:ai:tools.example.org:agent:evil"} {
		p := f.get(t, path) // checkPage: no inline script, no handler attribute, only http(s) links
		var names []string
		walk(p.doc, func(n *html.Node) {
			if n.Type == html.ElementNode && (n.Data == "script" && attr(n, "src") != "/static/app.js" || n.Data == "img" && attr(n, "src") == "x" || n.Data == "b" || n.Data == "i") {
				names = append(names, n.Data)
			}
		})
		if len(names) > 0 {
			t.Errorf("GET %s: catalog markup became elements: %v", path, names)
		}
		for _, want := range []string{
			"&lt;script&gt;window.__pwned=1&lt;/script&gt;&lt;b&gt;Evil&lt;/b&gt; Flight Booker",
			"&lt;img src=x onerror=&#34;window.__pwned=2&#34;&gt;",
			"&lt;i&gt;travel&lt;/i&gt;",
		} {
			if !strings.Contains(p.body, want) {
				t.Errorf("GET %s: %q not shown as text", path, want)
			}
		}
		walk(p.doc, func(n *html.Node) {
			if n.Type == html.ElementNode && n.Data == "a" && strings.Contains(attr(n, "href"), "javascript") {
				t.Errorf("GET %s: javascript link %q", path, attr(n, "href"))
			}
		})
	}
	p := f.get(t, "/agents/urn:ai:tools.example.org:agent:evil")
	if l := links(p.doc, "SOC2-Type2"); len(l) != 0 {
		t.Errorf("a javascript: attestation became a link: %v", l)
	}
	if l := links(p.doc, "tools.example.org/card.json"); len(l) != 1 || !strings.HasPrefix(strings.ToLower(l[0]), "https://tools.example.org/card.json?x=%22%3e%3cscript%3e") {
		t.Errorf("artifact link %v, want the https URL, escaped", l)
	}
}

// TestSiteFederation runs the page over a federation with a live upstream
// (a second server over the same index) and a dead one.
func TestSiteFederation(t *testing.T) {
	up := newSiteFixture(t, func(c *Config) { c.PublicURL = "https://upstream.test.example" })
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/search"
	dead.Close()
	fed, err := federation.New(federation.Config{
		Name:      "https://finder.test.example",
		Upstreams: []string{up.http.URL + "/search", deadURL},
		Budget:    3 * time.Second,
		TokenKey:  []byte("fed-key"),
		// Both upstreams listen on loopback, which the network guard
		// refuses unless opened.
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fed.Close)
	f := newSiteFixture(t, func(c *Config) { c.Federation = fed })

	t.Run("auto with a dead upstream", func(t *testing.T) {
		p := f.get(t, "/?q=insurance+claims")
		if p.status != http.StatusOK {
			t.Fatalf("status %d", p.status)
		}
		notice := texts(p.doc, "notice")
		if len(notice) != 1 || !strings.Contains(notice[0], "1 of 2 other registries did not answer") {
			t.Errorf("notice %v", notice)
		}
		ups := strings.Join(texts(p.doc, "upstreams"), " ")
		if !strings.Contains(ups, up.http.URL+"/search: answered with") || !strings.Contains(ups, deadURL+": failed") {
			t.Errorf("upstream outcomes %q", ups)
		}
		if names := resultNames(p.doc); len(names) == 0 || names[0] != "Claims Triage Assistant" {
			t.Errorf("results %v", names)
		}
	})

	t.Run("auto pages", func(t *testing.T) {
		p1 := f.get(t, "/?q=general+assistant")
		next := links(p1.doc, "Next")
		if len(next) != 1 {
			t.Fatalf("next %v", next)
		}
		p2 := f.get(t, next[0])
		n1, n2 := resultNames(p1.doc), resultNames(p2.doc)
		if len(n2) == 0 {
			t.Fatalf("page 2 empty")
		}
		for _, n := range n2 {
			for _, m := range n1 {
				if n == m {
					t.Errorf("%q on pages 1 and 2", n)
				}
			}
		}
		if tooFar := f.get(t, "/?q=general+assistant&page=11"); tooFar.status != http.StatusBadRequest {
			t.Errorf("page 11 of a federated search: %d, want 400", tooFar.status)
		}
	})

	t.Run("referrals", func(t *testing.T) {
		p := f.get(t, "/?q=insurance&federation=referrals")
		ref := texts(p.doc, "referrals")
		if len(ref) != 1 || !strings.Contains(ref[0], "Also try these registries") {
			t.Fatalf("referrals %v", ref)
		}
		if l := links(p.doc, "127.0.0.1"); len(l) == 0 {
			t.Errorf("no referral link in %q", ref[0])
		}
		if !strings.Contains(p.body, `<option value="referrals" selected>`) {
			t.Errorf("the federation choice is not kept")
		}
	})
}

// TestSiteIndexUnavailable serves the pages over an index that does not
// exist: searches and the about page say so with 503, the home page still
// answers.
func TestSiteIndexUnavailable(t *testing.T) {
	f := newSiteFixture(t, func(c *Config) { c.Index = "site_no_such_index_" + strconv.FormatInt(time.Now().UnixNano(), 36) })
	p := f.get(t, "/?q=flights")
	if p.status != http.StatusServiceUnavailable || !strings.Contains(p.body, "Search is unavailable") || p.header.Get("Retry-After") == "" {
		t.Errorf("search: %d, Retry-After %q", p.status, p.header.Get("Retry-After"))
	}
	if a := f.get(t, "/about"); a.status != http.StatusServiceUnavailable || !strings.Contains(a.body, "cannot be reached") {
		t.Errorf("about: %d", a.status)
	}
	if h := f.get(t, "/"); h.status != http.StatusOK || len(texts(h.doc, "stats")) != 0 {
		t.Errorf("home: %d, stats %v", h.status, texts(h.doc, "stats"))
	}
	if d := f.get(t, "/agents/urn:ai:acme.com:agent:claims"); d.status != http.StatusServiceUnavailable {
		t.Errorf("detail: %d", d.status)
	}
}

func TestPrefersHTML(t *testing.T) {
	for _, tc := range []struct {
		name, accept string
		want         bool
	}{
		{"none", "", false},
		{"curl", "*/*", false},
		{"json", "application/json", false},
		{"firefox", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true},
		{"chrome", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7", true},
		{"json preferred", "application/json, text/html;q=0.5", false},
		{"html refused", "text/html;q=0, */*", false},
		{"text wildcard", "text/*, application/json;q=0.5", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/agents/x", nil)
			if tc.accept != "" {
				r.Header.Set("Accept", tc.accept)
			}
			if got := door.PrefersHTML(r); got != tc.want {
				t.Errorf("door.PrefersHTML(%q) = %v, want %v", tc.accept, got, tc.want)
			}
		})
	}
}
