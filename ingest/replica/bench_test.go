package replica_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/scheduler/lease"
	"github.com/agentfinder/agentfinder/scheduler/natsnode"
)

// BenchmarkReplicaSearch compares search latency through a replica set of
// two (the Set's transport picks a caught-up replica per request) with
// searching one of the replicas directly, alternating the two so both see
// the same load. Target: at most 1.1x.
func BenchmarkReplicaSearch(b *testing.B) {
	r := newRig(b, 2)
	c, _ := r.writer(1, 0)
	setup(b, c, "agents")
	for batch := range 4 {
		add(b, c, "agents", batch, 500)
	}
	r.caughtUp()
	direct := meili.New(r.reps[0].URL, r.reps[0].APIKey)
	direct1 := meili.New(r.reps[1].URL, r.reps[1].APIKey)
	viaSet := r.client(nil)
	queries := []string{"agent", "number 7", "batch 3", "agent 12 of batch 2", "number"}
	const n = 400
	var tDirect, tSet, tDirect1 time.Duration
	for b.Loop() {
		tDirect, tSet, tDirect1 = 0, 0, 0
		for i := range n {
			q := queries[i%len(queries)]
			for _, side := range []struct {
				c   meilisearch.ServiceManager
				sum *time.Duration
			}{{direct, &tDirect}, {viaSet, &tSet}, {direct1, &tDirect1}} {
				start := time.Now()
				if _, err := side.c.Index("agents").Search(q, &meilisearch.SearchRequest{Limit: 10}); err != nil {
					b.Fatal(err)
				}
				*side.sum += time.Since(start)
			}
		}
	}
	b.ReportMetric(float64(tDirect.Microseconds())/n, "direct-us/search")
	b.ReportMetric(float64(tSet.Microseconds())/n, "set-us/search")
	b.ReportMetric(float64(tDirect1.Microseconds())/n, "direct1-us/search")
	b.ReportMetric(float64(tSet)/float64(tDirect), "ratio(target<=1.1)")
}

// BenchmarkReplicaWrite compares document write throughput through the
// write log to one replica (append, apply with the sequence as task id,
// wait until the replica finished it) with writing the same documents to
// a Meilisearch directly and waiting for each task. It also reports two
// replicas, which index every write twice on this machine's cores.
// Target: at least 0.7x for one replica.
func BenchmarkReplicaWrite(b *testing.B) {
	const batches, size = 8, 1000
	plain := meilitest.Managed(b)
	direct := meili.New(plain.URL, plain.APIKey)
	one := newRig(b, 1)
	two := newRig(b, 2)
	var rDirect, rOne, rTwo float64
	token := uint64(0)
	for b.Loop() {
		idx := fmt.Sprintf("bench%d", time.Now().UnixNano())
		rDirect = writeRate(b, direct, idx, batches, size)
		token++
		c1, _ := one.writer(token, 0)
		rOne = writeRate(b, c1, idx, batches, size)
		c2, _ := two.writer(token, 0)
		rTwo = writeRate(b, c2, idx, batches, size)
	}
	b.ReportMetric(rDirect, "direct-docs/s")
	b.ReportMetric(rOne, "log1-docs/s")
	b.ReportMetric(rTwo, "log2-docs/s")
	b.ReportMetric(rOne/rDirect, "ratio1(target>=0.7)")
	b.ReportMetric(rTwo/rDirect, "ratio2")
}

// writeRate creates index with the embedder setting and writes batches of
// size documents (vectors included) one after another, each awaited; it
// returns documents per second.
func writeRate(b *testing.B, c meilisearch.ServiceManager, index string, batches, size int) float64 {
	b.Helper()
	setup(b, c, index)
	start := time.Now()
	for batch := range batches {
		if task := add(b, c, index, batch, size); task.Status != meilisearch.TaskStatusSucceeded {
			b.Fatalf("add: %+v", task.Error)
		}
	}
	return float64(batches*size) / time.Since(start).Seconds()
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
