// Package meilitest gives tests a fresh index on the real Meilisearch server
// named by MEILI_URL (and MEILI_API_KEY). When AGENTFINDER_REQUIRE_MEILI=1, as
// `make test` sets it, a missing or unhealthy server fails the test instead of
// skipping it. There is no fake: tests talk to a real Meilisearch.
package meilitest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meili"
)

// Server describes the Meilisearch a test runs against.
type Server struct {
	URL    string
	APIKey string
	Client meilisearch.ServiceManager
}

// Required reports whether the environment demands a real Meilisearch.
func Required() bool { return os.Getenv("AGENTFINDER_REQUIRE_MEILI") == "1" }

// required returns the environment variable name, which `make test`
// sets; without it, it skips the test, or fails it when Required.
func required(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if Required() {
			t.Fatalf("meilitest: AGENTFINDER_REQUIRE_MEILI=1 but %s is not set", name)
		}
		t.Skipf("meilitest: %s not set; run `make test` for a real Meilisearch", name)
	}
	return v
}

// Connect returns the server from the environment. Without MEILI_URL it skips
// the test, or fails it when Required. It fails when the server is not healthy.
func Connect(t testing.TB) *Server {
	t.Helper()
	url := required(t, "MEILI_URL")
	key := os.Getenv("MEILI_API_KEY")
	c := meili.New(url, key)
	if !c.IsHealthy() {
		t.Fatalf("meilitest: Meilisearch at %s is not healthy", url)
	}
	return &Server{URL: url, APIKey: key, Client: c}
}

// Bin returns the Meilisearch binary AGENTFINDER_MEILI_BIN names, as
// `make test` sets it, for tests that run a Meilisearch of their own.
// Without it, it skips the test, or fails it when Required.
func Bin(t testing.TB) string {
	t.Helper()
	return required(t, "AGENTFINDER_MEILI_BIN")
}

// Managed starts a Meilisearch of the test's own from Bin on a temporary
// data directory, for tests that kill it and start it again; it is stopped
// when the test ends.
func Managed(t testing.TB) *meili.Managed {
	t.Helper()
	m, err := meili.StartManaged(t.Context(), meili.ManagedConfig{Bin: Bin(t), DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("meilitest: start a managed Meilisearch: %v", err)
	}
	t.Cleanup(func() { _ = m.Stop() })
	return m
}

// Replica starts a Meilisearch of the test's own like Managed, as a
// replica of an index write log (meili.ManagedConfig.Replicated).
func Replica(t testing.TB) *meili.Managed {
	t.Helper()
	m, err := meili.StartManaged(t.Context(), meili.ManagedConfig{Bin: Bin(t), DataDir: t.TempDir(), Replicated: true, MaxRestarts: -1})
	if err != nil {
		t.Fatalf("meilitest: start a replica Meilisearch: %v", err)
	}
	t.Cleanup(func() { _ = m.Stop() })
	return m
}

// NewIndexName returns a unique index name with the given prefix.
func NewIndexName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	if prefix == "" {
		prefix = "test"
	}
	return prefix + "_" + hex.EncodeToString(b[:])
}

// Index creates a fresh, empty index with primary key "id" and deletes it when
// the test ends. It returns the server and the index name.
func Index(t testing.TB, prefix string) (*Server, string) {
	t.Helper()
	s := Connect(t)
	name := NewIndexName(prefix)
	task, err := s.Client.CreateIndex(&meilisearch.IndexConfig{Uid: name, PrimaryKey: "id"})
	if err != nil {
		t.Fatalf("meilitest: create index %s: %v", name, err)
	}
	if err := Wait(s.Client, task.TaskUID); err != nil {
		t.Fatalf("meilitest: create index %s: %v", name, err)
	}
	t.Cleanup(func() {
		if task, err := s.Client.DeleteIndex(name); err == nil {
			_ = Wait(s.Client, task.TaskUID)
		}
	})
	return s, name
}

// Wait waits for a Meilisearch task and returns an error if it failed.
func Wait(c meilisearch.ServiceManager, uid int64) error {
	t, err := c.WaitForTask(uid, 10*time.Millisecond)
	if err != nil {
		return err
	}
	if t.Status != meilisearch.TaskStatusSucceeded {
		return &TaskError{UID: uid, Status: string(t.Status), Code: t.Error.Code, Message: t.Error.Message}
	}
	return nil
}

// TaskError is a Meilisearch task that did not succeed.
type TaskError struct {
	UID     int64
	Status  string
	Code    string
	Message string
}

func (e *TaskError) Error() string {
	return "meilisearch task " + e.Status + ": " + e.Code + ": " + e.Message
}
