// Package statefile reads and writes the JSON state files a service keeps
// in its data directory (the scheduler's and the prober's): writes are
// atomic (a temporary file renamed over the old one), and a file that
// cannot be parsed is moved aside, with a warning, so the service starts
// from empty state instead of refusing to start. It imports nothing of
// ours.
package statefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2"
)

// Load reads the JSON file at path into v. It returns false when there is
// no state to restore: the file is missing, or it does not parse as v, in
// which case it is renamed to path.corrupt-<UTC time> (kept for whoever
// wants to look at it) and a warning naming both files goes to log (nil:
// discarded). An error is a file that cannot be read or moved aside.
func Load(path string, v any, log *slog.Logger) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read state %s: %w", path, err)
	}
	perr := json.Unmarshal(b, v)
	if perr == nil {
		return true, nil
	}
	aside := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	if err := os.Rename(path, aside); err != nil {
		return false, fmt.Errorf("state %s does not parse (%v) and cannot be moved aside: %w", path, perr, err)
	}
	if log != nil {
		log.Warn("corrupt state file moved aside; starting from empty state", "path", path, "movedTo", aside, "err", perr)
	}
	return false, nil
}

// Save writes b to path atomically (creating its directory): a reader, or
// a crash, sees the old file or the new one, never half of one.
func Save(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := renameio.WriteFile(path, b, 0o600, renameio.WithTempDir(dir)); err != nil {
		return fmt.Errorf("write state %s: %w", path, err)
	}
	return nil
}

// Doc is one state document of a service: a file in its data directory
// (File), or, when agentfinder runs as a cluster, a document in the
// cluster's shared state (statefile/kvstate), so whichever node runs the
// service next starts from it.
type Doc interface {
	// Load reads the document into v; false when there is none (or it
	// did not parse: a warning goes to log).
	Load(v any, log *slog.Logger) (bool, error)
	// Save replaces the document with b, atomically.
	Save(b []byte) error
	// String names the document for logs.
	String() string
}

// File is a Doc kept in the file at its path (Load and Save above).
type File string

// Load reads the file (see the package function Load).
func (f File) Load(v any, log *slog.Logger) (bool, error) { return Load(string(f), v, log) }

// Save writes the file atomically (see the package function Save).
func (f File) Save(b []byte) error { return Save(string(f), b) }

func (f File) String() string { return string(f) }
