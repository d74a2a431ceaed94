package scheduler

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// stateVersion is bumped when the file's shape changes incompatibly; a file
// of another version is ignored (a fresh start), not an error.
const stateVersion = 1

type stateFile struct {
	Version int         `json:"version"`
	Seeds   []SeedState `json:"seeds"`
	// Pending are the on-demand targets (RunNow) waiting or running: a
	// restart, or a new crawl leader reading the cluster's state, runs
	// them. A seed asked for is due now in its own state.
	Pending []string        `json:"pending,omitempty"`
	Extra   json.RawMessage `json:"extra,omitempty"`
}

// load restores seed state (and Extra) from the state file. Seeds restored
// here are dropped by the first SetSeeds unless still listed. A corrupt
// file is moved aside (statefile.Load): the seeds start from empty state. A
// seed's next run is never later than a run finishing now would set (see
// clampNext): state written under a clock far ahead does not keep it
// waiting once the clock is right.
func (s *Scheduler) load() error {
	doc := s.cfg.stateDoc()
	if doc == nil {
		return nil
	}
	var f stateFile
	found, err := doc.Load(&f, s.log)
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	if !found {
		return nil
	}
	if f.Version != stateVersion {
		s.log.Warn("state file of another version ignored", "path", doc.String(), "version", f.Version)
		return nil
	}
	now := s.clock.Now()
	for _, st := range f.Seeds {
		if st.Seed == "" {
			continue
		}
		s.clampNext(&st, now)
		s.seeds[st.Seed] = &seed{SeedState: st}
	}
	for _, t := range f.Pending {
		if _, isSeed := s.seeds[t]; !isSeed && t != "" {
			s.once[t] = true
		}
	}
	if len(f.Extra) > 0 && s.cfg.Extra != nil {
		if err := s.cfg.Extra.UnmarshalState(f.Extra); err != nil {
			s.log.Warn("extra state ignored", "err", err)
		}
	}
	s.log.Info("state loaded", "path", doc.String(), "seeds", len(f.Seeds), "pending", len(f.Pending))
	return nil
}

// save writes the state file atomically (statefile.Save).
func (s *Scheduler) save() error {
	doc := s.cfg.stateDoc()
	if doc == nil {
		return nil
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	f := stateFile{Version: stateVersion}
	s.mu.Lock()
	for _, sd := range s.seeds {
		f.Seeds = append(f.Seeds, sd.SeedState)
	}
	f.Pending = s.pendingOnce()
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
	if err := doc.Save(b); err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	return nil
}

// pendingOnce lists, sorted, the on-demand targets waiting or running (a
// target in flight that is no seed came from RunNow). s.mu is held.
func (s *Scheduler) pendingOnce() []string {
	var out []string
	for t := range s.once {
		out = append(out, t)
	}
	for t := range s.inflight {
		if _, isSeed := s.seeds[t]; !isSeed && !s.once[t] {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// Save writes the state now, past SaveInterval's coalescing. A caller that
// answers for a crawl it queued (RunNow, Trigger) and must not lose it
// calls it first, so the crawl survives a restart, or, with Config.State
// in a cluster, a change of crawl leader. (Queuing alone saves nothing:
// runs save the state when they finish.)
func (s *Scheduler) Save() error { return s.save() }

// clampNext bounds a restored seed's next run by the one a run of the same
// outcome finishing now would get (at most one schedule interval, or the
// backoff its failures earn, plus its jitter).
func (s *Scheduler) clampNext(st *SeedState, now time.Time) {
	if bound := s.next(st, now, now); st.Next.After(bound) {
		s.log.Warn("next run from the state file is too far ahead; brought forward", "seed", st.Seed, "next", st.Next, "now", bound)
		st.Next = bound
	}
}

func sortStates(st []SeedState) {
	slices.SortFunc(st, func(a, b SeedState) int { return strings.Compare(a.Seed, b.Seed) })
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
