package searchapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
	"github.com/agentfinder/agentfinder/searchapi/searchtest"
)

// testNow is the clock of every test server: after expired-storm expired.
var testNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// catalogRecords normalizes a manifest as if fetched from origin, through
// normalize.Catalog alone: every field of a record (publisher and its
// verification, compliance, protocols, host) means what normalize's rules
// make of it, as in production.
func catalogRecords(t testing.TB, body []byte, origin string) []normalize.Record {
	t.Helper()
	res := normalize.Catalog(body, normalize.Options{Origin: origin, Via: normalize.ViaWellKnown, Now: testNow.Add(-time.Hour)})
	if len(res.Records) == 0 {
		t.Fatalf("normalize.Catalog(%s): no records; problems %+v", origin, res.Problems)
	}
	return res.Records
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
const fillerCount = 37

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
	stale := func(d *normalize.Document) {
		if strings.HasSuffix(d.Identifier, ":old-radar") {
			d.Stale = true // what ingest does when a catalog keeps failing
		}
	}
	// No cut-off: these tests are about filters, paging and shapes on a
	// small catalog; relevance_test.go tests the cut-off.
	cfg := Config{PublicURL: "https://finder.test.example", RegistryName: "Test Finder", MinScore: new(int),
		PageTokenKey: []byte("test-key"), Now: func() time.Time { return testNow }}
	return serveRecords(t, "searchapi", recs, emb, stale, cfg, mut)
}

// serveRecords indexes recs (with vectors, as ingest lays them out, when emb
// is set; each document passed through mark when it is set) into a fresh
// index named after prefix and serves it with cfg (its Index, Meili and
// Embedder filled in), then mut.
func serveRecords(t testing.TB, prefix string, recs []normalize.Record, emb search.Embedder, mark func(*normalize.Document), cfg Config, mut func(*Config)) *fixture {
	t.Helper()
	ms, name := meilitest.Index(t, prefix)
	idx := ms.Client.Index(name)
	st := searchtest.Settings()
	if emb != nil {
		st.Embedders = map[string]meilisearch.Embedder{normalize.EmbedderName: {Source: meilisearch.UserProvidedEmbedderSource, Dimensions: emb.Dimensions()}}
	}
	task, err := idx.UpdateSettings(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, meili: ms, index: name, byName: map[string]normalize.Document{}}
	docs := make([]normalize.Document, 0, len(recs))
	for _, r := range recs {
		d := normalize.NewDocument(r, testNow.Add(-30*time.Minute))
		if mark != nil {
			mark(&d)
		}
		if emb != nil {
			d.Vectors = embedDoc(t, emb, r)
		}
		docs = append(docs, d)
		f.byName[r.Identifier] = d
	}
	task, err = idx.AddDocuments(docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	cfg.Index, cfg.Meili, cfg.Embedder = name, ms.Client, emb
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

// fillerCatalog is a manifest of n similar general assistants.
func fillerCatalog(n int) []byte {
	var entries []map[string]any
	for i := range n {
		entries = append(entries, map[string]any{
			"identifier":  fmt.Sprintf("urn:ai:filler.example:agent:assistant-%02d", i),
			"displayName": fmt.Sprintf("General Assistant %02d", i),
			"type":        "application/a2a-agent-card+json",
			"url":         fmt.Sprintf("https://filler.example/agents/%02d.json", i),
			"description": fmt.Sprintf("A general purpose assistant that answers questions, variant %d.", i),
			"tags":        []string{"filler", "assistant"},
			"updatedAt":   testNow.Add(-time.Duration(i) * time.Hour).Format(time.RFC3339),
		})
	}
	b, _ := json.Marshal(map[string]any{"specVersion": "1.0", "host": map[string]string{"displayName": "Filler"}, "entries": entries})
	return b
}

// do sends a request and decodes the JSON answer into out (if non-nil).
func (f *fixture) do(method, path string, body any, hdr map[string]string, out any) *http.Response {
	f.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			f.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, f.http.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	conformOpenAPI(f.t, method, path, resp.StatusCode, raw)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			f.t.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return resp
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
// mirror, the filler) as normalize makes them.
func fixtureRecords(t testing.TB) []normalize.Record {
	t.Helper()
	var recs []normalize.Record
	for _, f := range []struct{ file, origin string }{
		{"acme.json", "https://acme.com/.well-known/ai-catalog.json"},
		{"weather.json", "https://mirror.example.net/weather/ai-catalog.json"},
	} {
		body, err := os.ReadFile(filepath.Join("testdata", f.file))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, catalogRecords(t, body, f.origin)...)
	}
	recs = append(recs, catalogRecords(t, fillerCatalog(fillerCount), "https://filler.example/.well-known/ai-catalog.json")...)
	for i, r := range recs {
		if strings.HasSuffix(r.Identifier, ":expired-storm") && r.ExpiresAt == "" {
			recs[i].ExpiresAt = "2026-01-01T00:00:00Z" // as an xu artifact's expires_at would set it
		}
	}
	return recs
}
