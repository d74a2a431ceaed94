package ingest

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/meilisearch/meilisearch-go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/ingest/replica"
	"github.com/agentfinder/agentfinder/ingest/writelog"
	"github.com/agentfinder/agentfinder/scheduler/natsnode/natstest"
)

// TestVectorStoreCluster: an index with an embedder written by a cluster's
// client (reads from the replicas, writes through the index write log)
// gets the HNSW vector store on every replica, as on a single server: on a
// fresh index, and moved on an index that has the default store with
// vectors; a replica that joins later gets it by replaying the log (the
// experimental feature included), and vector searches answer on each.
func TestVectorStoreCluster(t *testing.T) {
	c := newClusterRig(t, 3)
	c.startApplier(0)
	c.startApplier(1)
	client, e, emb := c.ingestEnv(c.reps[:2])
	e.sync(catalog(t, acme, acmeManifest()))
	c.caughtUp(0, 1)
	c.haveStore(e, emb, vectorStore, 0, 1)

	// An index from before: the default store, with vectors.
	var info meilisearch.TaskInfo
	if err := client.Do(t.Context(), http.MethodPatch, "/indexes/"+e.index+"/settings", map[string]any{"vectorStore": "stable"}, &info); err != nil {
		t.Fatal(err)
	}
	waitTask(t, client, info.TaskUID)
	c.caughtUp(0, 1)
	c.haveStore(e, emb, "stable", 0, 1)
	if err := e.ix.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.open(Config{Embedder: emb})
	waitAll(t, e)
	c.caughtUp(0, 1)
	c.haveStore(e, emb, vectorStore, 0, 1)

	// A replica that joins now replays the whole log.
	c.startApplier(2)
	c.caughtUp(2)
	c.haveStore(e, emb, vectorStore, 2)
}

// clusterRig is a write log on one embedded NATS node and Meilisearch
// replicas, each with its applier once started.
type clusterRig struct {
	t        *testing.T
	js       jetstream.JetStream
	progress jetstream.KeyValue
	reps     []replica.Replica
	ctx      context.Context
	wg       sync.WaitGroup
}

