package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeRunTwice: make run on a data directory whose demo is running
// (run.pid names a live process: this test) says where that demo is and
// exits 1, touching none of its files; a run.pid whose process is gone
// does not stop it (--check passes).
func TestMakeRunTwice(t *testing.T) {
	data := t.TempDir()
	files := map[string]string{
		"run.pid":      fmt.Sprintf("%d http://127.0.0.1:8080/\n", os.Getpid()),
		"demo.env":     "export AGENTFINDER_SERVER='http://127.0.0.1:8080'\n",
		"fixtures.out": `{"flags":[]}` + "\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(data, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"../../.ci/run.sh"}, {"../../.ci/run.sh", "--check"}} {
		cmd := exec.CommandContext(t.Context(), "bash", args...)
		cmd.Env = append(os.Environ(), "AGENTFINDER_DATA_DIR="+data)
		out, err := cmd.CombinedOutput()
		want := fmt.Sprintf("a demo is already running at http://127.0.0.1:8080/ (pid %d)", os.Getpid())
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), want) {
			t.Errorf("%v with a demo running: %v\n%s", args, err, out)
		}
	}
	for name, body := range files {
		if b, err := os.ReadFile(filepath.Join(data, name)); err != nil || string(b) != body {
			t.Errorf("%s changed: %q, %v", name, b, err)
		}
	}
	// A run.pid left by a demo that is gone: its process no longer exists.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "run.pid"), fmt.Appendf(nil, "%d http://127.0.0.1:8080/\n", gone.Process.Pid), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "bash", "../../.ci/run.sh", "--check")
	cmd.Env = append(os.Environ(), "AGENTFINDER_DATA_DIR="+data)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("--check with a stale run.pid: %v\n%s", err, out)
	}
}
