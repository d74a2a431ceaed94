package ingest

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/meilisearch/meilisearch-go"
	"go.uber.org/goleak"

	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// results collects OnResult calls.
type results struct {
	mu  sync.Mutex
	all []ApplyResult
}

func (r *results) add(_ string, a ApplyResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, a)
}

func (r *results) last(catalog string) ApplyResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.all) - 1; i >= 0; i-- {
		if r.all[i].Catalog == catalog {
			return r.all[i]
		}
	}
	return ApplyResult{}
}

// env is one test's indexer on a fresh index of the real Meilisearch.
type env struct {
	t       *testing.T
	client  meilisearch.ServiceManager
	index   string
	ix      *Indexer
	clock   *clockwork.FakeClock // the age rule's
	results *results
}

// newEnv starts an Indexer on a fresh index; cfg's Index, Now and OnResult
// are filled in.
func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	s := meilitest.Connect(t)
	e := &env{t: t, client: s.Client, index: meilitest.NewIndexName("ingest"),
		clock: clockwork.NewFakeClockAt(time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)), results: &results{}}
	t.Cleanup(func() { dropIndexes(s.Client, e.index) })
	e.open(cfg)
	return e
}

// open starts (another) Indexer on e's index.
func (e *env) open(cfg Config) *Indexer {
	e.t.Helper()
	cfg.Index = e.index
	cfg.Now = e.clock.Now
	cfg.OnResult = e.results.add
	ix, err := New(e.t.Context(), e.client, cfg)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	e.ix = ix
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := ix.Close(ctx); err != nil {
			e.t.Errorf("Close: %v", err)
		}
	})
	return ix
}

func dropIndexes(c meilisearch.ServiceManager, index string) {
	for _, uid := range []string{index, index + "_sources", normalize.ToolsIndex(index)} {
		if task, err := c.DeleteIndex(uid); err == nil {
			_ = meilitest.Wait(c, task.TaskUID)
		}
	}
}

// sync puts results and waits until they are searchable.
func (e *env) sync(rs ...normalize.CatalogResult) {
	e.t.Helper()
	for _, r := range rs {
		if err := e.ix.Put(e.t.Context(), r); err != nil {
			e.t.Fatalf("Put %s: %v", r.Catalog, err)
		}
	}
	if err := e.ix.Flush(e.t.Context()); err != nil {
		e.t.Fatalf("Flush: %v", err)
	}
}

// doc returns the stored document for identifier, or nil.
func (e *env) doc(identifier string) *normalize.Document {
	e.t.Helper()
	var d normalize.Document
	err := e.client.Index(e.index).GetDocumentWithContext(e.t.Context(), normalize.DocID(identifier), nil, &d)
	if err != nil {
		if apiCode(err) == "document_not_found" {
			return nil
		}
		e.t.Fatalf("get document %s: %v", identifier, err)
	}
	return &d
}

// count returns how many documents match filter ("" for all).
func (e *env) count(filter string) int64 {
	e.t.Helper()
	req := &meilisearch.SearchRequest{Limit: 0}
	if filter != "" {
		req.Filter = filter
	}
	res, err := e.client.Index(e.index).SearchWithContext(e.t.Context(), "", req)
	if err != nil {
		e.t.Fatalf("search filter %q: %v", filter, err)
	}
	return res.EstimatedTotalHits
}

// tasks returns how many tasks exist for the index and its sources index.
func (e *env) tasks() int64 {
	e.t.Helper()
	res, err := e.client.GetTasksWithContext(e.t.Context(), &meilisearch.TasksQuery{
		IndexUIDS: []string{e.index, e.index + "_sources", normalize.ToolsIndex(e.index)}, Limit: 1})
	if err != nil {
		e.t.Fatalf("get tasks: %v", err)
	}
	return res.Total
}

// catalog builds an ok CatalogResult from a manifest body fetched from
// origin, the way the crawler would: through normalize.Catalog alone, so
// publisher and verification are normalize's.
func catalog(t *testing.T, origin, body string) normalize.CatalogResult {
	t.Helper()
	now := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	r := normalize.Catalog([]byte(body), normalize.Options{Origin: origin, Via: normalize.ViaWellKnown, Now: now})
	if len(r.Records) == 0 && strings.Contains(body, "identifier") {
		t.Fatalf("catalog %s: no records from %s (problems %v)", origin, body, r.Problems)
	}
	// FetchedAt stays zero: ingest then uses its clock, which tests move.
	return normalize.CatalogResult{Catalog: origin, Via: normalize.ViaWellKnown, Status: normalize.StatusOK,
		Records: r.Records, Problems: r.Problems}
}

// entry returns one manifest entry as JSON.
func entry(id, name, desc, updated string) string {
	return fmt.Sprintf(`{"identifier":%q,"displayName":%q,"type":"application/a2a-agent-card+json","url":"https://x.test/%s","description":%q,"updatedAt":%q}`,
		id, name, name, desc, updated)
}

func manifest(entries ...string) string {
	return `{"specVersion":"1.0","entries":[` + strings.Join(entries, ",") + `]}`
}

func failed(origin string) normalize.CatalogResult {
	return normalize.CatalogResult{Catalog: origin, Via: normalize.ViaWellKnown, Status: normalize.StatusFailed,
		Reason: "http_status", Error: "503 Service Unavailable"}
}

func notModified(origin string) normalize.CatalogResult {
	return normalize.CatalogResult{Catalog: origin, Via: normalize.ViaWellKnown, Status: normalize.StatusNotModified}
}

// hashEmbedder is a deterministic bag-of-words embedder for tests: each
// word adds 1 to the dimension its hash selects, then the vector is
// normalized. It fakes our Embedder interface, not Meilisearch.
type hashEmbedder struct {
	dims  int
	mu    sync.Mutex
	calls int
	texts int
}

func (h *hashEmbedder) Dimensions() int { return h.dims }

func (h *hashEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	h.mu.Lock()
	h.calls++
	h.texts += len(texts)
	h.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, h.dims)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			f := fnv.New32a()
			f.Write([]byte(w))
			v[int(f.Sum32())%h.dims]++
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		if n > 0 {
			for j := range v {
				v[j] /= float32(math.Sqrt(n))
			}
		} else {
			v[0] = 1
		}
		out[i] = v
	}
	return out, nil
}

// reopenWithoutTasks closes e's ingest and opens it again with cfg,
// requiring the start to enqueue no Meilisearch task (nothing to change).
func (e *env) reopenWithoutTasks(cfg Config) {
	e.t.Helper()
	if err := e.ix.Close(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
	before := e.tasks()
	e.open(cfg)
	if after := e.tasks(); after != before {
		e.t.Fatalf("the start after the change enqueued %d tasks, want 0", after-before)
	}
}
