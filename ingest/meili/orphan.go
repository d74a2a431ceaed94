package meili

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pidFile, in the data directory, holds the pid of the Meilisearch this
// Managed runs there, so a later start can find one left behind by a
// parent that died without stopping it (where the kernel does not end a
// child with its parent, see childAttr).
const pidFile = "meilisearch.pid"

// orphanStopTimeout bounds the wait for an orphan to end on SIGTERM before
// it gets SIGKILL.
const orphanStopTimeout = 10 * time.Second

// recordPID notes pid as the Meilisearch running on the data directory.
func (m *Managed) recordPID(pid int) {
	_ = os.WriteFile(filepath.Join(m.cfg.DataDir, pidFile), []byte(strconv.Itoa(pid)+"\n"), 0o600)
}

// forgetPID removes the note of pid (when it is still the one noted).
func (m *Managed) forgetPID(pid int) {
	path := filepath.Join(m.cfg.DataDir, pidFile)
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(pid) {
		_ = os.Remove(path)
	}
}

// stopOrphan ends a Meilisearch that an earlier process started on this
// data directory and left running (its pid file names a live process
// serving this database), so two never open one database. A pid that
// now names another program is left alone. When it cannot tell whose the
// process is, or the orphan does not end, it refuses with an error naming
// the pid.
func (m *Managed) stopOrphan(dbPath string) error {
	path := filepath.Join(m.cfg.DataDir, pidFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || perr != nil || pid <= 1 {
		_ = os.Remove(path)
		return nil
	}
	if !alive(pid) {
		_ = os.Remove(path)
		return nil
	}
	owns, known := servesDB(pid, dbPath)
	switch {
	case known && !owns:
		_ = os.Remove(path)
		return nil
	case !known:
		return fmt.Errorf("managed meilisearch: process %d (noted in %s) may still serve %s: stop it, or remove the file if it is not Meilisearch", pid, path, dbPath)
	}
	m.cfg.Logger.Warn("stopping a meilisearch left running on this data directory", "pid", pid, "db", dbPath)
	if err := endProcess(pid); err != nil {
		return fmt.Errorf("managed meilisearch: the meilisearch left running on %s (pid %d): %w", dbPath, pid, err)
	}
	_ = os.Remove(path)
	return nil
}

// endProcess sends pid SIGTERM, then SIGKILL after orphanStopTimeout, and
// waits (bounded) until it is gone.
func endProcess(pid int) error {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	if waitGone(pid, orphanStopTimeout) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if waitGone(pid, 5*time.Second) {
		return nil
	}
	return errors.New("still running after SIGKILL")
}

// waitGone polls until pid has ended or d has passed.
func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return !alive(pid)
}
