package scheduler

import (
	"slices"
	"time"
)

// Trigger makes the named seeds (all seeds when none are named) due now,
// ignoring backoff; a seed already running is not started twice. It returns
// the seeds it triggered; unknown names are ignored.
func (s *Scheduler) Trigger(names ...string) []string {
	s.mu.Lock()
	var done []string
	if len(names) == 0 {
		for name := range s.seeds {
			names = append(names, name)
		}
	}
	for _, name := range names {
		if sd, ok := s.seeds[name]; ok {
			sd.Next = time.Time{}
			sd.manual = true
			done = append(done, name)
		}
	}
	s.mu.Unlock()
	slices.Sort(done)
	s.poke()
	return done
}

// RunNow crawls target ahead of the schedule, ignoring backoff. A seed is
// made due now, as by Trigger; any other target (a catalog URL, say) is
// crawled once without joining the seed list or its state. On-demand runs
// start before due seeds, within the concurrency bound. Requests fold
// together: a target already waiting to start is not queued again
// (RunNow returns false), and a target being crawled runs once more after
// that run, however often it was asked for meanwhile (so a change made
// after the running crawl fetched it is still seen).
func (s *Scheduler) RunNow(target string) bool {
	if target == "" {
		return false
	}
	s.mu.Lock()
	queued := false
	if sd, ok := s.seeds[target]; ok {
		if !sd.manual {
			sd.Next = time.Time{}
			sd.manual = true
			queued = true
		}
	} else if !s.once[target] {
		s.once[target] = true
		queued = true
	}
	s.mu.Unlock()
	if queued {
		s.poke()
	}
	return queued
}

// dueOnce lists, sorted, the on-demand targets not running now. s.mu is held.
func (s *Scheduler) dueOnce() []string {
	var due []string
	for t := range s.once {
		if !s.inflight[t] {
			due = append(due, t)
		}
	}
	slices.Sort(due)
	return due
}

// Has reports whether name is a seed (as listed, exactly).
func (s *Scheduler) Has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.seeds[name]
	return ok
}
