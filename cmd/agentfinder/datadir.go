package main

// One data directory, one owner. A process that writes to a data directory
// (serve always; crawl when it would start a managed Meilisearch) holds an
// exclusive flock on <data-dir>/agentfinder.lock for as long as it runs. The
// file says who holds it and, when the holder manages a Meilisearch, at
// which URL; the key is <data-dir>/meili/master.key. A second process reuses
// that Meilisearch (crawl) or refuses with a message naming the holder
// (serve, or crawl when there is nothing to reuse), so two Meilisearch
// processes never open one database. The kernel drops the lock when the
// holder exits, however it exits.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// lockFileName is the lock's file inside the data directory.
const lockFileName = "agentfinder.lock"

// lockInfo is what the lock file says about its holder.
type lockInfo struct {
	PID      int       `json:"pid"`
	Command  string    `json:"command"`
	Since    time.Time `json:"since"`
	MeiliURL string    `json:"meiliUrl,omitempty"` // the holder's managed Meilisearch
}

func (h lockInfo) String() string {
	if h.PID == 0 {
		return "another process (it has not said which yet)"
	}
	return fmt.Sprintf("%s (pid %d, since %s)", h.Command, h.PID, h.Since.Local().Format(time.DateTime))
}

// dataDirBusyError says a data directory is held by another process.
type dataDirBusyError struct {
	Dir    string
	Holder lockInfo
}

func (e *dataDirBusyError) Error() string {
	return fmt.Sprintf("data directory %s is in use by %s: stop it, or give this command another --data-dir", e.Dir, e.Holder)
}

// dataDirLock is this process's hold on a data directory.
type dataDirLock struct {
	f    *os.File
	info lockInfo
}

// lockDataDir takes the data directory dir (creating it) for command, or
// returns a *dataDirBusyError naming the process that holds it.
func lockDataDir(dir, command string) (*dataDirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &dataDirBusyError{Dir: dir, Holder: readLockInfo(dir)}
		}
		return nil, fmt.Errorf("data dir lock %s: %w", path, err)
	}
	l := &dataDirLock{f: f, info: lockInfo{PID: os.Getpid(), Command: command, Since: time.Now().UTC().Truncate(time.Second)}}
	if err := l.write(); err != nil {
		l.release()
		return nil, err
	}
	return l, nil
}

// readLockInfo reads what the holder of dir's lock wrote (zero when
// nothing readable is there yet).
func readLockInfo(dir string) lockInfo {
	var h lockInfo
	if b, err := os.ReadFile(filepath.Join(dir, lockFileName)); err == nil {
		_ = json.Unmarshal(b, &h)
	}
	return h
}

// setMeiliURL records the managed Meilisearch this process started, for
// other processes to reuse.
func (l *dataDirLock) setMeiliURL(url string) error {
	l.info.MeiliURL = url
	return l.write()
}

func (l *dataDirLock) write() error {
	b, err := json.Marshal(l.info)
	if err != nil {
		return err
	}
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("data dir lock: %w", err)
	}
	if _, err := l.f.WriteAt(append(b, '\n'), 0); err != nil {
		return fmt.Errorf("data dir lock: %w", err)
	}
	return nil
}

// release empties the lock file and lets the directory go. Safe on nil.
func (l *dataDirLock) release() {
	if l == nil || l.f == nil {
		return
	}
	_ = l.f.Truncate(0)
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
}

// reuseHolderMeili returns the URL and key of the managed Meilisearch that
// the holder of a busy data directory runs, when it answers /health; else
// the busy error, saying why nothing could be reused.
func reuseHolderMeili(ctx context.Context, busy *dataDirBusyError) (url, key string, err error) {
	h := busy.Holder
	if h.MeiliURL == "" {
		return "", "", busy
	}
	b, err := os.ReadFile(filepath.Join(busy.Dir, "meili", "master.key"))
	if err != nil {
		return "", "", fmt.Errorf("%w (its Meilisearch key is unreadable: %v)", busy, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.MeiliURL+"/health", nil)
	if err != nil {
		return "", "", fmt.Errorf("%w (its Meilisearch URL %q is invalid)", busy, h.MeiliURL)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", "", fmt.Errorf("%w (its Meilisearch at %s does not answer: %v)", busy, h.MeiliURL, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("%w (its Meilisearch at %s answers %s)", busy, h.MeiliURL, resp.Status)
	}
	return h.MeiliURL, strings.TrimSpace(string(b)), nil
}
