package replica_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/ingest/replica"
	"github.com/agentfinder/agentfinder/ingest/writelog"
	"github.com/agentfinder/agentfinder/scheduler/natsnode/natstest"
)

// rig is a write log on one embedded NATS node, n Meilisearch replicas and
// an applier each.
type rig struct {
	t        testing.TB
	js       jetstream.JetStream
	progress jetstream.KeyValue
	set      *replica.Set
	managed  []*meili.Managed
	reps     []replica.Replica
	stops    []context.CancelFunc
	wg       sync.WaitGroup
}

func newRig(t testing.TB, n int) *rig {
	t.Helper()
	js := natstest.JetStream(t, natstest.Node(t), "replica-test")
	if _, err := writelog.EnsureStream(t.Context(), js, writelog.StreamConfig{}); err != nil {
		t.Fatal(err)
	}
	progress, err := replica.Progress(t.Context(), js, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, js: js, progress: progress}
	for i := range n {
		m := meilitest.Replica(t)
		r.managed = append(r.managed, m)
		r.reps = append(r.reps, replica.Replica{Name: "r" + strconv.Itoa(i), URL: m.URL, APIKey: m.APIKey})
	}
	r.set = replica.NewSet(replica.SetConfig{Replicas: r.reps, JS: js, Progress: progress, HTTP: meili.NewHTTPClient(0), Interval: 100 * time.Millisecond, MaxStall: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	r.wg.Go(func() { r.set.Watch(ctx) })
	r.stops = make([]context.CancelFunc, n)
	for i := range n {
		r.startApplier(i)
	}
	t.Cleanup(func() {
		cancel()
		for _, s := range r.stops {
			s()
		}
		r.wg.Wait()
	})
	return r
}

func (r *rig) startApplier(i int) {
	ctx, cancel := context.WithCancel(context.Background())
	r.stops[i] = cancel
	a := &replica.Applier{JS: r.js, Progress: r.progress, Replica: r.reps[i], HTTP: meili.NewHTTPClient(0)}
	r.wg.Go(func() {
		if err := a.Run(ctx); err != nil {
			r.t.Errorf("applier %d: %v", i, err)
		}
	})
}

// writer begins a term with token and returns a client writing through it.
func (r *rig) writer(token uint64, maxMessage int) (meilisearch.ServiceManager, *writelog.Writer) {
	r.t.Helper()
	w, _, err := writelog.Begin(r.t.Context(), writelog.Config{JS: r.js, Token: token, Holder: "h" + strconv.FormatUint(token, 10), MaxMessage: maxMessage})
	if err != nil {
		r.t.Fatal(err)
	}
	return r.client(w), w
}

func (r *rig) client(w *writelog.Writer) meilisearch.ServiceManager {
	return meilisearch.New("http://replicas", meilisearch.WithCustomClient(&http.Client{Transport: r.set.Transport(w), Timeout: 30 * time.Second}))
}

func wait(t testing.TB, c meilisearch.ServiceManager, info *meilisearch.TaskInfo, err error) *meilisearch.Task {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	task, err := c.WaitForTaskWithContext(ctx, info.TaskUID, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func setup(t testing.TB, c meilisearch.ServiceManager, index string) {
	t.Helper()
	info, err := c.CreateIndex(&meilisearch.IndexConfig{Uid: index, PrimaryKey: "id"})
	if task := wait(t, c, info, err); task.Status != meilisearch.TaskStatusSucceeded {
		t.Fatalf("create index: %+v", task.Error)
	}
	emb := map[string]meilisearch.Embedder{"default": {Source: "userProvided", Dimensions: 3}}
	info, err = c.Index(index).UpdateSettings(&meilisearch.Settings{Embedders: emb, FilterableAttributes: []string{"batch"}})
	if task := wait(t, c, info, err); task.Status != meilisearch.TaskStatusSucceeded {
		t.Fatalf("settings: %+v", task.Error)
	}
}

func docs(batch, n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		f := float64(batch*n + i)
		out[i] = map[string]any{"id": fmt.Sprintf("d%d-%d", batch, i), "batch": batch, "text": fmt.Sprintf("agent number %d of batch %d", i, batch),
			"_vectors": map[string]any{"default": []float64{f, f / 2, 1}}}
	}
	return out
}

func add(t testing.TB, c meilisearch.ServiceManager, index string, batch, n int) *meilisearch.Task {
	t.Helper()
	info, err := c.Index(index).AddDocuments(docs(batch, n), nil)
	return wait(t, c, info, err)
}

// contents reads every document of index on rep, vectors included.
func contents(t testing.TB, rep replica.Replica, index string) map[string]any {
	t.Helper()
	c := meili.New(rep.URL, rep.APIKey)
	var res meilisearch.DocumentsResult
	if err := c.Index(index).GetDocuments(&meilisearch.DocumentsQuery{Limit: 10000, RetrieveVectors: true}, &res); err != nil {
		t.Fatalf("%s: %v", rep.Name, err)
	}
	out := map[string]any{}
	for _, h := range res.Results {
		raw, _ := json.Marshal(h)
		var d map[string]any
		_ = json.Unmarshal(raw, &d)
		out[d["id"].(string)] = d
	}
	return out
}

// caughtUp waits until every replica applied the whole log and finished
// its tasks.
func (r *rig) caughtUp() {
	r.t.Helper()
	st, err := r.js.Stream(r.t.Context(), writelog.Stream)
	if err != nil {
		r.t.Fatal(err)
	}
	info, err := st.Info(r.t.Context())
	if err != nil {
		r.t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		done := true
		for _, s := range r.set.Status() {
			done = done && s.Healthy && s.Applied >= info.State.LastSeq && !s.Pending
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("replicas did not catch up to %d: %+v", info.State.LastSeq, r.set.Status())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *rig) identical(index string, want int) {
	r.t.Helper()
	first := contents(r.t, r.reps[0], index)
	if len(first) != want {
		r.t.Errorf("%s holds %d documents, want %d", r.reps[0].Name, len(first), want)
	}
	for _, rep := range r.reps[1:] {
		if got := contents(r.t, rep, index); !reflect.DeepEqual(got, first) {
			r.t.Errorf("%s differs from %s: %d vs %d documents", rep.Name, r.reps[0].Name, len(got), len(first))
		}
	}
	v := first["d0-1"].(map[string]any)["_vectors"].(map[string]any)["default"].(map[string]any)["embeddings"]
	if fmt.Sprint(v) != "[[1 0.5 1]]" {
		r.t.Errorf("vectors of d0-1 = %v, want [[1 0.5 1]]", v)
	}
}

func TestWritesThroughTheLogReachEveryReplica(t *testing.T) {
	r := newRig(t, 2)
	c, _ := r.writer(1, 4<<10) // small messages: a 200-document write is split
	setup(t, c, "agents")
	for b := range 3 {
		if task := add(t, c, "agents", b, 200); task.Status != meilisearch.TaskStatusSucceeded {
			t.Fatalf("add: %+v", task.Error)
		}
	}
	res, err := c.Index("agents").Search("agent", &meilisearch.SearchRequest{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.EstimatedTotalHits != 600 {
		t.Errorf("search through the set found %d, want 600", res.EstimatedTotalHits)
	}
	r.caughtUp()
	r.identical("agents", 600)
	// A replay is refused by task id: applying the log again from the start
	// changes nothing.
	if before, after := taskCount(t, r.reps[0]), replay(t, r, 0); after != before {
		t.Errorf("a replay from sequence 1 registered %d more tasks", after-before)
	}
}

// taskCount is how many tasks rep holds.
func taskCount(t *testing.T, rep replica.Replica) int64 {
	t.Helper()
	res, err := meili.New(rep.URL, rep.APIKey).GetTasks(&meilisearch.TasksQuery{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res.Total
}

// replay sends every write of the log to replica i again with its task id,
// as an applier that lost its place would, and returns the task count after.
func replay(t *testing.T, r *rig, i int) int64 {
	t.Helper()
	st, _ := r.js.Stream(t.Context(), writelog.Stream)
	info, _ := st.Info(t.Context())
	hc := meili.NewHTTPClient(0)
	var refused atomic.Int64
	for seq := uint64(1); seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(t.Context(), seq)
		if err != nil || m.Header.Get(writelog.HeaderMethod) == writelog.MethodFence {
			continue
		}
		req, _ := http.NewRequest(m.Header.Get(writelog.HeaderMethod), r.reps[i].URL+m.Header.Get(writelog.HeaderPath), bytes.NewReader(m.Data))
		req.Header.Set("Content-Type", m.Header.Get("Content-Type"))
		req.Header.Set("Authorization", "Bearer "+r.reps[i].APIKey)
		req.Header.Set("TaskId", strconv.FormatUint(seq, 10))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusBadRequest {
			refused.Add(1)
		}
	}
	if refused.Load() == 0 {
		t.Error("no replayed write was refused")
	}
	return taskCount(t, r.reps[i])
}

func TestStaleWriterIsRefusedByTheLog(t *testing.T) {
	r := newRig(t, 2)
	old, _ := r.writer(1, 0)
	setup(t, old, "agents")
	add(t, old, "agents", 0, 3)
	cur, _ := r.writer(2, 0) // a new term begins: its fence cuts the old writer off
	_, err := old.Index("agents").AddDocuments(docs(1, 3), nil)
	var me *meilisearch.Error
	if !errors.As(err, &me) || me.MeilisearchApiError.Code != "fenced_write" || me.StatusCode != http.StatusConflict {
		t.Fatalf("the stale writer's add returned %v, want 409 fenced_write", err)
	}
	add(t, cur, "agents", 2, 3)
	r.caughtUp()
	r.identical("agents", 6)
	for _, rep := range r.reps {
		if _, ok := contents(t, rep, "agents")["d1-0"]; ok {
			t.Errorf("%s holds the stale writer's document", rep.Name)
		}
	}
	checkTokens(t, r.js)
}

// checkTokens reads the log and checks that writers never interleave: the
// fencing tokens of the writes only grow, each after its own fence.
func checkTokens(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	st, _ := js.Stream(t.Context(), writelog.Stream)
	info, _ := st.Info(t.Context())
	var cur uint64
	fenced := map[uint64]bool{}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(t.Context(), seq)
		if err != nil || m.Subject == writelog.SubjectControl {
			continue
		}
		tok, _ := strconv.ParseUint(m.Header.Get(writelog.HeaderToken), 10, 64)
		if tok < cur {
			t.Errorf("write %d carries token %d after token %d", seq, tok, cur)
		}
		if m.Header.Get(writelog.HeaderMethod) == writelog.MethodFence {
			fenced[tok] = true
		} else if !fenced[tok] {
			t.Errorf("write %d with token %d comes before its term's fence", seq, tok)
		}
		cur = max(cur, tok)
	}
}

func TestReplicaAndApplierKilledMidStream(t *testing.T) {
	r := newRig(t, 3)
	c, _ := r.writer(1, 0)
	setup(t, c, "agents")
	// Searches keep running the whole time; none may fail.
	reader := r.client(nil)
	stop := make(chan struct{})
	var searches, failures atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := reader.Index("agents").Search("agent", &meilisearch.SearchRequest{Limit: 3}); err != nil {
				failures.Add(1)
				t.Logf("search failed: %v", err)
			}
			searches.Add(1)
			time.Sleep(20 * time.Millisecond)
		}
	})
	const batches = 12
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
			wg.Wait()
		}
	}()
	for b := range batches {
		if b == 4 {
			if err := r.managed[0].Kill(); err != nil { // SIGKILL replica r0
				t.Fatal(err)
			}
			r.stops[1]() // and r1's applier dies
		}
		if task := add(t, c, "agents", b, 50); task.Status != meilisearch.TaskStatusSucceeded {
			t.Fatalf("add %d: %+v", b, task.Error)
		}
	}
	close(stop)
	wg.Wait()
	if failures.Load() > 0 || searches.Load() < 10 {
		t.Errorf("%d of %d searches failed while a replica and an applier were down", failures.Load(), searches.Load())
	}
	// Bring both back: they catch up from the log.
	if err := r.managed[0].Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.startApplier(1)
	r.caughtUp()
	r.identical("agents", batches*50)
	// Each write was registered once, with the same task ids everywhere.
	first := taskIDs(t, r.reps[0])
	for _, rep := range r.reps[1:] {
		if got := taskIDs(t, rep); !reflect.DeepEqual(got, first) {
			t.Errorf("%s has tasks %v, %s has %v", rep.Name, got, r.reps[0].Name, first)
		}
	}
}

func taskIDs(t *testing.T, rep replica.Replica) []int64 {
	t.Helper()
	res, err := meili.New(rep.URL, rep.APIKey).GetTasks(&meilisearch.TasksQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(res.Results))
	for i, task := range res.Results {
		ids[i] = task.UID
	}
	return ids
}
