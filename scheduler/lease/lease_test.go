package lease_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfinder/agentfinder/scheduler/lease"
	"github.com/agentfinder/agentfinder/scheduler/natsnode"
	"github.com/agentfinder/agentfinder/scheduler/natsnode/natstest"
)

const ttl = 800 * time.Millisecond

// startJS runs one embedded JetStream node for the test and returns a
// fresh connection's JetStream API for each call of the returned function.
func startJS(t *testing.T) func() (jetstream.JetStream, func()) {
	t.Helper()
	node := natstest.Node(t)
	return func() (jetstream.JetStream, func()) {
		nc, err := node.Connect("lease-test")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := natsnode.JetStream(nc)
		if err != nil {
			t.Fatal(err)
		}
		return js, nc.Close
	}
}

func bucket(t *testing.T, js jetstream.JetStream) jetstream.KeyValue {
	t.Helper()
	kv, err := lease.Bucket(t.Context(), js, "", ttl, 1)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// terms records every term as it starts, and checks that no two are valid
// at once.
type terms struct {
	mu    sync.Mutex
	all   []*lease.Term
	who   []string
	won   chan string
	wrong []string
}

func newTerms() *terms { return &terms{won: make(chan string, 16)} }

func (r *terms) lead(name string) func(ctx context.Context, t *lease.Term) {
	return func(ctx context.Context, t *lease.Term) {
		r.mu.Lock()
		for i, old := range r.all {
			if old.Valid() {
				r.wrong = append(r.wrong, r.who[i]+" still valid when "+name+" won")
			}
			if old.Token >= t.Token {
				r.wrong = append(r.wrong, "token did not grow")
			}
		}
		r.all = append(r.all, t)
		r.who = append(r.who, name)
		r.mu.Unlock()
		r.won <- name
		<-ctx.Done()
	}
}

func (r *terms) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.wrong {
		t.Error(w)
	}
}

func waitWin(t *testing.T, r *terms, within time.Duration) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	select {
	case name := <-r.won:
		return name, time.Since(start)
	case <-time.After(within):
		t.Fatalf("no holder within %s", within)
		return "", 0
	}
}

func TestOneHolderAndHandOverOnRelease(t *testing.T) {
	connect := startJS(t)
	r := newTerms()
	cancels := map[string]context.CancelFunc{}
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b", "c"} {
		js, _ := connect()
		ctx, cancel := context.WithCancel(t.Context())
		cancels[name] = cancel
		wg.Go(func() {
			if err := lease.Run(ctx, lease.Config{KV: bucket(t, js), Key: "crawl", Holder: name, TTL: ttl}, r.lead(name)); err != nil {
				t.Error(err)
			}
		})
	}
	first, _ := waitWin(t, r, 5*time.Second)
	// Renewals keep it: nobody else wins for several TTLs.
	select {
	case other := <-r.won:
		t.Fatalf("%s won while %s held the lease", other, first)
	case <-time.After(3 * ttl):
	}
	cancels[first]() // graceful: releases at once
	second, took := waitWin(t, r, 5*time.Second)
	if second == first {
		t.Fatalf("the released holder won again")
	}
	if took > ttl {
		t.Errorf("hand-over after release took %s, want well under the TTL %s", took, ttl)
	}
	for _, c := range cancels {
		c()
	}
	wg.Wait()
	r.check(t)
}

func TestCrashedHolderIsReplacedWithinTwoTTLs(t *testing.T) {
	connect := startJS(t)
	r := newTerms()
	jsA, closeA := connect()
	jsB, _ := connect()
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = lease.Run(t.Context(), lease.Config{KV: bucket(t, jsA), Key: "crawl", Holder: "a", TTL: ttl}, r.lead("a"))
	})
	if name, _ := waitWin(t, r, 5*time.Second); name != "a" {
		t.Fatalf("%s won first", name)
	}
	wg.Go(func() {
		_ = lease.Run(t.Context(), lease.Config{KV: bucket(t, jsB), Key: "crawl", Holder: "b", TTL: ttl}, r.lead("b"))
	})
	closeA() // a's renewals fail from now on, as if its machine died
	name, took := waitWin(t, r, 5*time.Second)
	if name != "b" {
		t.Fatalf("%s won after a crashed", name)
	}
	if took > 2*ttl {
		t.Errorf("take-over took %s, want at most 2x the TTL %s", took, ttl)
	}
	r.check(t) // a's term had ended by its local deadline before b won
}

// pausedKV holds renewals while paused, as a SIGSTOP would.
type pausedKV struct {
	jetstream.KeyValue
	mu   sync.Mutex
	gate chan struct{}
}

func (p *pausedKV) pause() {
	p.mu.Lock()
	p.gate = make(chan struct{})
	p.mu.Unlock()
}

func (p *pausedKV) resume() {
	p.mu.Lock()
	close(p.gate)
	p.gate = nil
	p.mu.Unlock()
}

func (p *pausedKV) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	p.mu.Lock()
	g := p.gate
	p.mu.Unlock()
	if g != nil {
		<-g
	}
	return p.KeyValue.Update(context.WithoutCancel(ctx), key, value, rev)
}

func TestPausedHolderStopsBeforeTakeOverAndLosesOnResume(t *testing.T) {
	connect := startJS(t)
	r := newTerms()
	jsA, _ := connect()
	jsB, _ := connect()
	pa := &pausedKV{KeyValue: bucket(t, jsA)}
	lost := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = lease.Run(t.Context(), lease.Config{KV: pa, Key: "crawl", Holder: "a", TTL: ttl}, func(ctx context.Context, term *lease.Term) {
			r.lead("a")(ctx, term)
			select {
			case lost <- context.Cause(ctx):
			default:
			}
		})
	})
	waitWin(t, r, 5*time.Second)
	pa.pause()
	wg.Go(func() {
		_ = lease.Run(t.Context(), lease.Config{KV: bucket(t, jsB), Key: "crawl", Holder: "b", TTL: ttl}, r.lead("b"))
	})
	if name, _ := waitWin(t, r, 5*time.Second); name != "b" {
		t.Fatalf("%s won while a was paused", name)
	}
	select {
	case cause := <-lost:
		if cause != lease.ErrLost {
			t.Errorf("a's term ended with %v, want lease.ErrLost", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a's term did not end")
	}
	pa.resume() // a's pending renewal is refused: b holds the key
	select {
	case name := <-r.won:
		t.Fatalf("%s won while b held the lease", name)
	case <-time.After(2 * ttl):
	}
	r.check(t)
}
