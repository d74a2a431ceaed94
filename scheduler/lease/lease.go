// Package lease elects one holder at a time for a named job (the crawl, the
// applier of one index replica, later one crawl partition each) through a
// key in a JetStream key-value bucket.
//
// The bucket's TTL is the lease TTL: the key disappears when its holder
// stops renewing it, and anyone may then create it again. A holder renews
// by compare-and-set on the key's revision, so two holders can never both
// renew. Each holder also keeps a local deadline, TTL minus a margin counted
// from the moment it sent its last successful renewal: the server's copy
// cannot expire before that, so a holder that was paused (SIGSTOP, a long
// GC, a frozen VM) finds its deadline passed and stops before anyone else
// can hold the lease. The revision at which the key was created is the
// fencing token of the term: it only grows, and writers carry it so that a
// stale holder's writes can be refused downstream. Releasing on shutdown
// deletes the key, so another node takes over at once.
//
// Keys are plain strings ("crawl", "apply.replica-a"); partitioned
// leadership is one key per partition ("crawl.p3") in the same bucket.
//
// lease imports the NATS JetStream client; it must not import anything of
// ours.
package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// DefaultBucket is the bucket leases live in.
const DefaultBucket = "agentfinder_leases"

// Bucket creates (or updates to ttl) the lease bucket and returns it. All
// leases in one bucket share its TTL.
func Bucket(ctx context.Context, js jetstream.JetStream, name string, ttl time.Duration, replicas int) (jetstream.KeyValue, error) {
	if name == "" {
		name = DefaultBucket
	}
	if replicas <= 0 {
		replicas = 1
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      name,
		Description: "agentfinder leases: one holder per key",
		TTL:         ttl,
		History:     1,
		Replicas:    replicas,
		Storage:     jetstream.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("lease bucket %s: %w", name, err)
	}
	return kv, nil
}

// Config says which lease to campaign for and how.
type Config struct {
	// KV is the lease bucket (see Bucket); its TTL must equal TTL.
	KV jetstream.KeyValue
	// Key names the lease.
	Key string
	// Holder names this campaigner in the key's value (for operators).
	Holder string
	// TTL is the bucket's TTL. Renewals go out every TTL/4; the local
	// deadline is TTL*3/4 after the last renewal was sent.
	TTL time.Duration
	// Logger receives lifecycle logs; nil discards.
	Logger *slog.Logger
}

// Term is one holder's tenure of a lease.
type Term struct {
	// Token is the fencing token: the key's revision when this term
	// began. Terms of one key have growing tokens.
	Token uint64
	// Key is the lease's key.
	Key string

	deadline atomic.Int64 // unix nanoseconds; 0 once ended
}

// Valid reports whether the term still holds at this instant: its local
// deadline has not passed and it has not ended. A writer checks it right
// before each write; the fencing token covers the time between the check
// and the write landing.
func (t *Term) Valid() bool {
	d := t.deadline.Load()
	return d != 0 && time.Now().UnixNano() < d
}

// Deadline is the local deadline of the term (zero once ended).
func (t *Term) Deadline() time.Time {
	d := t.deadline.Load()
	if d == 0 {
		return time.Time{}
	}
	return time.Unix(0, d)
}

func (t *Term) end() { t.deadline.Store(0) }

// ErrLost is the cause of a term's context when the lease was lost (its
// renewal was refused or its local deadline passed).
var ErrLost = errors.New("lease lost")

type value struct {
	Holder   string    `json:"holder"`
	Campaign string    `json:"campaign"`
	Renewed  time.Time `json:"renewed"`
}

