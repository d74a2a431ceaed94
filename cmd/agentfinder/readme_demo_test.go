package main

// How TestREADMECommands starts make run's demo: as a separate program, the
// way a newcomer does, so it embeds at the speed they see (the race
// detector slows the model several times over).

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

// readmePoll is how often the test reads the demo's state while it waits:
// with the README's commands one at a time, the test stays far below the
// demo's per-client rate limit (searchapi.DefaultRatePerSecond, which
// make run leaves on), as a person copying commands does.
const readmePoll = time.Second

// startREADMEDemo runs make run: the binary built as `make build` builds
// it, then .ci/run.sh unchanged, in a directory laid out like a clone
// (bin/agentfinder, .ci, .cache/model, data/ made by run.sh). It differs
// from a newcomer's make run only where a test must: a free port instead
// of 8080, an admin token the test knows, and the test's Meilisearch and
// index instead of one run.sh would start under data/ (MEILI_URL, which
// run.sh honours). It waits until demo.env is written (serve answers),
// every seed was crawled, the first probes found an endpoint up, one down
// and a signed one up, and the demo holds vectors; the test's end stops
// it with SIGTERM, as Ctrl-C does, and wants a clean exit.
func startREADMEDemo(t *testing.T) *readmeRunner {
	t.Helper()
	modelDir := readmeModel(t)
	root := t.TempDir()
	start := time.Now()
	buildAgentfinder(t, filepath.Join(root, "bin", "agentfinder"))
	t.Logf("built bin/agentfinder in %v", time.Since(start).Round(time.Millisecond))
	ci, err := filepath.Abs("../../.ci")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ci, filepath.Join(root, ".ci")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, ".cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modelDir, filepath.Join(root, ".cache", "model")); err != nil {
		t.Fatal(err)
	}

	m := meilitest.Connect(t)
	e := &e2e{t: t, meili: m, index: meilitest.NewIndexName("readme"), dataDir: filepath.Join(root, "data"),
		client: &http.Client{Timeout: 30 * time.Second}, srv: &server{addr: freeAddr(t)}}
	t.Cleanup(func() {
		for _, uid := range []string{e.index, e.index + "_sources"} {
			if task, err := m.Client.DeleteIndex(uid); err == nil {
				_ = meilitest.Wait(m.Client, task.TaskUID)
			}
		}
	})
	runMakeRun(t, root, []string{
		"AGENTFINDER_ADDR=" + e.srv.addr,
		"AGENTFINDER_ADMIN_TOKEN=" + e2eToken,
		"AGENTFINDER_INDEX=" + e.index,
		"MEILI_URL=" + m.URL,
		"MEILI_API_KEY=" + m.APIKey,
	}, filepath.Join(e.dataDir, "demo.env"))
	t.Logf("make run answered and wrote demo.env after %v", time.Since(start).Round(time.Millisecond))

	r := &readmeRunner{t: t, e: e, envFile: filepath.Join(e.dataDir, "demo.env")}
	r.waitDemo("the first crawl of every seed", 240*time.Second, func() (bool, string) {
		st := e.status()
		var todo []string
		for seed, s := range st {
			if s.Runs < 1 {
				todo = append(todo, seed)
			}
		}
		return len(st) > 0 && len(todo) == 0, fmt.Sprintf("%d seeds, not crawled yet: %v", len(st), todo)
	})
	// The README's live-only examples need a signed record whose endpoint
	// is up: a probe round (MCP conversations, tool lists) can end after
	// the first up and down verdicts.
	r.waitDemo("the first probes: an endpoint up and one down, a signed one up", 180*time.Second, func() (bool, string) {
		up, down := e.listTotal("health = up"), e.listTotal("health = down")
		signedUp := e.listTotal("trust.level = signed AND health = up")
		return up > 0 && down > 0 && signedUp > 0, fmt.Sprintf("%d up, %d down, %d signed and up", up, down, signedUp)
	})
	r.wantEmbedded()
	t.Logf("demo ready after %v", time.Since(start).Round(time.Millisecond))

	// The README's commands get the test's index and Meilisearch (make
	// run's own would find them under data/).
	t.Setenv("AGENTFINDER_INDEX", e.index)
	t.Setenv("MEILI_URL", m.URL)
	t.Setenv("MEILI_API_KEY", m.APIKey)
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	r.makefile = string(mk)
	return r
}

