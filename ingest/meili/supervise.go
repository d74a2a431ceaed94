package meili

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// supervise waits for p to exit; an exit nobody asked for is logged and
// followed by restarts with backoff until one is healthy (then it watches
// that one) or MaxRestarts in a row have failed (then it gives up). It
// returns when ctx ends (Stop, Kill) and closes done.
func (m *Managed) supervise(ctx context.Context, p *process, done chan struct{}) {
	defer close(done)
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.exit:
		}
		ran := time.Since(p.started)
		m.mu.Lock()
		if m.proc != p { // Stop or Kill took it: an exit asked for
			m.mu.Unlock()
			return
		}
		m.proc = nil
		m.mu.Unlock()
		m.metrics.exited()
		if ran >= m.cfg.StableAfter {
			failures = 0
		}
		m.cfg.Logger.Error("managed meilisearch exited", "pid", p.cmd.Process.Pid, "exit", exitText(p.err), "ran", ran.Round(time.Millisecond), "log", m.logTail())
		next, ok := m.restart(ctx, &failures, fmt.Sprintf("exited (%s) after %s", exitText(p.err), ran.Round(time.Second)))
		if !ok {
			return
		}
		p = next
	}
}

// restart starts the process again, with backoff, counting failed attempts
// in *failures; false when ctx ended or the attempts ran out.
func (m *Managed) restart(ctx context.Context, failures *int, why string) (*process, bool) {
	for {
		*failures++
		if m.cfg.MaxRestarts < 0 || *failures > m.cfg.MaxRestarts {
			m.setState(stateFailed, fmt.Sprintf("gave up after %d failed restarts in a row; last: %s", *failures-1, why))
			m.cfg.Logger.Error("managed meilisearch not restarted: giving up", "failures", *failures-1, "last", why)
			return nil, false
		}
		wait := min(m.cfg.RestartBackoff<<(*failures-1), maxRestartBackoff)
		m.setState(stateRestarting, fmt.Sprintf("%s; restart %d of %d in %s", why, *failures, m.cfg.MaxRestarts, wait))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, false
		case <-t.C:
		}
		p, err := m.launch(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, false
			}
			why = err.Error()
			m.cfg.Logger.Warn("managed meilisearch restart failed", "attempt", *failures, "err", err)
			continue
		}
		m.mu.Lock()
		if ctx.Err() != nil { // stopped while it started
			m.mu.Unlock()
			p.halt(false)
			return nil, false
		}
		m.proc = p
		m.restarts++
		m.state, m.note = stateRunning, fmt.Sprintf("restarted %d times; last: %s", m.restarts, why)
		m.mu.Unlock()
		m.metrics.restarted()
		m.metrics.setUp(true)
		m.cfg.Logger.Info("managed meilisearch restarted", "pid", p.cmd.Process.Pid, "attempt", *failures)
		return p, true
	}
}

func (m *Managed) setState(state, note string) {
	m.mu.Lock()
	m.state, m.note = state, note
	m.mu.Unlock()
	m.metrics.setUp(state == stateRunning)
}

// exitText says how a process ended.
func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// Health says how the process is ("running", "restarting: ...",
// "failed: ...", "stopped") and whether it can still recover on its own:
// false once the supervisor has given up, when only restarting the whole
// service can help.
func (m *Managed) Health() (state string, live bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	state = m.state
	if m.note != "" {
		state += ": " + m.note
	}
	return state, m.state != stateFailed
}

// PID is the running process's id, 0 when none runs.
func (m *Managed) PID() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc == nil {
		return 0
	}
	return m.proc.cmd.Process.Pid
}

// managedMetrics are the supervisor's Prometheus instruments; a nil
// *managedMetrics records nothing.
type managedMetrics struct {
	up       prometheus.Gauge
	exits    prometheus.Counter
	restarts prometheus.Counter
}

func newManagedMetrics(reg prometheus.Registerer) (*managedMetrics, error) {
	if reg == nil {
		return nil, nil
	}
	mm := &managedMetrics{
		up: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentfinder_meili_managed_up",
			Help: "1 while the managed Meilisearch process runs healthy, 0 while it is down, restarting, given up or stopped.",
		}),
		exits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentfinder_meili_managed_exits_total",
			Help: "Unexpected exits of the managed Meilisearch process.",
		}),
		restarts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentfinder_meili_managed_restarts_total",
			Help: "Successful restarts of the managed Meilisearch process after an unexpected exit.",
		}),
	}
	for _, c := range []prometheus.Collector{mm.up, mm.exits, mm.restarts} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("managed meilisearch: register metrics: %w", err)
		}
	}
	return mm, nil
}

func (mm *managedMetrics) setUp(up bool) {
	if mm == nil {
		return
	}
	if up {
		mm.up.Set(1)
		return
	}
	mm.up.Set(0)
}

func (mm *managedMetrics) exited() {
	if mm != nil {
		mm.exits.Inc()
	}
}

func (mm *managedMetrics) restarted() {
	if mm != nil {
		mm.restarts.Inc()
	}
}
