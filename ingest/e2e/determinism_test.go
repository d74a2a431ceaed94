package e2e_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi"
)

// realworldDir holds third-party manifests (see its README.md for sources
// and licences), each served from a host of its own.
const realworldDir = "testdata/realworld"

// TestSameWebSameIndex crawls one web twice into two fresh indexes: the
// seeds in opposite orders, different crawl concurrency, and in each run
// the catalogs that win the conflicts in the other answer late, so the
// claims on one identifier reach ingest in opposite orders (a takeover in
// one run, a losing claim in the other). The web is the real-world
// manifests, which claim some identifiers twice (urn:ai: and urn:air:
// spellings of acme.com's, and one snowdata.ai catalog), served each from a
// host of its own, plus a generated web with collections. The two indexes
// must hold the same documents, field by field, apart from fetch and index
// times. Then every identifier the crawl saw published is fetched through
// GET /agents/{identifier} in each of its spellings.
func TestSameWebSameIndex(t *testing.T) {
	s := meilitest.Connect(t)
	root, hosts := realworldWeb(t)
	gen := fixtures.Generate(4, 6, 22)
	w := crawlertest.Web(t, fixtures.Options{Root: root, Generated: gen, NoWorld: true})
	// Each run delays the catalogs that win the conflicts in the other, so
	// the claims on one identifier arrive in opposite orders.
	winners := []string{hosts["basic__ai-catalog.json"], hosts["mcp-snowdata-ai-catalog.json"]}
	losers := []string{hosts["legacy-5c191fb__ai-catalog.json"], hosts["snowsure-ai-catalog.json"]}
	late := func(hosts []string) {
		for _, h := range hosts {
			w.Script(h, fixtures.PathWellKnown, fixtures.Behavior{Delay: 300 * time.Millisecond})
		}
	}
	// Run A: seeds in order, 4 fetches at a time, losers late.
	late(losers)
	a := crawlInto(t, w, runOptions{concurrency: 4})
	// Run B: seeds reversed, 16 fetches at a time, winners late.
	for _, h := range losers {
		w.Script(h, fixtures.PathWellKnown, fixtures.Behavior{})
	}
	late(winners)
	b := crawlInto(t, w, runOptions{concurrency: 16, reverse: true})
	for i := range winners {
		if a.put(winners[i]) < a.put(losers[i]) == (b.put(winners[i]) < b.put(losers[i])) {
			t.Fatalf("test setup: both runs handed %s and %s to ingest in the same order", winners[i], losers[i])
		}
	}

	docsA, docsB := readDocs(t, s.Client, a.index), readDocs(t, s.Client, b.index)
	if len(docsA) < 100 {
		t.Fatalf("run A indexed %d documents, want the whole web", len(docsA))
	}
	for _, id := range slices.Sorted(maps.Keys(docsA)) {
		db, ok := docsB[id]
		if !ok {
			t.Errorf("%s (%s) only in run A's index", id, docsA[id]["identifier"])
			continue
		}
		if !reflect.DeepEqual(docsA[id], db) {
			ja, _ := json.Marshal(docsA[id])
			jb, _ := json.Marshal(db)
			t.Errorf("document %s differs:\nA: %s\nB: %s", id, ja, jb)
		}
	}
	for id, d := range docsB {
		if _, ok := docsA[id]; !ok {
			t.Errorf("%s (%s) only in run B's index", id, d["identifier"])
		}
	}

	// The conflicts the web holds were resolved, and the losers are on
	// the records.
	for i, id := range []string{"urn:air:acme.com:agent:assistant", "urn:air:snowdata.ai:catalog:corporate"} {
		c := struct{ winner, loser string }{winners[i], losers[i]}
		d := docsA[normalize.DocID(id)]
		src, _ := d["sourceCatalog"].(string)
		lost, _ := json.Marshal(d["lostClaims"])
		if !strings.Contains(src, "://"+c.winner+"/") || !strings.Contains(string(lost), "://"+c.loser+"/") {
			t.Errorf("%s: held by %s with lostClaims %s, want %s's record with %s's claim lost", id, src, lost, c.winner, c.loser)
		}
	}

	t.Run("every spelling finds its record", func(t *testing.T) {
		srv, err := searchapi.New(searchapi.Config{Index: a.index, Meili: s.Client}, nil)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		published := a.published()
		for _, id := range rawIdentifiers(t) {
			if !published[id] {
				t.Errorf("%s is published in %s but the crawl never saw it", id, realworldDir)
			}
		}
		for _, id := range gen.Identifiers() {
			if !published[id] {
				t.Errorf("%s is published by the generated web but the crawl never saw it", id)
			}
		}
		n := 0
		for _, id := range slices.Sorted(maps.Keys(published)) {
			stored, _ := docsA[normalize.DocID(id)]["identifier"].(string)
			for _, sp := range spellings(id) {
				n++
				got, status := getAgent(t, hs.URL, sp)
				if status != http.StatusOK || got != stored {
					t.Errorf("GET /agents/%s (published as %s): %d, identifier %q, want 200 and %q", sp, id, status, got, stored)
				}
			}
		}
		t.Logf("%d published identifiers, %d lookups", len(published), n)
	})

	t.Run("a withdrawn record falls to the claim that lost", func(t *testing.T) {
		// basic drops acme.com's assistant; legacy, whose urn:ai: claim lost
		// to it, is unchanged and would answer 304 without its records.
		const id = "urn:ai:acme.com:agent:assistant"
		body, err := os.ReadFile(filepath.Join(realworldDir, "basic__ai-catalog.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		entries, _ := m["entries"].([]any)
		m["entries"] = slices.DeleteFunc(entries, func(e any) bool {
			return normalize.SameIdentifier(e.(map[string]any)["identifier"].(string), id)
		})
		body, _ = json.Marshal(m)
		w.Script(winners[0], fixtures.PathWellKnown, fixtures.Behavior{Body: body})
		a.crawl(t) // the record is deleted; ingest stops holding legacy
		a.crawl(t) // so legacy is fetched in full
		d := readDocs(t, s.Client, a.index)[normalize.DocID(id)]
		if d == nil {
			t.Fatalf("%s is gone after its holder dropped it; the claim that lost is not back", id)
		}
		if src, _ := d["sourceCatalog"].(string); d["identifier"] != id || !strings.Contains(src, "://"+losers[0]+"/") {
			t.Fatalf("%s after its holder dropped it: identifier %v from %v, want legacy's", id, d["identifier"], src)
		}
	})
}

type runOptions struct {
	concurrency int
	reverse     bool
}

type run struct {
	*stack
	seeds []string
	mu    sync.Mutex
	ids   map[string]bool // every identifier an ok fetch listed
	order []string        // catalogs in the order they reached ingest
}

// crawlInto crawls all the seeds of w into a fresh index.
func crawlInto(t *testing.T, w *fixtures.Web, o runOptions) *run {
	t.Helper()
	r := &run{ids: map[string]bool{}, seeds: w.Seeds()}
	r.stack = newStack(t, "same", stackOptions{
		web: w,
		crawler: func(c *crawler.Config) {
			quickRetries(c)
			c.Concurrency = o.concurrency
		},
		sink: func(ix *ingest.Indexer) crawler.Sink { return teeSink{r, ix} },
	})
	if o.reverse {
		slices.Reverse(r.seeds)
	}
	start := time.Now()
	r.crawl(t)
	t.Logf("%s: crawled and indexed in %v", r.index, time.Since(start))
	return r
}

// crawl crawls r's seeds again and waits until ingest wrote the results.
func (r *run) crawl(t *testing.T) {
	t.Helper()
	r.stack.crawl(t, r.seeds)
}

// teeSink notes the order of the results and the identifiers of every ok
// result on their way to ingest.
type teeSink struct {
	r  *run
	ix *ingest.Indexer
}

// Holds passes the crawler's question on to ingest (see crawler.Holder).
func (s teeSink) Holds(catalog string) bool { return s.ix.Holds(catalog) }

func (s teeSink) Put(ctx context.Context, res normalize.CatalogResult) error {
	s.r.mu.Lock()
	s.r.order = append(s.r.order, res.Catalog)
	if res.Status == normalize.StatusOK {
		for _, rec := range res.Records {
			s.r.ids[rec.Identifier] = true
		}
	}
	s.r.mu.Unlock()
	return s.ix.Put(ctx, res)
}

func (r *run) published() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.ids)
}

