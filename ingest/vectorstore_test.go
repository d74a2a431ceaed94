package ingest

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

// TestVectorStore: an index with an embedder gets the HNSW vector store on
// a fresh index and on one that has the default store with documents
// (their vectors move and a vector search still finds them), the start
// after that changes nothing, and an index without an embedder keeps the
// default store.
func TestVectorStore(t *testing.T) {
	emb := &hashEmbedder{dims: 8}
	e := newEnv(t, Config{Embedder: emb})
	rc, ok := e.client.(*meili.Client)
	if !ok {
		t.Fatalf("meilitest's client is a %T, not a *meili.Client", e.client)
	}
	e.sync(catalog(t, acme, acmeManifest()))
	if got := vectorStoreOf(t, rc, e.index); got != vectorStore {
		t.Fatalf("fresh index: vector store %q, want %q", got, vectorStore)
	}
	nearest(t, e, emb, "weather forecast")

	// An index from before: the default store, documents and vectors in it.
	var info meilisearch.TaskInfo
	if err := rc.Do(t.Context(), http.MethodPatch, "/indexes/"+e.index+"/settings", map[string]any{"vectorStore": "stable"}, &info); err != nil {
		t.Fatal(err)
	}
	waitTask(t, e.client, info.TaskUID)
	if got := vectorStoreOf(t, rc, e.index); got != "stable" {
		t.Fatalf("set back: vector store %q", got)
	}
	if err := e.ix.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.open(Config{Embedder: emb})
	waitAll(t, e)
	if got := vectorStoreOf(t, rc, e.index); got != vectorStore {
		t.Fatalf("existing index: vector store %q, want %q", got, vectorStore)
	}
	nearest(t, e, emb, "weather forecast")

	e.reopenWithoutTasks(Config{Embedder: emb})

	// An index whose embedder holds no vectors keeps the default store
	// (Meilisearch 1.21 fails moving it, then fails every write of
	// vectors), and its documents get their vectors.
	empty := newEnv(t, Config{})
	empty.sync(catalog(t, acme, acmeManifest()))
	if err := empty.ix.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	nullVecs := []map[string]any{}
	for _, id := range []string{"urn:air:acme.test:agent:weather", "urn:air:acme.test:agent:travel", "urn:air:acme.test:agent:billing"} {
		nullVecs = append(nullVecs, map[string]any{normalize.FieldID: normalize.DocID(id), "_vectors": map[string]any{normalize.EmbedderName: nil}})
	}
	task, err := empty.client.Index(empty.index).UpdateDocumentsWithContext(t.Context(), nullVecs, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, empty.client, task.TaskUID)
	task, err = empty.client.Index(empty.index).UpdateEmbeddersWithContext(t.Context(), map[string]meilisearch.Embedder{
		normalize.EmbedderName: {Source: meilisearch.UserProvidedEmbedderSource, Dimensions: 8}})
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, empty.client, task.TaskUID)
	empty.open(Config{Embedder: emb})
	waitAll(t, empty)
	if got := vectorStoreOf(t, rc, empty.index); got != "" {
		t.Fatalf("embedder without vectors: vector store %q, want the default kept", got)
	}
	empty.sync(catalog(t, acme, manifest(
		entry("urn:air:acme.test:agent:weather", "Weather Agent", "forecasts and alerts", "2025-06-01T00:00:00Z"),
		entry("urn:air:acme.test:agent:radar", "Radar Agent", "rain radar maps", "2025-06-01T00:00:00Z"))))
	if st, err := empty.client.Index(empty.index).GetStatsWithContext(t.Context(), nil); err != nil || st.NumberOfEmbeddedDocuments == 0 {
		t.Fatalf("after a write with vectors: stats %+v (%v), want embedded documents", st, err)
	}

	plain := newEnv(t, Config{})
	plain.sync(catalog(t, acme, acmeManifest()))
	if got := vectorStoreOf(t, rc, plain.index); got != "" {
		t.Fatalf("index without an embedder: vector store %q, want the default (null)", got)
	}
}

// vectorStoreOf is index's vectorStore setting ("" for null: the default).
func vectorStoreOf(t *testing.T, rc *meili.Client, index string) string {
	t.Helper()
	var cur *string
	if err := rc.Do(t.Context(), http.MethodGet, "/indexes/"+index+"/settings/vector-store", nil, &cur); err != nil {
		t.Fatal(err)
	}
	if cur == nil {
		return ""
	}
	return *cur
}

// nearest requires a vector-only search for text's vector to return
// documents, the first with a positive score.
func nearest(t *testing.T, e *env, emb *hashEmbedder, text string) {
	t.Helper()
	v, _ := emb.Embed(t.Context(), []string{text})
	res, err := e.client.Index(e.index).SearchWithContext(t.Context(), "", &meilisearch.SearchRequest{
		Vector: v[0], Hybrid: &meilisearch.SearchRequestHybrid{Embedder: normalize.EmbedderName, SemanticRatio: 1},
		ShowRankingScore: true, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 {
		t.Fatalf("vector search for %q: no hits", text)
	}
	var score float64
	if err := json.Unmarshal(res.Hits[0]["_rankingScore"], &score); err != nil || score <= 0 {
		t.Fatalf("vector search for %q: first hit's score %v (%v)", text, score, err)
	}
}

func waitTask(t *testing.T, c meilisearch.ServiceManager, uid int64) {
	t.Helper()
	if err := meilitest.Wait(c, uid); err != nil {
		t.Fatal(err)
	}
}

// waitAll waits for the last task of e's index.
func waitAll(t *testing.T, e *env) {
	t.Helper()
	res, err := e.client.GetTasksWithContext(t.Context(), &meilisearch.TasksQuery{IndexUIDS: []string{e.index}, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) > 0 {
		waitTask(t, e.client, res.Results[0].UID)
	}
}

// TestVectorStoreRefused: an API key that may not read or change
// Meilisearch's experimental features still sets up an index with an
// embedder and writes its vectors; the index keeps the default store.
func TestVectorStoreRefused(t *testing.T) {
	ms := meilitest.Connect(t)
	key, err := ms.Client.CreateKeyWithContext(t.Context(), &meilisearch.Key{
		Name:    "no-experimental",
		Actions: []string{"search", "documents.*", "indexes.*", "settings.*", "tasks.*", "stats.*"},
		Indexes: []string{"*"}, ExpiresAt: time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = ms.Client.DeleteKey(key.Key) })
	limited := meili.New(ms.URL, key.Key)
	if err := limited.Do(t.Context(), http.MethodGet, "/experimental-features", nil, nil); err == nil {
		t.Fatal("the limited key reads the experimental features; the test needs one that may not")
	}
	emb := &hashEmbedder{dims: 8}
	e := &env{t: t, client: limited, index: meilitest.NewIndexName("ingest"),
		clock: clockwork.NewFakeClockAt(time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)), results: &results{}}
	t.Cleanup(func() { dropIndexes(ms.Client, e.index) })
	e.open(Config{Embedder: emb})
	e.sync(catalog(t, acme, acmeManifest()))
	admin, _ := ms.Client.(*meili.Client)
	if got := vectorStoreOf(t, admin, e.index); got != "" {
		t.Fatalf("vector store %q, want the default kept", got)
	}
	nearest(t, e, emb, "weather forecast")
}
