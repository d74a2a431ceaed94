package crawler

import (
	"context"
	"sync"

	"github.com/gocolly/colly/v2"
	"golang.org/x/sync/semaphore"
)

// hostLimit is one host's per-host limit within a session: the collector
// whose LimitRule holds its parallelism and delay, and as many slots. Every
// request the session sends to the host holds one slot while colly sends it
// (its delay after it included), and Visitor.Hold hands slots to requests
// sent outside colly, so both count against the one limit.
type hostLimit struct {
	col   *colly.Collector
	slots *semaphore.Weighted
	size  int64
}

func newHostLimit(col *colly.Collector, size int) *hostLimit {
	return &hostLimit{col: col, slots: semaphore.NewWeighted(int64(size)), size: int64(size)}
}

// take waits for n of the host's slots (none for a nil limit: an unlimited
// host) and returns the function that gives them back, once however often
// it is called. An n above the limit is ErrHostLimit at once; ctx ends the
// wait.
func (l *hostLimit) take(ctx context.Context, n int64) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	if n > l.size {
		return nil, ErrHostLimit
	}
	if err := l.slots.Acquire(ctx, n); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { l.slots.Release(n) }) }, nil
}
