package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/fixtures/mcpregistry"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/embed"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

const benchRegHost = "bench.registry.test"

// BenchmarkRegistryWalk measures, in one run against the same Meilisearch:
//   - a full walk of a fixture MCP registry of AGENTFINDER_BENCH_SERVERS
//     servers (default 30,000, generated from the real records) by
//     'agentfinder serve' in its own process, with embeddings, from its
//     first list request until every server is searchable with its vectors;
//   - the floor for the same work: embedding the same texts alone
//     (ingest.VectorTexts of the same records, the same model) plus a bulk
//     load of the same documents, vectors included, into an index with the
//     same settings; the walk's time is printed as a ratio to it (target
//     at most 1.3);
//   - an incremental run after 100 servers changed: POST /admin/crawl until
//     all 100 are searchable in their new version (target at most 10 s);
//   - serve's peak RSS (VmHWM) over the walk (target at most 600 MB).
//
// Every wait is bounded; it runs only under 'make bench' (go test -bench).
func BenchmarkRegistryWalk(b *testing.B) {
	n := benchEnvInt(b, "AGENTFINDER_BENCH_SERVERS", 30000)
	const changed = 100
	modelDir := os.Getenv("AGENTFINDER_MODEL_DIR")
	model, err := embed.Load(modelDir)
	if err != nil {
		b.Skipf("embedding model: %v (run make model; make bench sets AGENTFINDER_MODEL_DIR)", err)
	}
	m := meilitest.Connect(b)
	for b.Loop() {
		reg, err := mcpregistry.New(mcpregistry.Config{Generate: n})
		if err != nil {
			b.Fatal(err)
		}
		recs := benchRegistryRecords(b, reg)
		floorEmbed, floorLoad := benchRegistryFloor(b, m, model, recs)
		floor := floorEmbed + floorLoad

		web := crawlertest.Web(b, fixtures.Options{NoWorld: true, Handlers: map[string]http.Handler{benchRegHost: reg}})
		index := meilitest.NewIndexName("bench_registry")
		dropIndexes(b, m, index)
		child := startBenchServe(b, web, m, index, modelDir)
		child.crawlNow()
		walk := child.waitSearchable(int64(len(recs)), 20*time.Minute)
		first := web.RequestsFor(benchRegHost)
		if len(first) == 0 {
			b.Fatal("the registry got no request")
		}
		walkTime := walk.Sub(first[0].Time)
		rss := child.peakRSS()

		ch := reg.Change(changed)
		start := time.Now()
		child.crawlNow()
		child.waitVersions(ch.Updated, "101.0.0", 60*time.Second)
		incremental := time.Since(start)
		batches, tasks := child.metric("agentfinder_ingest_batches_total"), child.metric("agentfinder_ingest_tasks_total")
		child.stop()

		ratio := walkTime.Seconds() / floor.Seconds()
		b.ReportMetric(walkTime.Seconds(), "walk-s")
		b.ReportMetric(ratio, "walk/floor")
		b.ReportMetric(incremental.Seconds(), "incremental-s")
		b.ReportMetric(float64(rss>>20), "serve-peak-rss-MB")
		fmt.Fprintf(os.Stderr, "registry walk of %d servers (%d records) to searchable with embeddings: %v | floor %v (embedding alone %v + bulk load %v) | ratio %.2f (target <= 1.3)\n",
			n, len(recs), walkTime.Round(time.Millisecond), floor.Round(time.Millisecond), floorEmbed.Round(time.Millisecond), floorLoad.Round(time.Millisecond), ratio)
		fmt.Fprintf(os.Stderr, "the walk and the incremental run were written in %s ingest batches (%s Meilisearch tasks, catalog states included)\n", batches, tasks)
		fmt.Fprintf(os.Stderr, "incremental run with %d changed servers searchable in %v (target <= 10s) | serve peak RSS %d MB (target <= 600 MB)\n",
			changed, incremental.Round(time.Millisecond), rss>>20)
	}
}

