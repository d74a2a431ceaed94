package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2"

	"github.com/agentfinder/agentfinder/normalize"
)

// entry is the prober's state for one record as one catalog lists it: two
// catalogs claiming one identifier may name different endpoints, and only
// the claim ingest holds may speak for the record.
type entry struct {
	Identifier string           `json:"identifier"`
	Catalog    string           `json:"catalog"`
	Targets    []Target         `json:"targets"`
	Health     normalize.Health `json:"health"`
	Failures   int              `json:"failures,omitempty"` // consecutive failed probes
	NextDue    time.Time        `json:"nextDue"`

	probing bool // a round has it in hand
}

// key is an entry's key in the prober's map.
func key(identifier, catalog string) string { return catalog + "\n" + identifier }

func (e *entry) key() string { return key(e.Identifier, e.Catalog) }

// stateFile is the persisted state: one JSON document.
type stateFile struct {
	Version int      `json:"version"`
	Records []*entry `json:"records"`
}

const stateVersion = 1

// loadState reads the state file at path; a missing file is an empty state.
func loadState(path string) ([]*entry, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("probe state: %w", err)
	}
	var f stateFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("probe state %s: %w", path, err)
	}
	if f.Version != stateVersion {
		return nil, fmt.Errorf("probe state %s: version %d, want %d", path, f.Version, stateVersion)
	}
	return f.Records, nil
}

// saveState writes records to path atomically (a temporary file renamed
// over it), so a crash leaves the old state or the new one, never half.
func saveState(path string, records []*entry) error {
	data, err := json.Marshal(stateFile{Version: stateVersion, Records: records})
	if err != nil {
		return fmt.Errorf("probe state: %w", err)
	}
	if err := renameio.WriteFile(path, data, 0o600, renameio.WithTempDir(filepath.Dir(path))); err != nil {
		return fmt.Errorf("probe state: %w", err)
	}
	return nil
}
