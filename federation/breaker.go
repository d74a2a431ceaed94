package federation

import (
	"sync"
	"time"
)

// breaker is one upstream's circuit breaker: it opens after a number of
// consecutive failures, lets one probe through after a cool-down
// (half-open), and closes on the probe's success.
type breaker struct {
	mu        sync.Mutex
	failures  int
	open      bool
	openUntil time.Time
	probing   bool
}

// allow reports whether a call may go out now; reason says why not.
func (b *breaker) allow(now time.Time) (ok bool, reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return true, ""
	}
	if now.Before(b.openUntil) {
		return false, "circuit open"
	}
	if b.probing {
		return false, "circuit half-open, probe in flight"
	}
	b.probing = true
	return true, ""
}

// done records a call's result and reports whether the circuit changed
// state (opened, or closed after being open).
func (b *breaker) done(ok bool, now time.Time, threshold int, cooldown time.Duration) (changed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ok {
		changed = b.open
		b.failures, b.open, b.probing = 0, false, false
		return changed
	}
	b.failures++
	if b.probing || b.failures >= threshold {
		changed = !b.open
		b.open, b.probing = true, false
		b.openUntil = now.Add(cooldown)
	}
	return changed
}

// idle reports a breaker holding nothing worth remembering.
func (b *breaker) idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.open && !b.probing && b.failures == 0
}

// release ends a permitted call that never went out (the budget ran out
// first): it counts as neither success nor failure.
func (b *breaker) release() {
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

// upstreamState is what the Federator remembers per upstream across searches.
type upstreamState struct {
	breaker breaker

	mu    sync.Mutex
	shape shape // request shape the upstream accepted last
}

func (s *upstreamState) getShape() shape {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shape
}

func (s *upstreamState) setShape(sh shape) {
	s.mu.Lock()
	s.shape = sh
	s.mu.Unlock()
}
