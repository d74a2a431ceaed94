package replica

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfinder/agentfinder/ingest/writelog"
)

// SetConfig configures a Set.
type SetConfig struct {
	// Replicas are the Meilisearch servers; at least one.
	Replicas []Replica
	// JS and Progress (see Progress) tell how far each replica got.
	JS       jetstream.JetStream
	Progress jetstream.KeyValue
	// HTTP talks to the replicas.
	HTTP *http.Client
	// MaxLag is how many log messages a replica may be behind and still
	// serve reads; default 1000.
	MaxLag uint64
	// MaxStall takes a replica that is behind out of reads once its
	// applier made no progress for this long (a dead applier); default 2s.
	MaxStall time.Duration
	// Interval is how often replicas are checked; default 250ms.
	Interval time.Duration
	// Logger receives changes of the read set; nil discards.
	Logger *slog.Logger
}

// Set watches a set of replicas. Create it with NewSet and run Watch.
type Set struct {
	cfg SetConfig
	log *slog.Logger

	mu      sync.RWMutex
	members []*member
	logEnd  uint64 // the log's last sequence
	next    int    // round robin over the read set
	changed chan struct{}
}

type member struct {
	Replica
	healthy bool
	applied uint64    // last sequence its applier finished
	moved   time.Time // when applied last grew
	pending bool      // it has enqueued or processing tasks
	reading bool
}

// NewSet returns a Set over cfg.Replicas; call Watch to keep it current.
func NewSet(cfg SetConfig) *Set {
	if cfg.MaxLag == 0 {
		cfg.MaxLag = 1000
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 250 * time.Millisecond
	}
	if cfg.MaxStall <= 0 {
		cfg.MaxStall = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Set{cfg: cfg, log: cfg.Logger.With("component", "replicas"), changed: make(chan struct{})}
	for _, r := range cfg.Replicas {
		s.members = append(s.members, &member{Replica: r, moved: time.Now()})
	}
	return s
}

// Watch checks the replicas every Interval, and follows the appliers'
// progress as they report it, until ctx ends.
func (s *Set) Watch(ctx context.Context) {
	if s.cfg.Progress != nil {
		if w, err := s.cfg.Progress.WatchAll(ctx); err == nil {
			go s.follow(w)
		}
	}
	tick := time.NewTicker(s.cfg.Interval)
	defer tick.Stop()
	for {
		s.check(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// check refreshes the log's end and each replica's health, progress and
// pending tasks, then the read set.
func (s *Set) check(ctx context.Context) {
	end := s.logEndNow(ctx)
	type state struct {
		healthy, pending bool
	}
	states := make([]state, len(s.members))
	var wg sync.WaitGroup
	for i, m := range s.members {
		wg.Go(func() {
			var st state
			var tasks struct {
				Total int `json:"total"`
			}
			err := getJSON(ctx, s.cfg.HTTP, m.Replica, "/tasks?statuses=enqueued,processing&limit=1", &tasks)
			st.healthy = err == nil
			st.pending = tasks.Total > 0
			states[i] = st
		})
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if end > 0 || s.logEnd == 0 {
		s.logEnd = max(s.logEnd, end)
	}
	changed := false
	for i, m := range s.members {
		st := states[i]
		m.healthy, m.pending = st.healthy, st.pending
		lag := s.logEnd - min(m.applied, s.logEnd)
		stalled := lag > 0 && time.Since(m.moved) > s.cfg.MaxStall
		reading := m.healthy && lag <= s.cfg.MaxLag && !stalled
		if reading != m.reading {
			s.log.Info("replica read state", "replica", m.Name, "reading", reading, "healthy", m.healthy,
				"applied", m.applied, "log_end", s.logEnd)
			m.reading = reading
			changed = true
		}
	}
	if changed {
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

func (s *Set) logEndNow(ctx context.Context) uint64 {
	if s.cfg.JS == nil {
		return 0
	}
	st, err := s.cfg.JS.Stream(ctx, writelog.Stream)
	if err != nil {
		return 0
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0
	}
	return info.State.LastSeq
}

// Status is one replica's state as the Set last saw it.
type Status struct {
	Name    string `json:"name"`
	URL     string `json:"url"`
	Healthy bool   `json:"healthy"`
	Applied uint64 `json:"applied"`
	Lag     uint64 `json:"lag"`
	Pending bool   `json:"pending"` // it has tasks enqueued or processing
	Reading bool   `json:"reading"`
}

// Status returns every replica's state, in configuration order.
func (s *Set) Status() []Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Status, len(s.members))
	for i, m := range s.members {
		out[i] = Status{Name: m.Name, URL: m.URL, Healthy: m.healthy, Applied: m.applied,
			Lag: s.logEnd - min(m.applied, s.logEnd), Pending: m.pending, Reading: m.reading}
	}
	return out
}

// readers returns the replicas that serve reads, starting with the next in
// turn; when none is caught up it falls back to the healthy ones, most
// advanced first (stale beats down).
func (s *Set) readers() []Replica {
	s.mu.Lock()
	defer s.mu.Unlock()
	var in, healthy []Replica
	var best uint64
	for _, m := range s.members {
		if m.reading {
			in = append(in, m.Replica)
		}
		if m.healthy {
			if m.applied >= best {
				best = m.applied
				healthy = append([]Replica{m.Replica}, healthy...)
			} else {
				healthy = append(healthy, m.Replica)
			}
		}
	}
	if len(in) == 0 {
		return healthy
	}
	s.next++
	k := s.next % len(in)
	return append(in[k:], in[:k]...)
}

// applied returns how far replica name got, as last seen.
func (s *Set) applied(name string) uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, m := range s.members {
		if m.Name == name {
			return m.applied
		}
	}
	return 0
}

// ErrNoReplica means no replica is healthy.
var ErrNoReplica = errors.New("no Meilisearch replica is available")

// WaitCaughtUp waits until every replica in the read set applied the log
// up to seq and finished its tasks, and at least one replica did: a new
// index writer calls it before it reads the index, so it reads what the
// previous writer wrote.
func (s *Set) WaitCaughtUp(ctx context.Context, seq uint64) error {
	for {
		s.check(ctx)
		if s.caughtUp(seq) {
			return nil
		}
		t := time.NewTimer(s.cfg.Interval / 5)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (s *Set) caughtUp(seq uint64) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, m := range s.members {
		if !m.reading {
			continue
		}
		if m.applied < seq || m.pending {
			return false
		}
		n++
	}
	return n > 0
}

// follow applies the appliers' progress reports until w stops.
func (s *Set) follow(w jetstream.KeyWatcher) {
	defer w.Stop()
	for e := range w.Updates() {
		if e == nil || e.Operation() != jetstream.KeyValuePut {
			continue
		}
		seq, err := strconv.ParseUint(string(e.Value()), 10, 64)
		if err != nil {
			continue
		}
		s.mu.Lock()
		for _, m := range s.members {
			if m.Name == e.Key() && seq > m.applied {
				m.applied, m.moved = seq, time.Now()
			}
		}
		s.mu.Unlock()
	}
}
