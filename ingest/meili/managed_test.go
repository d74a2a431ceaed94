package meili

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfinder/agentfinder/fixtures/logbuf"
)

// meiliBin returns the Meilisearch binary .ci/with-meilisearch.sh exports,
// or skips (fails when a real Meilisearch is required).
func meiliBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("AGENTFINDER_MEILI_BIN")
	if bin == "" {
		if os.Getenv("AGENTFINDER_REQUIRE_MEILI") == "1" {
			t.Fatal("AGENTFINDER_MEILI_BIN not set")
		}
		t.Skip("AGENTFINDER_MEILI_BIN not set; run `make test`")
	}
	return bin
}

func TestFindBinaryNamesWhatItTried(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("PATH", t.TempDir())
	_, err := StartManaged(t.Context(), ManagedConfig{Bin: "/nonexistent/meilisearch", DataDir: t.TempDir()})
	if err == nil {
		t.Fatal("StartManaged without a binary succeeded")
	}
	for _, want := range []string{"/nonexistent/meilisearch", ".bin/meilisearch", "PATH", "MEILI_URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestManagedStartRestartStop(t *testing.T) {
	bin := meiliBin(t)
	dir := filepath.Join(t.TempDir(), "meili")
	m, err := StartManaged(t.Context(), ManagedConfig{Bin: bin, DataDir: dir})
	if err != nil {
		t.Fatalf("StartManaged: %v", err)
	}
	t.Cleanup(func() { _ = m.Stop() })
	if !strings.HasPrefix(m.URL, "http://127.0.0.1:") {
		t.Fatalf("URL = %s, want loopback", m.URL)
	}
	fi, err := os.Stat(filepath.Join(dir, keyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("master key mode = %v, want 0600", fi.Mode().Perm())
	}

	c := New(m.URL, m.APIKey)
	if _, err := New(m.URL, "wrong-key").GetIndexWithContext(t.Context(), "kept"); err == nil {
		t.Fatal("a wrong key was accepted: master key not in force")
	}
	task, err := c.CreateIndexWithContext(t.Context(), &meilisearch.IndexConfig{Uid: "kept", PrimaryKey: "id"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitForTaskWithContext(t.Context(), task.TaskUID, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}

	url := m.URL
	if err := m.Restart(t.Context()); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if m.URL != url {
		t.Fatalf("URL changed across restart: %s -> %s", url, m.URL)
	}
	if _, err := c.GetIndexWithContext(t.Context(), "kept"); err != nil {
		t.Fatalf("index lost across restart: %v", err)
	}
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	if c.IsHealthy() {
		t.Fatal("still healthy after Stop")
	}

	// A second start on the same data dir reuses the key and the data.
	m2, err := StartManaged(t.Context(), ManagedConfig{Bin: bin, DataDir: dir})
	if err != nil {
		t.Fatalf("second StartManaged: %v", err)
	}
	t.Cleanup(func() { _ = m2.Stop() })
	if m2.APIKey != m.APIKey {
		t.Fatal("master key changed between starts")
	}
	if _, err := New(m2.URL, m2.APIKey).GetIndexWithContext(t.Context(), "kept"); err != nil {
		t.Fatalf("index lost across a new start: %v", err)
	}
}

// waitHealth polls m.Health until cond holds (at most 60 s).
func waitHealth(t *testing.T, m *Managed, what string, cond func(state string, live bool) bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		state, live := m.Health()
		if cond(state, live) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %q (live %v) after 60s", what, state, live)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestManagedSupervision kills the real Meilisearch with SIGKILL: the
// supervisor logs the exit and restarts it on the same address and data.
// Then, with the binary gone, restarts fail until the supervisor gives up
// and Health says the process cannot recover on its own.
func TestManagedSupervision(t *testing.T) {
	bin := meiliBin(t)
	dir := t.TempDir()
	link := filepath.Join(dir, "meilisearch")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	logs := &logbuf.Buffer{}
	reg := prometheus.NewRegistry()
	m, err := StartManaged(t.Context(), ManagedConfig{Bin: link, DataDir: filepath.Join(dir, "meili"),
		Logger: slog.New(slog.NewTextHandler(logs, nil)), RestartBackoff: 50 * time.Millisecond, MaxRestarts: 2, Metrics: reg})
	if err != nil {
		t.Fatalf("StartManaged: %v", err)
	}
	t.Cleanup(func() { _ = m.Stop() })
	metric := func(name string) float64 {
		t.Helper()
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if f.GetName() == name {
				m := f.GetMetric()[0]
				return m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
		t.Fatalf("no metric %s", name)
		return 0
	}
	c := New(m.URL, m.APIKey)
	task, err := c.CreateIndexWithContext(t.Context(), &meilisearch.IndexConfig{Uid: "kept", PrimaryKey: "id"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitForTaskWithContext(t.Context(), task.TaskUID, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}

	first := m.PID()
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitHealth(t, m, "restart after SIGKILL", func(state string, live bool) bool {
		return strings.HasPrefix(state, "running: restarted 1 times") && live
	})
	if pid := m.PID(); pid == first || pid == 0 {
		t.Fatalf("PID after the restart = %d (was %d)", pid, first)
	}
	if _, err := c.GetIndexWithContext(t.Context(), "kept"); err != nil {
		t.Fatalf("index lost across the supervised restart: %v", err)
	}
	if !strings.Contains(logs.String(), "managed meilisearch exited") || !strings.Contains(logs.String(), "signal: killed") {
		t.Errorf("the exit was not logged:\n%s", logs.String())
	}
	if up, exits, restarts := metric("agentfinder_meili_managed_up"), metric("agentfinder_meili_managed_exits_total"), metric("agentfinder_meili_managed_restarts_total"); up != 1 || exits != 1 || restarts != 1 {
		t.Errorf("up %v, exits %v, restarts %v; want 1, 1, 1", up, exits, restarts)
	}

	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(m.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitHealth(t, m, "giving up without a binary", func(state string, live bool) bool { return !live })
	if state, _ := m.Health(); !strings.HasPrefix(state, "failed: gave up after 2 failed restarts") {
		t.Errorf("state = %q", state)
	}
	if up := metric("agentfinder_meili_managed_up"); up != 0 {
		t.Errorf("up = %v after giving up", up)
	}
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	if state, live := m.Health(); state != "stopped" || !live {
		t.Errorf("after Stop: %q live %v", state, live)
	}
}
