package searchapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
	"github.com/agentfinder/agentfinder/searchapi/searchtest"
)

// testNow is the clock of every test server (searchtest.Now).
var testNow = searchtest.Now

// catalogRecords normalizes a manifest as if fetched from origin
// (searchtest.CatalogRecords: through normalize alone).
func catalogRecords(t testing.TB, body []byte, origin string) []normalize.Record {
	t.Helper()
	return searchtest.CatalogRecords(t, body, origin)
}

// fixture is a real index with the test catalogs and a server over it.
type fixture struct {
	t      testing.TB
	meili  *meilitest.Server
	index  string
	srv    *Server
	http   *httptest.Server
	byName map[string]normalize.Document
}

// fillerCount is how many near-identical "filler" records the fixture adds,
// enough for several pages.
const fillerCount = searchtest.FillerCount

func newFixture(t testing.TB, mut func(*Config)) *fixture {
	t.Helper()
	return newFixtureEmbedded(t, mut, nil)
}

// newFixtureEmbedded is newFixture with, when emb is not nil, a
// userProvided embedder on the index, every document's vectors laid out as
// ingest lays them out (embedTexts) and emb as the server's Embedder.
func newFixtureEmbedded(t testing.TB, mut func(*Config), emb search.Embedder) *fixture {
	t.Helper()
	recs := fixtureRecords(t)
	// No cut-off: these tests are about filters, paging and shapes on a
	// small catalog; relevance_test.go tests the cut-off.
	cfg := Config{PublicURL: "https://finder.test.example", RegistryName: "Test Finder", MinScore: new(int),
		PageTokenKey: []byte("test-key"), Now: func() time.Time { return testNow }}
	return serveRecords(t, "searchapi", recs, emb, searchtest.MarkStale, cfg, mut)
}

// serveRecords indexes recs (with vectors, as ingest lays them out, when emb
// is set; each document passed through mark when it is set) into a fresh
// index named after prefix and serves it with cfg (its Index, Meili and
// Embedder filled in), then mut.
func serveRecords(t testing.TB, prefix string, recs []normalize.Record, emb search.Embedder, mark func(*normalize.Document), cfg Config, mut func(*Config)) *fixture {
	t.Helper()
	o := searchtest.IndexOptions{Mark: mark}
	if emb != nil {
		o.Dimensions = emb.Dimensions()
		o.Vectors = func(r normalize.Record) map[string]any { return embedDoc(t, emb, r) }
	}
	ix := searchtest.IndexRecords(t, prefix, recs, o)
	f := &fixture{t: t, meili: ix.Meili, index: ix.Name, byName: ix.ByName}
	cfg.Index, cfg.Meili, cfg.Embedder = ix.Name, ix.Meili.Client, emb
	if mut != nil {
		mut(&cfg)
	}
	srv, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	f.http = httptest.NewServer(srv.Handler())
	t.Cleanup(f.http.Close)
	return f
}

// fillerCatalog is a manifest of n similar general assistants
// (searchtest.FillerCatalog).
func fillerCatalog(n int) []byte { return searchtest.FillerCatalog(n) }

// do sends a request and decodes the JSON answer into out (if non-nil);
// every answer is checked against openapi.json.
func (f *fixture) do(method, path string, body any, hdr map[string]string, out any) *http.Response {
	f.t.Helper()
	c := searchtest.Client{T: f.t, HTTP: f.http.Client(), Base: f.http.URL, Check: conformOpenAPI}
	return c.Do(method, path, body, hdr, out)
}

// searchResult is a result as tests read it.
type searchResult struct {
	Identifier        string           `json:"identifier"`
	Type              string           `json:"type"`
	Score             int              `json:"score"`
	Source            string           `json:"source"`
	Tags              []string         `json:"tags"`
	Publisher         string           `json:"publisher"`
	PublisherVerified bool             `json:"publisherVerified"`
	Evidence          *search.Evidence `json:"evidence"`
}

type searchOut struct {
	Results   []searchResult    `json:"results"`
	Referrals []json.RawMessage `json:"referrals"`
	Upstreams []json.RawMessage `json:"upstreams"`
	PageToken string            `json:"pageToken"`
	Error     *door.ErrorDetail `json:"error"`
}

func (f *fixture) search(body any) (int, searchOut) {
	f.t.Helper()
	var out searchOut
	resp := f.do(http.MethodPost, "/search", body, nil, &out)
	return resp.StatusCode, out
}

func ids(rs []searchResult) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Identifier
	}
	return out
}

// fixtureRecords are the records of the test catalogs (acme, the weather
// mirror, the filler) as normalize makes them (searchtest.FixtureRecords).
func fixtureRecords(t testing.TB) []normalize.Record {
	t.Helper()
	return searchtest.FixtureRecords(t, "testdata")
}
