package main

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestDataDirLock(t *testing.T) {
	dir := t.TempDir()
	first, err := lockDataDir(dir, "agentfinder serve")
	if err != nil {
		t.Fatal(err)
	}
	if err := first.setMeiliURL("http://127.0.0.1:7700"); err != nil {
		t.Fatal(err)
	}
	_, err = lockDataDir(dir, "agentfinder crawl")
	var busy *dataDirBusyError
	if !errors.As(err, &busy) {
		t.Fatalf("second lock: %v, want a busy error", err)
	}
	if busy.Holder.PID != os.Getpid() || busy.Holder.Command != "agentfinder serve" || busy.Holder.MeiliURL != "http://127.0.0.1:7700" {
		t.Errorf("holder = %+v", busy.Holder)
	}
	if msg := err.Error(); !strings.Contains(msg, "agentfinder serve (pid") || !strings.Contains(msg, "--data-dir") {
		t.Errorf("message %q does not name the holder and the way out", msg)
	}
	first.release()
	second, err := lockDataDir(dir, "agentfinder crawl")
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	second.release()
}