// put returns the position among the results handed to ingest of the
// well-known catalog of host.
func (r *run) put(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Index(r.order, "https://"+host+"/.well-known/ai-catalog.json")
}

// realworldWeb lays the real-world manifests out as a fixture root, each
// file at the well-known path of a host named after it, and returns the
// root and the host of each file.
func realworldWeb(t *testing.T) (string, map[string]string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(realworldDir, "*.json"))
	if err != nil || len(files) < 10 {
		t.Fatalf("real-world manifests in %s: %d (%v)", realworldDir, len(files), err)
	}
	root := t.TempDir()
	hosts := map[string]string{}
	name := strings.NewReplacer("__", "-", "_", "-", ".", "-")
	for _, f := range files {
		base := filepath.Base(f)
		host := strings.ToLower(name.Replace(strings.TrimSuffix(base, ".json"))) + ".realworld.test"
		hosts[base] = host
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, host, ".well-known", "ai-catalog.json")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, hosts
}

// rawIdentifiers reads the valid identifiers of the real-world manifests'
// top-level entries straight from the files.
func rawIdentifiers(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(realworldDir, "*.json"))
	var ids []string
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Entries []struct {
				Identifier string `json:"identifier"`
			} `json:"entries"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, e := range m.Entries {
			if _, _, ok := normalize.ParseIdentifier(e.Identifier); ok {
				ids = append(ids, e.Identifier)
			}
		}
	}
	if len(ids) < 80 {
		t.Fatalf("%d identifiers in %s, want the whole set", len(ids), realworldDir)
	}
	return ids
}

// spellings returns id as published and the other spellings the index
// treats as the same identifier: the other NID, the publisher domain in
// upper case, and both with an upper-case URN prefix.
func spellings(id string) []string {
	ident, _, ok := normalize.ParseIdentifier(id)
	if !ok {
		return []string{id}
	}
	other := "air"
	if ident.NID == "air" {
		other = "ai"
	}
	name := strings.Join(ident.Segments, ":")
	return []string{
		id,
		"urn:" + other + ":" + ident.Publisher + ":" + name,
		"urn:" + ident.NID + ":" + strings.ToUpper(ident.Publisher) + ":" + name,
		"URN:" + strings.ToUpper(other) + ":" + strings.ToUpper(ident.Publisher) + ":" + name,
	}
}

// getAgent fetches one record and returns its identifier and the status.
func getAgent(t *testing.T, base, id string) (string, int) {
	t.Helper()
	resp, err := http.Get(base + "/agents/" + url.PathEscape(id))
	if err != nil {
		t.Fatalf("GET %s: %v", id, err)
	}
	defer resp.Body.Close()
	var rec struct {
		Identifier string `json:"identifier"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&rec)
	return rec.Identifier, resp.StatusCode
}

