package indexnow

import (
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"
)

// hostBudgets is a token bucket per host (golang.org/x/time/rate), the
// least recently pinged forgotten beyond a bound (and then starting again
// with a full bucket).
type hostBudgets struct {
	every rate.Limit
	burst int
	mu    sync.Mutex
	hosts *lru.Cache[string, *rate.Limiter]
}

func newHostBudgets(perMinute float64, burst, maxHosts int) (*hostBudgets, error) {
	hosts, err := lru.New[string, *rate.Limiter](maxHosts)
	if err != nil {
		return nil, err
	}
	return &hostBudgets{every: rate.Limit(perMinute / 60), burst: burst, hosts: hosts}, nil
}

// take spends one token of host's budget at now: 0 when there was one, or
// how long until there will be (nothing spent).
func (b *hostBudgets) take(host string, now time.Time) time.Duration {
	b.mu.Lock()
	lim, ok := b.hosts.Get(host)
	if !ok {
		lim = rate.NewLimiter(b.every, b.burst)
		b.hosts.Add(host, lim)
	}
	b.mu.Unlock()
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d
	}
	return 0
}