// benchRegistryRecords reads the whole registry as a walk does and returns
// the record of every server name.
func benchRegistryRecords(b *testing.B, reg *mcpregistry.Registry) []normalize.Record {
	versions := map[string][]normalize.RegistryEntry{}
	var order []string
	cursor := ""
	for range 100000 {
		w := httptest.NewRecorder()
		reg.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v0.1/servers?limit=100&cursor="+url.QueryEscape(cursor), nil))
		page, err := normalize.ReadRegistryPage(w.Body.Bytes())
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range page.Servers {
			if _, ok := versions[e.Name]; !ok {
				order = append(order, e.Name)
			}
			versions[e.Name] = append(versions[e.Name], e)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	recs := make([]normalize.Record, 0, len(order))
	for _, name := range order {
		if rec, _, ok := normalize.RegistryRecord(versions[name], normalize.RegistryOptions{Registry: "https://" + benchRegHost, Now: time.Now()}); ok {
			recs = append(recs, rec)
		}
	}
	return recs
}

// benchRegistryFloor embeds the records' texts alone, then bulk-loads their
// documents with those vectors into a fresh index with ingest's settings,
// and returns both times.
func benchRegistryFloor(b *testing.B, m *meilitest.Server, model *embed.Model, recs []normalize.Record) (embedTime, loadTime time.Duration) {
	ctx := b.Context()
	var texts []string
	for _, r := range recs {
		texts = append(texts, ingest.VectorTexts(r)...)
	}
	model.SetCacheSize(0)
	start := time.Now()
	vecs, err := model.Embed(ctx, texts)
	if err != nil {
		b.Fatal(err)
	}
	embedTime = time.Since(start)
	model.SetCacheSize(embed.DefaultCacheSize)

	index := meilitest.NewIndexName("bench_registry_floor")
	dropIndexes(b, m, index)
	ix, err := ingest.New(ctx, m.Client, ingest.Config{Index: index, Embedder: model}) // the same settings
	if err != nil {
		b.Fatal(err)
	}
	if err := ix.Close(ctx); err != nil {
		b.Fatal(err)
	}
	docs := make([]normalize.Document, len(recs))
	now, k := time.Now(), 0
	for i, r := range recs {
		docs[i] = normalize.NewDocument(r, now)
		nt := len(ingest.VectorTexts(r))
		docs[i].Vectors = map[string]any{normalize.EmbedderName: vecs[k : k+nt]}
		k += nt
	}
	start = time.Now()
	tasks, err := m.Client.Index(index).AddDocumentsInBatchesWithContext(ctx, docs, 5000, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range tasks {
		if err := meilitest.Wait(m.Client, t.TaskUID); err != nil {
			b.Fatal(err)
		}
	}
	return embedTime, time.Since(start)
}

func dropIndexes(b *testing.B, m *meilitest.Server, index string) {
	b.Cleanup(func() {
		for _, uid := range []string{index, index + "_sources"} {
			if task, err := m.Client.DeleteIndex(uid); err == nil {
				_ = meilitest.Wait(m.Client, task.TaskUID)
			}
		}
	})
}

// benchServe is 'agentfinder serve' running in a process of its own.
type benchServe struct {
	b     *testing.B
	cmd   *exec.Cmd
	addr  string
	index meilisearch.IndexManager
	log   *bytes.Buffer
}

// startBenchServe starts serve walking the bench registry into index, with
// embeddings from modelDir, and waits until it is ready.
func startBenchServe(b *testing.B, web *fixtures.Web, m *meilitest.Server, index, modelDir string) *benchServe {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	args := []string{"serve", "--addr", addr, "--data-dir", b.TempDir(), "--index", index,
		"--registry", "https://" + benchRegHost, "--schedule", "@every 1h", "--model-dir", modelDir,
		"--probe=false", "--log-level", "warn", "--access-log=false"}
	args = append(args, newFixturesInfo(web, false).Flags...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1", "MEILI_URL="+m.URL, "MEILI_API_KEY="+m.APIKey, "AGENTFINDER_ADMIN_TOKEN="+e2eToken)
	s := &benchServe{b: b, cmd: cmd, addr: addr, index: m.Client.Index(index), log: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.stop)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("serve not ready in 2 minutes:\n%s", s.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// crawlNow asks serve to crawl its seeds now.
func (s *benchServe) crawlNow() {
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.addr+"/admin/crawl", nil)
	req.Header.Set("Authorization", "Bearer "+e2eToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		s.b.Fatalf("POST /admin/crawl: %d", resp.StatusCode)
	}
}

// waitSearchable waits until the index holds n documents, each with its
// vectors, and returns when it saw that.
func (s *benchServe) waitSearchable(n int64, limit time.Duration) time.Time {
	deadline := time.Now().Add(limit)
	for {
		st, err := s.index.GetStatsWithContext(s.b.Context(), nil)
		if err == nil && st.NumberOfDocuments >= n && st.NumberOfEmbeddedDocuments >= n {
			return time.Now()
		}
		if time.Now().After(deadline) {
			s.b.Fatalf("not searchable within %v (stats %+v, err %v):\n%s", limit, st, err, s.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitVersions waits until every server of names is indexed at version.
func (s *benchServe) waitVersions(names []string, version string, limit time.Duration) {
	ids := make([]string, len(names))
	for i, name := range names {
		ids[i] = normalize.DocID(name)
	}
	deadline := time.Now().Add(limit)
	for {
		var res meilisearch.DocumentsResult
		err := s.index.GetDocumentsWithContext(s.b.Context(), &meilisearch.DocumentsQuery{Ids: ids, Fields: []string{"version"}, Limit: int64(len(ids))}, &res)
		done := 0
		for _, d := range res.Results {
			if strings.Contains(string(d["version"]), version) {
				done++
			}
		}
		if err == nil && done == len(ids) {
			return
		}
		if time.Now().After(deadline) {
			s.b.Fatalf("%d of %d changed servers searchable within %v (err %v):\n%s", done, len(ids), limit, err, s.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// metric returns the value of an unlabelled metric on serve's /metrics
// ("?" when it cannot be read).
func (s *benchServe) metric(name string) string {
	resp, err := http.Get("http://" + s.addr + "/metrics")
	if err != nil {
		return "?"
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	if _, err := body.ReadFrom(resp.Body); err != nil {
		return "?"
	}
	for _, line := range strings.Split(body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return "?"
}

// peakRSS returns serve's peak resident set size so far (VmHWM), in bytes.
func (s *benchServe) peakRSS() int64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/status")
	if err != nil {
		s.b.Fatalf("read serve's status: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				s.b.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	s.b.Fatal("no VmHWM in serve's status")
	return 0
}

// stop ends serve (SIGTERM, then SIGKILL after 30 s) and waits for it.
func (s *benchServe) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}
