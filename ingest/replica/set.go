package replica

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	changed chan struct{}

	// view is who serves reads, rebuilt whenever a member's state changes,
	// so a search takes no lock and allocates nothing to pick a replica.
	view atomic.Pointer[readView]
	next atomic.Uint64 // round robin over the read set
}

// readView is who serves reads: the read set, and the healthy replicas,
// most advanced first (stale beats down, when the read set is empty).
type readView struct {
	in, healthy []target
}

// target is a replica with its base URL parsed once.
type target struct {
	Replica
	base *url.URL // nil when Replica.URL does not parse (requests then fail)
}

type member struct {
	target
	healthy bool
	applied uint64    // last sequence its applier finished
	moved   time.Time // when applied last grew
	pending bool      // it has enqueued or processing tasks
	// settled is how far the replica had applied when a check last found
	// nothing pending: a write applied later may still be enqueued, so
	// it is not known to be finished until a later check says so.
	settled uint64
	reading bool
}

// busy reports whether the replica may still be working on a write it was
// given: tasks pending, or writes applied since a check found none.
func (m *member) busy() bool { return m.pending || m.settled < m.applied }

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
		base, err := url.Parse(strings.TrimRight(r.URL, "/"))
		if err != nil || base.Host == "" {
			s.log.Error("replica URL does not parse", "replica", r.Name, "url", r.URL, "err", err)
			base = nil
		}
		s.members = append(s.members, &member{target: target{Replica: r, base: base}, moved: time.Now()})
	}
	s.view.Store(&readView{})
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
		applied          uint64 // as known before the tasks were asked for
	}
	states := make([]state, len(s.members))
	s.mu.RLock()
	for i, m := range s.members {
		states[i].applied = m.applied
	}
	s.mu.RUnlock()
	var wg sync.WaitGroup
	for i, m := range s.members {
		wg.Go(func() {
			st := state{applied: states[i].applied}
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
		if st.healthy && !st.pending {
			m.settled = max(m.settled, st.applied)
		}
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
	s.rebuild()
	if changed {
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

// rebuild recomputes the read view from the members. s.mu is held.
func (s *Set) rebuild() {
	v := &readView{}
	var best uint64
	for _, m := range s.members {
		if m.reading {
			v.in = append(v.in, m.target)
		}
		if m.healthy {
			if m.applied >= best {
				best = m.applied
				v.healthy = append([]target{m.target}, v.healthy...)
			} else {
				v.healthy = append(v.healthy, m.target)
			}
		}
	}
	s.view.Store(v)
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
	Pending bool   `json:"pending"` // it has tasks enqueued or processing, or may have (writes applied since the last check)
	Reading bool   `json:"reading"`
}

// Status returns every replica's state, in configuration order.
func (s *Set) Status() []Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Status, len(s.members))
	for i, m := range s.members {
		out[i] = Status{Name: m.Name, URL: m.URL, Healthy: m.healthy, Applied: m.applied,
			Lag: s.logEnd - min(m.applied, s.logEnd), Pending: m.busy(), Reading: m.reading}
	}
	return out
}

// pick returns the replicas to try for a read, in order from index k
// (wrapping around): the read set, starting with the next in turn, or,
// when none is caught up, the healthy ones, most advanced first.
func (s *Set) pick() (ts []target, k int) {
	v := s.view.Load()
	if len(v.in) == 0 {
		return v.healthy, 0
	}
	return v.in, int(s.next.Add(1) % uint64(len(v.in)))
}

// readers returns the replicas pick would try, in that order.
func (s *Set) readers() []Replica {
	ts, k := s.pick()
	out := make([]Replica, 0, len(ts))
	for i := range ts {
		out = append(out, ts[(k+i)%len(ts)].Replica)
	}
	return out
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
		if m.applied < seq || m.busy() {
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
		s.rebuild()
		s.mu.Unlock()
	}
}