func newClusterRig(t *testing.T, n int) *clusterRig {
	t.Helper()
	js := natstest.JetStream(t, natstest.Node(t), "ingest-test")
	if _, err := writelog.EnsureStream(t.Context(), js, writelog.StreamConfig{}); err != nil {
		t.Fatal(err)
	}
	progress, err := replica.Progress(t.Context(), js, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &clusterRig{t: t, js: js, progress: progress, ctx: ctx}
	t.Cleanup(func() {
		cancel()
		c.wg.Wait()
	})
	for i := range n {
		m := meilitest.Replica(t)
		c.reps = append(c.reps, replica.Replica{Name: "r" + strconv.Itoa(i), URL: m.URL, APIKey: m.APIKey})
	}
	return c
}

// run runs f until the test ends.
func (c *clusterRig) run(f func(ctx context.Context)) { c.wg.Go(func() { f(c.ctx) }) }

func (c *clusterRig) startApplier(i int) {
	a := &replica.Applier{JS: c.js, Progress: c.progress, Replica: c.reps[i], HTTP: meili.NewHTTPClient(0)}
	c.run(func(ctx context.Context) {
		if err := a.Run(ctx); err != nil {
			c.t.Errorf("applier %d: %v", i, err)
		}
	})
}

// caughtUp waits until replicas which applied the whole log and hold no
// unfinished task.
func (c *clusterRig) caughtUp(which ...int) {
	c.t.Helper()
	st, err := c.js.Stream(c.t.Context(), writelog.Stream)
	if err != nil {
		c.t.Fatal(err)
	}
	info, err := st.Info(c.t.Context())
	if err != nil {
		c.t.Fatal(err)
	}
	end := info.State.LastSeq
	for _, i := range which {
		rep := c.reps[i]
		direct := meili.New(rep.URL, rep.APIKey)
		deadline := time.Now().Add(60 * time.Second)
		for !c.settled(rep, direct, end) {
			if time.Now().After(deadline) {
				c.t.Fatalf("replica %s did not apply the log up to %d within 60s", rep.Name, end)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// settled reports whether rep's applier reported end and rep (read with
// direct) has no task enqueued or processing.
func (c *clusterRig) settled(rep replica.Replica, direct *meili.Client, end uint64) bool {
	e, err := c.progress.Get(c.t.Context(), rep.Name)
	if err != nil {
		return false
	}
	if seq, err := strconv.ParseUint(string(e.Value()), 10, 64); err != nil || seq < end {
		return false
	}
	res, err := direct.GetTasksWithContext(c.t.Context(), &meilisearch.TasksQuery{
		Statuses: []meilisearch.TaskStatus{meilisearch.TaskStatusEnqueued, meilisearch.TaskStatusProcessing}, Limit: 1})
	return err == nil && res.Total == 0
}

// haveStore requires e's index on replicas which to use store, and a
// vector search on each to find documents.
func (c *clusterRig) haveStore(e *env, emb *hashEmbedder, store string, which ...int) {
	c.t.Helper()
	for _, i := range which {
		direct := meili.New(c.reps[i].URL, c.reps[i].APIKey)
		if got := vectorStoreOf(c.t, direct, e.index); got != store {
			c.t.Errorf("replica %s: vector store %q, want %q", c.reps[i].Name, got, store)
		}
		nearest(c.t, &env{t: c.t, client: direct, index: e.index}, emb, "weather forecast")
	}
}

// TestVectorStoreClusterRefused: replicas whose API key may read the
// experimental features but not change them (the change goes through the
// write log, so the writer cannot see the refusal) still get an index with
// an embedder and its vectors; the index keeps the default store, as on a
// single server with such a key.
func TestVectorStoreClusterRefused(t *testing.T) {
	c := newClusterRig(t, 1)
	admin := meili.New(c.reps[0].URL, c.reps[0].APIKey)
	key, err := admin.CreateKeyWithContext(t.Context(), &meilisearch.Key{
		Name:    "no-experimental-update",
		Actions: []string{"search", "documents.*", "indexes.*", "settings.*", "tasks.*", "stats.*", "experimental.get"},
		Indexes: []string{"*"}, ExpiresAt: time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	limited := meili.New(c.reps[0].URL, key.Key)
	if err := limited.Do(t.Context(), http.MethodPatch, "/experimental-features", map[string]bool{featureVectorStore: true}, nil); err == nil {
		t.Fatal("the limited key changes the experimental features; the test needs one that may not")
	}
	c.reps[0].APIKey = key.Key
	c.startApplier(0)
	_, e, emb := c.ingestEnv(c.reps)
	e.sync(catalog(t, acme, acmeManifest()))
	c.caughtUp(0)
	c.haveStore(e, emb, "", 0)
}

// ingestEnv opens an ingest with an embedder on a fresh index through the
// cluster's client over reps (reads from them, writes through the log),
// as serve's cluster builds it; it returns that client too.
func (c *clusterRig) ingestEnv(reps []replica.Replica) (*meili.Client, *env, *hashEmbedder) {
	t := c.t
	set := replica.NewSet(replica.SetConfig{Replicas: reps, JS: c.js, Progress: c.progress,
		HTTP: meili.NewHTTPClient(0), Interval: 100 * time.Millisecond, MaxStall: time.Second})
	c.run(set.Watch)
	w, _, err := writelog.Begin(t.Context(), writelog.Config{JS: c.js, Token: 1, Holder: "test"})
	if err != nil {
		t.Fatal(err)
	}
	client := meili.NewWithHTTP("http://replicas", "", &http.Client{Transport: set.Transport(w), Timeout: 30 * time.Second})
	emb := &hashEmbedder{dims: 8}
	e := &env{t: t, client: client, index: meilitest.NewIndexName("ingest"),
		clock: clockwork.NewFakeClockAt(time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)), results: &results{}}
	e.open(Config{Embedder: emb})
	return client, e, emb
}