// Run campaigns for the lease until ctx ends. Each time it wins, it calls
// lead with the term and a context that ends (cause ErrLost) as soon as the
// lease is lost or its local deadline passes; lead must return promptly
// then. Run renews the lease while lead runs, and campaigns again after
// lead returned (the key is released then). When ctx ends, lead's context
// ends too but the term stays valid until lead returned, so a leader can
// finish its writes; then Run deletes the key (another campaigner takes
// over at once) and returns nil.
func Run(ctx context.Context, cfg Config, lead func(ctx context.Context, t *Term)) error {
	if cfg.KV == nil || cfg.Key == "" || cfg.TTL <= 0 {
		return errors.New("lease: bucket, key and TTL are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &campaign{cfg: cfg, id: nuid.Next(), log: cfg.Logger.With("component", "lease", "key", cfg.Key, "holder", cfg.Holder)}
	for {
		rev, sent, err := c.acquire(ctx)
		if err != nil {
			return nil // ctx ended
		}
		c.hold(ctx, rev, sent, lead)
		if ctx.Err() != nil {
			return nil
		}
	}
}

type campaign struct {
	cfg Config
	id  string // tells this campaign's renewals from another's of the same holder
	log *slog.Logger
}

func (c *campaign) value() []byte {
	b, _ := json.Marshal(value{Holder: c.cfg.Holder, Campaign: c.id, Renewed: time.Now().UTC()})
	return b
}

// acquire creates the key once it is free, polling every TTL/5 and trying
// at once when a watch shows it deleted. It returns the revision and when
// the winning request was sent, or ctx's error.
func (c *campaign) acquire(ctx context.Context) (uint64, time.Time, error) {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	freed := make(chan struct{}, 1)
	if w, err := c.cfg.KV.Watch(wctx, c.cfg.Key, jetstream.UpdatesOnly()); err == nil {
		go func() {
			for e := range w.Updates() {
				if e != nil && e.Operation() != jetstream.KeyValuePut {
					select {
					case freed <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	poll := c.cfg.TTL / 5
	for {
		sent := time.Now()
		rctx, cancel := context.WithTimeout(ctx, c.cfg.TTL/2)
		rev, err := c.cfg.KV.Create(rctx, c.cfg.Key, c.value())
		cancel()
		if err == nil {
			return rev, sent, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && ctx.Err() == nil {
			c.log.Debug("lease create failed", "err", err)
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, time.Time{}, ctx.Err()
		case <-freed:
			t.Stop()
		case <-t.C:
		}
	}
}

// hold runs lead for the term that began at revision rev and renews it
// until it is lost or lead returns. When ctx ends, lead's context is
// cancelled (cause context.Canceled) but the term stays valid, renewed,
// until lead returned: a leader shutting down finishes its last writes
// under its own token, then the key is deleted.
func (c *campaign) hold(ctx context.Context, rev uint64, sent time.Time, lead func(ctx context.Context, t *Term)) {
	term := &Term{Token: rev, Key: c.cfg.Key}
	term.deadline.Store(sent.Add(c.cfg.TTL - c.cfg.TTL/4).UnixNano())
	c.log.Info("lease won", "token", rev)
	lctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { cancel(context.Canceled) })
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		lead(lctx, term)
	}()
	lost := make(chan struct{})
	go c.watchdog(term, done, lost, cancel)
	cur := c.renew(term, rev, done, lost)
	term.end()
	cancel(ErrLost)
	<-done
	if cur != 0 {
		c.release(cur)
	}
}

// watchdog ends the term when its local deadline passes, even while a
// renewal is stuck on the network.
func (c *campaign) watchdog(term *Term, done <-chan struct{}, lost chan<- struct{}, cancel context.CancelCauseFunc) {
	for {
		d := term.Deadline()
		if d.IsZero() {
			return
		}
		wait := time.Until(d)
		if wait <= 0 {
			c.log.Warn("lease lost: local deadline passed", "token", term.Token)
			term.end()
			cancel(ErrLost)
			close(lost)
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-done:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// renew keeps the term alive every TTL/4 until it is lost (returns 0) or
// lead returns (returns the current revision, still held).
func (c *campaign) renew(term *Term, rev uint64, done, lost <-chan struct{}) uint64 {
	every := c.cfg.TTL / 4
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-lost:
			return 0
		case <-done:
			return rev
		case <-tick.C:
		}
		sent := time.Now()
		// A slow renewal still counts if it lands before the deadline.
		rctx, rcancel := context.WithTimeout(context.Background(), max(every, time.Until(term.Deadline())))
		next, err := c.cfg.KV.Update(rctx, c.cfg.Key, c.value(), rev)
		rcancel()
		switch {
		case err == nil:
			rev = next
			old := term.deadline.Load()
			if old == 0 || time.Now().UnixNano() >= old ||
				!term.deadline.CompareAndSwap(old, sent.Add(c.cfg.TTL-c.cfg.TTL/4).UnixNano()) {
				return rev // renewed too late: the term already ended; release the key
			}
		case isConflict(err):
			if cur, ok := c.ours(); ok {
				rev = cur // an earlier renewal that timed out had landed after all
				continue
			}
			c.log.Warn("lease lost: taken over", "token", term.Token, "err", err)
			return 0
		default:
			c.log.Warn("lease renewal failed", "token", term.Token, "err", err)
		}
	}
}

// ours returns the key's revision when its value was written by this
// campaign.
func (c *campaign) ours() (uint64, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.TTL/4)
	defer cancel()
	e, err := c.cfg.KV.Get(ctx, c.cfg.Key)
	if err != nil {
		return 0, false
	}
	var v value
	if json.Unmarshal(e.Value(), &v) != nil || v.Campaign != c.id {
		return 0, false
	}
	return e.Revision(), true
}

// isConflict reports whether a renewal was refused because the key changed
// (someone else holds it now, or it expired and is gone).
func isConflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists)
}

// release deletes the key if this campaign still holds it (at rev, or at
// a later revision a renewal cut short by shutdown wrote), so another
// campaigner takes over at once.
func (c *campaign) release(rev uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.TTL)
	defer cancel()
	if e, err := c.cfg.KV.Get(ctx, c.cfg.Key); err == nil && e.Revision() > rev {
		var v value
		if json.Unmarshal(e.Value(), &v) == nil && v.Campaign == c.id {
			rev = e.Revision()
		}
	}
	if err := c.cfg.KV.Delete(ctx, c.cfg.Key, jetstream.LastRevision(rev)); err != nil {
		c.log.Warn("lease release failed; it expires on its own", "err", err)
		return
	}
	c.log.Info("lease released")
}
