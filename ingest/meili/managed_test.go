package meili

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"
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
