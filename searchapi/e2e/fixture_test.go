package e2e_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/searchtest"
	"github.com/agentfinder/agentfinder/searchapi/web"
)

// testdata holds the test catalogs (searchapi's own tests read them too).
var testdata = filepath.Join("..", "testdata")

// testConfig is the configuration of the end-to-end tests' servers: no
// cut-off (these tests are about pages, toggles and shapes on a small
// catalog), a fixed page-token key and searchtest's clock.
func testConfig() searchapi.Config {
	return searchapi.Config{PublicURL: "https://finder.test.example", RegistryName: "Test Finder", MinScore: new(int),
		PageTokenKey: []byte("test-key"), Now: func() time.Time { return searchtest.Now }}
}

// serveRecords indexes recs (each document passed through mark when it is
// set) into a fresh index named after prefix and serves it over loopback
// HTTP with cfg (its Index and Meili filled in).
func serveRecords(t testing.TB, prefix string, recs []normalize.Record, mark func(*normalize.Document), cfg searchapi.Config) *httptest.Server {
	t.Helper()
	ix := searchtest.IndexRecords(t, prefix, recs, searchtest.IndexOptions{Mark: mark})
	cfg.Index, cfg.Meili = ix.Name, ix.Meili.Client
	srv, err := searchapi.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return hs
}

// newSiteServer serves the site fixture: the test catalogs with
// testdata/site.json, its about page told searchtest's crawl.
func newSiteServer(t testing.TB) *httptest.Server {
	t.Helper()
	cfg := testConfig()
	cfg.Crawl = func() web.CrawlInfo {
		return web.CrawlInfo{Seeds: searchtest.SiteSeeds, LastCrawl: searchtest.SiteLastCrawl, Upstreams: searchtest.SiteUpstreams}
	}
	return serveRecords(t, "site", searchtest.SiteRecords(t, testdata), nil, cfg)
}

// newTrustServer serves the trust fixture (searchtest.MarkTrust).
func newTrustServer(t testing.TB, withTrust bool) *httptest.Server {
	t.Helper()
	return serveRecords(t, "trust", searchtest.FixtureRecords(t, testdata), searchtest.MarkTrust(withTrust), testConfig())
}

// openAPI is searchapi's openapi.json as searchtest checks answers against it.
var openAPI = sync.OnceValues(func() (*searchtest.OpenAPI, error) {
	doc, err := os.ReadFile(filepath.Join("..", "openapi.json"))
	if err != nil {
		return nil, err
	}
	return searchtest.NewOpenAPI(doc)
})

// apiClient sends requests to hs, checking every answer against
// openapi.json.
func apiClient(t testing.TB, hs *httptest.Server) *searchtest.Client {
	t.Helper()
	set, err := openAPI()
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return &searchtest.Client{T: t, HTTP: hs.Client(), Base: hs.URL, Check: set.Conform}
}

// searchOut is a POST /search answer as the end-to-end tests read it.
type searchOut struct {
	Results []struct {
		Identifier string `json:"identifier"`
		Score      int    `json:"score"`
		Source     string `json:"source"`
	} `json:"results"`
	Error *door.ErrorDetail `json:"error"`
}

// postSearchJSON sends POST /search and reads the answer.
func postSearchJSON(c *searchtest.Client, body any) (int, searchOut) {
	c.T.Helper()
	var out searchOut
	resp := c.Do(http.MethodPost, "/search", body, nil, &out)
	return resp.StatusCode, out
}