// readmeModel is the embedding model's directory, absolute. The test
// skips without it unless `make test` runs it (AGENTFINDER_REQUIRE_MEILI
// and AGENTFINDER_MODEL_DIR set), which fetched it first.
func readmeModel(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("AGENTFINDER_MODEL_DIR")
	required := dir != "" && os.Getenv("AGENTFINDER_REQUIRE_MEILI") == "1"
	if dir == "" {
		dir = "../../.cache/model"
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(abs, ".verified")); err != nil {
		if required {
			t.Fatalf("embedding model: %v", err)
		}
		t.Skipf("embedding model not in %s (run `make model`): make run's demo embeds", abs)
	}
	return abs
}

// buildAgentfinder builds the program at out as `make build` does
// (without the race detector the tests run under).
func buildAgentfinder(t *testing.T, out string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go, to build agentfinder: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), goBin, "build", "-ldflags", "-X main.version=readme-test", "-o", out, ".")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// runMakeRun starts root's .ci/run.sh with env over the test's environment
// (its own AGENTFINDER_ settings left out, as in a fresh shell) and waits
// until it has written make run's part of envFile. The test's cleanup
// sends it SIGTERM and wants it to stop cleanly within a minute.
func runMakeRun(t *testing.T, root string, env []string, envFile string) {
	t.Helper()
	out, err := os.Create(filepath.Join(root, "run.out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	cmd := exec.Command("bash", filepath.Join(root, ".ci", "run.sh"))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envPrefix) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = makeRunProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	logs := func() string {
		b, _ := os.ReadFile(filepath.Join(root, "run.out"))
		serve, _ := os.ReadFile(filepath.Join(root, "data", "serve.log"))
		if len(serve) > 8000 {
			serve = serve[len(serve)-8000:]
		}
		return fmt.Sprintf("run.sh:\n%s\nserve.log (end):\n%s", b, serve)
	}
	stopped := false
	t.Cleanup(func() {
		if stopped {
			return
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("make run did not stop cleanly on SIGTERM: %v\n%s", err, logs())
			}
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill() // its watchdogs stop serve and the fixture web
			t.Errorf("make run did not stop within 60s of SIGTERM\n%s", logs())
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 240*time.Second)
	defer cancel()
	for {
		if b, err := os.ReadFile(envFile); err == nil && strings.Contains(string(b), "AGENTFINDER_SERVER=") {
			return
		}
		select {
		case err := <-exited:
			stopped = true
			t.Fatalf("make run exited before its demo answered: %v\n%s", err, logs())
		case <-ctx.Done():
			t.Fatalf("make run wrote no demo.env in 240s\n%s", logs())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitDemo polls cond every readmePoll until it holds or limit passes.
func (r *readmeRunner) waitDemo(what string, limit time.Duration, cond func() (bool, string)) {
	r.t.Helper()
	start := time.Now()
	var last string
	for time.Since(start) < limit {
		ok, msg := cond()
		if ok {
			r.t.Logf("waited %v for %s", time.Since(start).Round(time.Millisecond), what)
			return
		}
		last = msg
		time.Sleep(readmePoll)
	}
	r.t.Fatalf("timed out after %v waiting for %s: %s", limit, what, last)
}

// wantEmbedded fails unless the demo's index has the embedder and
// documents with vectors: make run's demo ranks with the model.
func (r *readmeRunner) wantEmbedded() {
	t := r.t
	idx := r.e.meili.Client.Index(r.e.index)
	s, err := idx.GetSettingsWithContext(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	st, err := idx.GetStatsWithContext(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Embedders[normalize.EmbedderName]; !ok || st.NumberOfEmbeddedDocuments == 0 {
		t.Fatalf("the demo does not embed: embedders %v, %d of %d documents with vectors", s.Embedders, st.NumberOfEmbeddedDocuments, st.NumberOfDocuments)
	}
	t.Logf("the demo embeds: %d of %d documents with vectors", st.NumberOfEmbeddedDocuments, st.NumberOfDocuments)
}
