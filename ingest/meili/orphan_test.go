package meili

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary a parent that starts a managed
// Meilisearch on the data directory the variable names and then waits to
// be killed, so a test can kill that parent by pid.
const helperEnv = "AGENTFINDER_MEILI_TEST_PARENT"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if _, err := StartManaged(ctx, ManagedConfig{Bin: os.Getenv("AGENTFINDER_MEILI_BIN"), DataDir: dir}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("started")
		<-ctx.Done() // killed long before
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// notedPID waits (bounded) for the pid file of dir and returns its pid.
func notedPID(t *testing.T, dir string) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(dir, pidFile)); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %s in %s after 60s", pidFile, dir)
	return 0
}

// TestManagedDiesWithItsParent: a process that started a managed
// Meilisearch is SIGKILLed; the Meilisearch ends too instead of running on,
// orphaned, on the data directory.
func TestManagedDiesWithItsParent(t *testing.T) {
	bin := meiliBin(t)
	dir := filepath.Join(t.TempDir(), "meili")
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), helperEnv+"="+dir, "AGENTFINDER_MEILI_BIN="+bin)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	parent.Stderr = os.Stderr
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	line := make([]byte, 8)
	if _, err := out.Read(line); err != nil || !strings.HasPrefix(string(line), "started") {
		t.Fatalf("the parent did not start its Meilisearch: %q %v", line, err)
	}
	child := notedPID(t, dir)
	if !alive(child) {
		t.Fatalf("meilisearch %d not running", child)
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	if err := syscall.Kill(parent.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	if !waitGone(child, 15*time.Second) {
		t.Fatalf("meilisearch %d still running 15s after its parent was killed", child)
	}
}

// TestStartStopsOrphan: a Meilisearch left running on the data directory
// by an earlier start (its pid file names it) is stopped before a new one
// starts, so two never serve one database; a pid file naming some other
// program leaves that program alone.
func TestStartStopsOrphan(t *testing.T) {
	bin := meiliBin(t)
	dir := filepath.Join(t.TempDir(), "meili")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	key, err := masterKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	orphanURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	orphan := exec.Command(bin, "--http-addr", orphanURL[len("http://"):], "--db-path", filepath.Join(dir, "db"), "--no-analytics", "--master-key", key)
	orphan.Dir = dir
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- orphan.Wait() }()
	t.Cleanup(func() { _ = orphan.Process.Kill() })
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for !healthy(t.Context(), hc, orphanURL) {
		if time.Now().After(deadline) {
			t.Fatal("the orphan meilisearch never became healthy")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(dir, pidFile), []byte(strconv.Itoa(orphan.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	m, err := StartManaged(t.Context(), ManagedConfig{Bin: bin, DataDir: dir})
	if err != nil {
		t.Fatalf("StartManaged over an orphan: %v", err)
	}
	t.Cleanup(func() { _ = m.Stop() })
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the orphan meilisearch on the same database is still running after a start")
	}
	if got := notedPID(t, dir); got == orphan.Process.Pid || !alive(got) {
		t.Errorf("pid file names %d (orphan %d)", got, orphan.Process.Pid)
	}
	_ = m.Stop()

	// A pid file naming another program (the pid was reused): left alone.
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	if err := os.WriteFile(filepath.Join(dir, pidFile), []byte(strconv.Itoa(other.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m2, err := StartManaged(t.Context(), ManagedConfig{Bin: bin, DataDir: dir})
	if err != nil {
		t.Fatalf("StartManaged with a stale pid file: %v", err)
	}
	t.Cleanup(func() { _ = m2.Stop() })
	if !alive(other.Process.Pid) {
		t.Error("a process that is not our Meilisearch was stopped")
	}
}