// timeFields are the document fields that record when, not what: they may
// differ between two crawls of one web.
var timeFields = []string{"indexedAt", "indexedAtTs"}

// readDocs reads every document of index, without its time fields, by id.
func readDocs(t *testing.T, c meilisearch.ServiceManager, index string) map[string]map[string]any {
	t.Helper()
	var res meilisearch.DocumentsResult
	if err := c.Index(index).GetDocumentsWithContext(t.Context(), &meilisearch.DocumentsQuery{Limit: 10000}, &res); err != nil {
		t.Fatalf("read %s: %v", index, err)
	}
	out := make(map[string]map[string]any, len(res.Results))
	for _, h := range res.Results {
		raw, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		var d map[string]any
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		for _, f := range timeFields {
			delete(d, f)
		}
		if src, ok := d["source"].(map[string]any); ok {
			delete(src, "fetchedAt")
		}
		// No lost claims (and so no alias keys) read alike whether the list
		// was never written, because the record was written whole with none,
		// or emptied by a patch (a partial update cannot remove a field).
		for _, f := range []string{"lostClaims", "aliasKeys"} {
			if l, ok := d[f].([]any); ok && len(l) == 0 {
				delete(d, f)
			}
		}
		if tr, ok := d["trust"].(map[string]any); ok {
			delete(tr, "checkedAt") // when the signatures were checked: a time, like fetchedAt
		}
		id, _ := d["id"].(string)
		out[id] = d
	}
	return out
}
