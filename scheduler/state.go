package scheduler

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/renameio/v2"
)

// stateVersion is bumped when the file's shape changes incompatibly; a file
// of another version is ignored (a fresh start), not an error.
const stateVersion = 1

type stateFile struct {
	Version int             `json:"version"`
	Seeds   []SeedState     `json:"seeds"`
	Extra   json.RawMessage `json:"extra,omitempty"`
}

// load restores seed state (and Extra) from the state file. Seeds restored
// here are dropped by the first SetSeeds unless still listed.
func (s *Scheduler) load() error {
	if s.cfg.StatePath == "" {
		return nil
	}
	b, err := os.ReadFile(s.cfg.StatePath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("scheduler: read state: %w", err)
	}
	var f stateFile
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("scheduler: parse state %s: %w", s.cfg.StatePath, err)
	}
	if f.Version != stateVersion {
		s.log.Warn("state file of another version ignored", "path", s.cfg.StatePath, "version", f.Version)
		return nil
	}
	for _, st := range f.Seeds {
		if st.Seed == "" {
			continue
		}
		s.seeds[st.Seed] = &seed{SeedState: st}
	}
	if len(f.Extra) > 0 && s.cfg.Extra != nil {
		if err := s.cfg.Extra.UnmarshalState(f.Extra); err != nil {
			s.log.Warn("extra state ignored", "err", err)
		}
	}
	s.log.Info("state loaded", "path", s.cfg.StatePath, "seeds", len(f.Seeds))
	return nil
}

// save writes the state file atomically: a temporary file in the same
// directory, synced, then renamed over the old one.
func (s *Scheduler) save() error {
	if s.cfg.StatePath == "" {
		return nil
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	f := stateFile{Version: stateVersion}
	s.mu.Lock()
	for _, sd := range s.seeds {
		f.Seeds = append(f.Seeds, sd.SeedState)
	}
	s.mu.Unlock()
	sortStates(f.Seeds)
	if s.cfg.Extra != nil {
		extra, err := s.cfg.Extra.MarshalState()
		if err != nil {
			return fmt.Errorf("scheduler: marshal extra state: %w", err)
		}
		f.Extra = extra
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("scheduler: marshal state: %w", err)
	}
	return writeAtomic(s.cfg.StatePath, b)
}

func sortStates(st []SeedState) {
	slices.SortFunc(st, func(a, b SeedState) int { return strings.Compare(a.Seed, b.Seed) })
}

func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("scheduler: create %s: %w", dir, err)
	}
	if err := renameio.WriteFile(path, b, 0o600, renameio.WithTempDir(dir)); err != nil {
		return fmt.Errorf("scheduler: write state: %w", err)
	}
	return nil
}

// ParseSeeds reads a seeds list: one domain or URL per line; blank lines and
// '#' comments (a whole line, or after whitespace) are skipped; duplicates
// are dropped, order kept.
func ParseSeeds(r io.Reader) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "#"); i == 0 || (i > 0 && (line[i-1] == ' ' || line[i-1] == '\t')) {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" || seen[line] {
			continue
		}
		seen[line] = true
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read seeds: %w", err)
	}
	return out, nil
}

// SeedsFrom returns a Config.Seeds loader: the fixed seeds followed by those
// in file (re-read on every call; "" for none), without duplicates.
func SeedsFrom(fixed []string, file string) func() ([]string, error) {
	return func() ([]string, error) {
		var out []string
		seen := map[string]bool{}
		add := func(list []string) {
			for _, s := range list {
				s = strings.TrimSpace(s)
				if s != "" && !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
		}
		add(fixed)
		if file != "" {
			f, err := os.Open(file)
			if err != nil {
				return nil, fmt.Errorf("open seeds file: %w", err)
			}
			defer f.Close()
			list, err := ParseSeeds(f)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			add(list)
		}
		return out, nil
	}
}
