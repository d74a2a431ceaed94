package scheduler

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfinder/agentfinder/crawler/statefile"
)

// Clock gives the scheduler the time; tests inject a fake.
type Clock interface {
	Now() time.Time
	// After is time.After: a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Config configures a Scheduler. The zero value of each field has a usable default.
type Config struct {
	// Schedule is the recrawl schedule in robfig/cron syntax: a standard
	// 5-field spec or a descriptor such as "@every 1h" (the default) or "@daily".
	Schedule string
	// Jitter is the fraction of the schedule's interval over which seeds are
	// spread (default 0.1), capped by MaxJitter (default 10m). Each seed's
	// offset is a stable hash of the seed, so a restart keeps the spread.
	Jitter    float64
	MaxJitter time.Duration
	// MinRefresh is the floor for refreshes that catalogs ask for (default 1m):
	// a max-age of 5 s still waits MinRefresh.
	MinRefresh time.Duration
	// BackoffBase is the delay after the first consecutive failure (default:
	// the schedule's interval); it doubles with each further failure up to
	// MaxBackoff (default 24h, at least the interval).
	BackoffBase time.Duration
	MaxBackoff  time.Duration
	// Concurrency bounds seeds crawled at once (default 2).
	Concurrency int
	// StatePath is the JSON state file; "" keeps state in memory only.
	StatePath string
	// State, when set, keeps the state instead of StatePath (a cluster
	// keeps it in its shared state, statefile/kvstate).
	State statefile.Doc
	// SaveInterval coalesces state file writes: after a change the file is
	// written at most once per interval (default 2s, wall-clock time; Stop
	// always writes). Negative writes after every change. With many seeds
	// and the crawler's validators in Extra, this keeps the disk quiet.
	SaveInterval time.Duration
	// Seeds loads the seed list; called by Start and Reload. Nil means the
	// list set with SetSeeds only.
	Seeds func() ([]string, error)
	// Extra, when set, is persisted with the state (for example the
	// crawler's conditional-GET validators).
	Extra Persister
	// Clock defaults to the real clock.
	Clock Clock
	// Logger defaults to discarding.
	Logger *slog.Logger
	// Metrics, when set, receives the scheduler's Prometheus instruments
	// (agentfinder_scheduler_*: seeds by last outcome, runs by outcome,
	// crawls running, next-run lag); nil records nothing. New fails if the
	// names are taken in it.
	Metrics prometheus.Registerer
}

// Persister is extra state saved in the scheduler's state file.
type Persister interface {
	// MarshalState returns the state to save (JSON).
	MarshalState() ([]byte, error)
	// UnmarshalState restores what MarshalState returned before a restart.
	UnmarshalState([]byte) error
}

// stateDoc is where the state is kept: State, else the file at StatePath,
// else nowhere (nil).
func (c *Config) stateDoc() statefile.Doc {
	switch {
	case c.State != nil:
		return c.State
	case c.StatePath != "":
		return statefile.File(c.StatePath)
	}
	return nil
}
