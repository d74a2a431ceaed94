package replica_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/ingest/replica"
	"github.com/agentfinder/agentfinder/scheduler/lease"
	"github.com/agentfinder/agentfinder/scheduler/natsnode"
)

// BenchmarkReplicaSearch compares search latency through a replica set of
// two (the Set's transport picks a caught-up replica per request) with
// searching each replica directly. Each round sends one query three ways
// (replica 0, the set, replica 1) in a rotating order, so all three see
// the same load; the set spreads its searches over both replicas, so its
// baseline is the two replicas' searches pooled. It reports the medians,
// their ratio (target at most 1.1x) and the means' ratio, and what the
// replica path adds on the client: each side's time outside the HTTP round
// trip (timed by a wrapper around the same kind of transport), the set's
// minus the direct one's.
func BenchmarkReplicaSearch(b *testing.B) {
	r := newRig(b, 2)
	c, _ := r.writer(1, 0)
	setup(b, c, "agents")
	for batch := range 4 {
		add(b, c, "agents", batch, 500)
	}
	r.caughtUp()
	var inDirect, inSet timedTransport
	direct := []meilisearch.ServiceManager{timedClient(r.reps[0], &inDirect), timedClient(r.reps[1], &inDirect)}
	set := replica.NewSet(replica.SetConfig{Replicas: r.reps, JS: r.js, Progress: r.progress,
		HTTP: &http.Client{Transport: &inSet}, Interval: 100 * time.Millisecond})
	ctx, stop := context.WithCancel(b.Context())
	defer stop()
	go set.Watch(ctx)
	if err := set.WaitCaughtUp(ctx, 0); err != nil {
		b.Fatal(err)
	}
	viaSet := meilisearch.New("http://replicas", meilisearch.WithCustomClient(&http.Client{Transport: set.Transport(nil), Timeout: 30 * time.Second}))
	queries := []string{"agent", "number 7", "batch 3", "agent 12 of batch 2", "number"}
	const n = 600
	var dirT, setT []time.Duration
	var dirTotal, setTotal time.Duration
	search := func(c meilisearch.ServiceManager, q string) time.Duration {
		start := time.Now()
		if _, err := c.Index("agents").Search(q, &meilisearch.SearchRequest{Limit: 10}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for range 50 { // warm both replicas' caches and connections
		search(direct[0], "agent")
		search(direct[1], "agent")
		search(viaSet, "agent")
	}
	inDirect.reset()
	inSet.reset()
	for b.Loop() {
		dirT, setT = dirT[:0], setT[:0]
		dirTotal, setTotal = 0, 0
		inDirect.reset()
		inSet.reset()
		for i := range n {
			q := queries[i%len(queries)]
			for k := range 3 {
				switch (i + k) % 3 {
				case 0, 1:
					d := search(direct[(i+k)%3], q)
					dirT, dirTotal = append(dirT, d), dirTotal+d
				case 2:
					d := search(viaSet, q)
					setT, setTotal = append(setT, d), setTotal+d
				}
			}
		}
	}
	dirP50, setP50 := median(dirT), median(setT)
	perDirect := float64(dirTotal-inDirect.total()) / float64(len(dirT))
	perSet := float64(setTotal-inSet.total()) / float64(len(setT))
	b.ReportMetric(float64(dirP50.Microseconds()), "direct-p50-us")
	b.ReportMetric(float64(setP50.Microseconds()), "set-p50-us")
	b.ReportMetric(float64(setP50)/float64(dirP50), "ratio-p50(target<=1.1)")
	b.ReportMetric((float64(setTotal)/float64(len(setT)))/(float64(dirTotal)/float64(len(dirT))), "ratio-mean")
	b.ReportMetric((perSet-perDirect)/1e3, "set-adds-us")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// timedTransport is a keep-alive transport without compression (as
// meili.NewHTTPClient builds it) that adds up the time its search round
// trips take, from the request to the response's end (the Set's health
// checks go through it too, and are not counted).
type timedTransport struct {
	once  sync.Once
	inner http.RoundTripper
	nanos atomic.Int64
}

func (t *timedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.once.Do(func() { t.inner = meili.NewHTTPClient(0).Transport })
	if !strings.HasSuffix(r.URL.Path, "/search") {
		return t.inner.RoundTrip(r)
	}
	start := time.Now()
	resp, err := t.inner.RoundTrip(r)
	if err != nil {
		t.nanos.Add(int64(time.Since(start)))
		return nil, err
	}
	resp.Body = &timedBody{ReadCloser: resp.Body, start: start, t: t}
	return resp, nil
}

func (t *timedTransport) total() time.Duration { return time.Duration(t.nanos.Load()) }
func (t *timedTransport) reset()               { t.nanos.Store(0) }

// timedBody stops its round trip's clock when the body is read to its end.
type timedBody struct {
	io.ReadCloser
	start time.Time
	t     *timedTransport
	done  bool
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.t.nanos.Add(int64(time.Since(b.start)))
	}
	return n, err
}

func timedClient(rep replica.Replica, t *timedTransport) meilisearch.ServiceManager {
	return meilisearch.New(rep.URL, meilisearch.WithCustomClient(&http.Client{Transport: t, Timeout: 30 * time.Second}),
		meilisearch.WithAPIKey(rep.APIKey))
}

// BenchmarkReplicaWrite compares document write throughput through the
// write log to one replica (append, apply with the sequence as task id,
// wait until the replica finished it) with writing the same documents to
// a Meilisearch directly and waiting for each task. It also reports two
// replicas, which index every write twice on this machine's cores. The
// three take turns batch by batch, in a rotating order, so they see the
// same load. Target: at least 0.7x for one replica.
//
// A writer waits until the replicas report the write applied: the applier
// reports each write as it is applied (it used to report at the end of a
// fetch, up to 500ms later, which cost a batch of 1000 documents about a
// third of its throughput).
func BenchmarkReplicaWrite(b *testing.B) {
	const batches, size = 8, 1000
	plain := meilitest.Managed(b)
	direct := meili.New(plain.URL, plain.APIKey)
	one := newRig(b, 1)
	two := newRig(b, 2)
	var took [3]time.Duration
	var each [3][]time.Duration
	token := uint64(0)
	for b.Loop() {
		took, each = [3]time.Duration{}, [3][]time.Duration{}
		idx := fmt.Sprintf("bench%d", time.Now().UnixNano())
		token++
		c1, _ := one.writer(token, 0)
		c2, _ := two.writer(token, 0)
		sides := []meilisearch.ServiceManager{direct, c1, c2}
		for _, c := range sides {
			setup(b, c, idx)
		}
		for batch := range batches {
			for k := range sides {
				i := (batch + k) % len(sides)
				start := time.Now()
				if task := add(b, sides[i], idx, batch, size); task.Status != meilisearch.TaskStatusSucceeded {
					b.Fatalf("add: %+v", task.Error)
				}
				took[i] += time.Since(start)
				each[i] = append(each[i], time.Since(start))
			}
		}
	}
	rate := func(i int) float64 { return float64(batches*size) / took[i].Seconds() }
	// The median batch is the same comparison without the batches a burst
	// of load from elsewhere stretched.
	b.ReportMetric(float64(median(each[0]))/float64(median(each[1])), "ratio1-median-batch")
	b.ReportMetric(rate(0), "direct-docs/s")
	b.ReportMetric(rate(1), "log1-docs/s")
	b.ReportMetric(rate(2), "log2-docs/s")
	b.ReportMetric(rate(1)/rate(0), "ratio1(target>=0.7)")
	b.ReportMetric(rate(2)/rate(0), "ratio2")
}

// BenchmarkLeaderFailover measures how long the crawl lease takes to pass
// to a waiting campaigner when its holder shuts down (hand-over on
// release) and when its holder dies (its key expires after the TTL), on
// one embedded JetStream node with a 1s TTL.
func BenchmarkLeaderFailover(b *testing.B) {
	const ttl = time.Second
	node, err := natsnode.Start(natsnode.Config{Name: "bench", StoreDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer node.Shutdown()
	var release, crash time.Duration
	for b.Loop() {
		release = failover(b, node, ttl, false)
		crash = failover(b, node, ttl, true)
	}
	b.ReportMetric(float64(release.Microseconds()), "release-us")
	b.ReportMetric(float64(crash.Milliseconds()), "crash-ms")
	b.ReportMetric(float64(crash)/float64(ttl), "crash/TTL(target<=2)")
}

// failover starts a holder and a waiter and returns how long the waiter
// took to win after the holder stopped (crash: its connection closed, so
// it can neither renew nor release).
func failover(b *testing.B, node *natsnode.Node, ttl time.Duration, crash bool) time.Duration {
	b.Helper()
	key := fmt.Sprintf("crawl-%d", time.Now().UnixNano())
	won := make(chan time.Time, 2)
	campaign := func(ctx context.Context) func() {
		nc, err := node.Connect("bench")
		if err != nil {
			b.Fatal(err)
		}
		js, _ := natsnode.JetStream(nc)
		kv, err := lease.Bucket(ctx, js, "", ttl, 1)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			_ = lease.Run(ctx, lease.Config{KV: kv, Key: key, TTL: ttl}, func(ctx context.Context, _ *lease.Term) {
				won <- time.Now()
				<-ctx.Done()
			})
		}()
		return nc.Close
	}
	ctxA, stopA := context.WithCancel(context.Background())
	defer stopA()
	closeA := campaign(ctxA)
	<-won
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	closeB := campaign(ctxB)
	defer closeB()
	start := time.Now()
	if crash {
		closeA()
	} else {
		stopA()
	}
	select {
	case at := <-won:
		closeA()
		return at.Sub(start)
	case <-time.After(10 * ttl):
		b.Fatal("no take-over")
		return 0
	}
}
