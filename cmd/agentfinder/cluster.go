package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfinder/agentfinder/crawler/statefile/kvstate"
	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/ingest/replica"
	"github.com/agentfinder/agentfinder/ingest/writelog"
	"github.com/agentfinder/agentfinder/scheduler/lease"
	"github.com/agentfinder/agentfinder/scheduler/natsnode"
)

// clusterOptions are serve's flags for running as one node of several.
type clusterOptions struct {
	node          string
	listen        string
	peers         stringList
	natsListen    string
	natsURL       string
	replicas      stringList
	leaseTTL      time.Duration
	logMaxAge     time.Duration
	jsReplicas    int
	maxLag        uint64
	readyTimeout  time.Duration
	crawlLeaseKey string
}

func (c *clusterOptions) register(cl *cli) {
	fs := cl.fs
	fs.StringVar(&c.node, "node-name", "", "this node's `name` in the cluster (default: the host name)")
	fs.StringVar(&c.listen, "cluster-listen", "", "`host:port` where this node's embedded NATS server meets its peers (with --cluster-peers: run as one node of a cluster)")
	fs.Var(&c.peers, "cluster-peers", "the cluster nodes' `host:port` addresses (--cluster-listen of each, this one may be among them; repeatable or comma separated)")
	fs.StringVar(&c.natsListen, "nats-listen", "", "`host:port` where the embedded NATS server takes clients (default: a free loopback port)")
	fs.StringVar(&c.natsURL, "nats-url", "", "`URLs` of an existing NATS cluster with JetStream (comma separated), instead of the embedded one")
	fs.Var(&c.replicas, "meili-replica", "a Meilisearch replica as `name=URL` (repeatable; cluster mode; each started with --experimental-replication-parameters and the key in MEILI_API_KEY)")
	fs.DurationVar(&c.leaseTTL, "lease-ttl", 5*time.Second, "TTL of the crawl and applier leases: a dead leader is replaced within about this long")
	fs.DurationVar(&c.logMaxAge, "write-log-max-age", 7*24*time.Hour, "how long the index write log keeps writes: longer than the longest replica outage to heal from the log")
	fs.IntVar(&c.jsReplicas, "cluster-replicas", 0, "JetStream replication of leases, state and the write log (default 3 with three or more peers, else 1)")
	fs.Uint64Var(&c.maxLag, "max-replica-lag", 1000, "writes a replica may be behind the log and still serve searches")
}

// on reports whether serve runs as a cluster node.
func (c *clusterOptions) on() bool {
	return c.listen != "" || len(c.peers) > 0 || c.natsURL != ""
}

func (c *clusterOptions) check() error {
	if c.natsURL != "" && (c.listen != "" || len(c.peers) > 0) {
		return errors.New("--nats-url and --cluster-listen/--cluster-peers exclude each other")
	}
	if c.natsURL == "" && c.listen == "" {
		return errors.New("--cluster-peers needs --cluster-listen")
	}
	if len(c.replicas) == 0 {
		return errors.New("cluster mode needs at least one --meili-replica name=URL")
	}
	if c.leaseTTL < 200*time.Millisecond {
		return fmt.Errorf("--lease-ttl %s: want at least 200ms", c.leaseTTL)
	}
	if c.node == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("--node-name: %w", err)
		}
		c.node = h
	}
	return nil
}

func (c *clusterOptions) peerList() []string {
	var out []string
	for _, p := range c.peers {
		for _, q := range strings.Split(p, ",") {
			if q = strings.TrimSpace(q); q != "" {
				out = append(out, q)
			}
		}
	}
	return out
}

func (c *clusterOptions) replicaList(key string) ([]replica.Replica, error) {
	var out []replica.Replica
	seen := map[string]bool{}
	for _, r := range c.replicas {
		name, url, ok := strings.Cut(r, "=")
		if !ok || name == "" || url == "" || seen[name] {
			return nil, fmt.Errorf("--meili-replica %q: want a unique name=URL", r)
		}
		seen[name] = true
		out = append(out, replica.Replica{Name: name, URL: url, APIKey: key})
	}
	return out, nil
}

// cluster is a running cluster node's shared parts.
type cluster struct {
	o      clusterOptions
	log    *slog.Logger
	node   *natsnode.Node // nil with --nats-url
	nc     *nats.Conn
	js     jetstream.JetStream
	leases jetstream.KeyValue
	docs   *kvstate.Docs
	set    *replica.Set
	prog   jetstream.KeyValue
	maxMsg int
}

// serveCluster runs serve as one node of a cluster: the search API on
// every node, reading from the replica set; the crawl (scheduler, crawler,
// prober, ingest) on the node holding the crawl lease, writing to the
// index write log; an applier per replica on whichever node holds its
// lease.
func serveCluster(ctx context.Context, o serveOptions, hooks serveHooks, log *slog.Logger) error {
	if err := o.cluster.check(); err != nil {
		return err
	}
	log = log.With("node", o.cluster.node)
	c, err := joinCluster(ctx, o, log)
	if err != nil {
		return err
	}
	defer c.close()
	reps, err := o.cluster.replicaList(o.meiliKey)
	if err != nil {
		return err
	}
	c.set = replica.NewSet(replica.SetConfig{Replicas: reps, JS: c.js, Progress: c.prog, HTTP: meili.NewHTTPClient(0),
		MaxLag: o.cluster.maxLag, Logger: log})
	var wg sync.WaitGroup
	defer wg.Wait()
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	wg.Go(func() { c.set.Watch(bg) })
	for _, r := range reps {
		wg.Go(func() { c.runApplier(ctx, r) })
	}
	wg.Go(func() { c.campaignCrawl(ctx, o, hooks) })
	front := o
	front.crawl, front.adminToken = false, ""
	fh := hooks
	fh.meili, fh.readOnly = c.client(nil, o.meiliKey), true
	fh.forward = &leaderForwarder{nc: c.nc, timeout: forwardTimeout, retryAfter: o.cluster.leaseTTL,
		adminToken: o.adminToken, indexNow: !o.indexNow.off, log: log}
	return serve(ctx, front, fh, log)
}

func joinCluster(ctx context.Context, o serveOptions, log *slog.Logger) (*cluster, error) {
	c := &cluster{o: o.cluster, log: log}
	url := o.cluster.natsURL
	if url == "" {
		peers := o.cluster.peerList()
		node, err := natsnode.Start(natsnode.Config{Name: o.cluster.node, StoreDir: filepath.Join(o.dataDir, "nats"),
			ClientListen: o.cluster.natsListen, ClusterListen: o.cluster.listen, Peers: peers, Logger: log})
		if err != nil {
			return nil, err
		}
		c.node, url = node, node.ClientURL()
		if o.cluster.jsReplicas == 0 && len(peers) >= 3 {
			o.cluster.jsReplicas = 3
		}
	}
	nc, err := natsnode.Connect(url, "agentfinder-"+o.cluster.node)
	if err != nil {
		c.close()
		return nil, err
	}
	c.nc = nc
	c.maxMsg = int(nc.MaxPayload()) - 8<<10
	if err := c.open(ctx, o); err != nil {
		c.close()
		return nil, err
	}
	log.Info("cluster joined", "nats", url, "jetstream_replicas", max(o.cluster.jsReplicas, 1))
	return c, nil
}

// open waits for JetStream and creates the stream and buckets.
func (c *cluster) open(ctx context.Context, o serveOptions) error {
	js, err := natsnode.JetStream(c.nc)
	if err != nil {
		return err
	}
	c.js = js
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := natsnode.AwaitJetStream(ctx, js); err != nil {
		return err
	}
	r := o.cluster.jsReplicas
	return retryJS(ctx, func(ctx context.Context) error {
		if _, err := writelog.EnsureStream(ctx, js, writelog.StreamConfig{Replicas: r, MaxAge: o.cluster.logMaxAge}); err != nil {
			return err
		}
		var err error
		if c.leases, err = lease.Bucket(ctx, js, "", o.cluster.leaseTTL, r); err != nil {
			return err
		}
		if c.prog, err = replica.Progress(ctx, js, r); err != nil {
			return err
		}
		c.docs, err = kvstate.OpenDocs(ctx, js, r)
		return err
	})
}

// retryJS retries f while the cluster is forming (no meta leader yet, not
// enough peers), until ctx ends.
func retryJS(ctx context.Context, f func(ctx context.Context) error) error {
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := f(actx)
		cancel()
		if err == nil || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("jetstream: %w", err)
		case <-t.C:
		}
	}
}

func (c *cluster) close() {
	if c.nc != nil {
		c.nc.Close()
	}
	if c.node != nil {
		c.node.Shutdown()
	}
}

// client is a Meilisearch client over the replica set, writing through w
// (nil: no writes). Its Do sends what meilisearch-go has no method for the
// same way, so ingest gives a cluster's index the vector store it gives a
// single server's: the experimental feature and the setting are writes of
// the log, applied to every replica in order.
func (c *cluster) client(w *writelog.Writer, key string) *meili.Client {
	hc := &http.Client{Transport: c.set.Transport(w), Timeout: 30 * time.Second}
	return meili.NewWithHTTP("http://meilisearch-replicas", key, hc)
}

// runApplier campaigns for replica r's applier lease until ctx ends and
// applies the write log to r while it holds it.
func (c *cluster) runApplier(ctx context.Context, r replica.Replica) {
	cfg := lease.Config{KV: c.leases, Key: "apply." + r.Name, Holder: c.o.node, TTL: c.o.leaseTTL, Logger: c.log}
	_ = lease.Run(ctx, cfg, func(ctx context.Context, _ *lease.Term) {
		a := &replica.Applier{JS: c.js, Progress: c.prog, Replica: r, HTTP: meili.NewHTTPClient(0), Logger: c.log}
		if err := a.Run(ctx); err != nil {
			c.log.Error("applier stopped", "replica", r.Name, "err", err)
			<-ctx.Done()
		}
	})
}

// campaignCrawl campaigns for the crawl lease until ctx ends and runs the
// crawl while it holds it.
func (c *cluster) campaignCrawl(ctx context.Context, o serveOptions, hooks serveHooks) {
	cfg := lease.Config{KV: c.leases, Key: "crawl", Holder: c.o.node, TTL: c.o.leaseTTL, Logger: c.log}
	_ = lease.Run(ctx, cfg, func(ctx context.Context, term *lease.Term) {
		if err := c.lead(ctx, o, hooks, term); err != nil && ctx.Err() == nil {
			c.log.Error("crawl leader stopped", "token", term.Token, "err", err)
		}
	})
}

// forwardTimeout bounds the crawl leader's answer to a forwarded request
// (an IndexNow ping's key file fetch takes up to 10s).
const forwardTimeout = 30 * time.Second

// lead runs one crawl term: it fences the write log, waits until the
// replicas hold everything written before, then runs serve's crawl side
// (scheduler, crawler, prober, ingest) on a loopback listener of its own,
// with its state in the cluster, until the term ends.
func (c *cluster) lead(ctx context.Context, o serveOptions, hooks serveHooks, term *lease.Term) error {
	w, fence, err := writelog.Begin(ctx, writelog.Config{JS: c.js, Token: term.Token, Holder: c.o.node,
		Valid: term.Valid, MaxMessage: c.maxMsg})
	if err != nil {
		return err
	}
	if err := c.set.WaitCaughtUp(ctx, fence-1); err != nil {
		return fmt.Errorf("wait for the replicas: %w", err)
	}
	c.log.Info("crawl leader", "token", term.Token, "fence", fence)
	lo := o
	lo.addr, lo.publicURL = "127.0.0.1:0", firstNonEmpty(o.publicURL, "http://"+o.addr+"/")
	lo.dataDir = filepath.Join(o.dataDir, "leader")
	lo.accessLog = false
	llog := c.log.With("role", "crawl-leader", "token", term.Token)
	lh := serveHooks{getenv: hooks.getenv, noSignals: true, meili: c.client(w, o.meiliKey),
		schedState: c.docs.Doc("scheduler"), probeState: c.docs.Doc("probe"), freshValidators: true,
		ready: func(s *server) {
			// Every node's /indexnow and /admin/* come here (cluster_forward.go).
			if err := answerForwarded(ctx, c.nc, c.o.node, s.handler, llog); err != nil {
				llog.Error("forwarded requests cannot reach this leader", "err", err)
			}
		}}
	return serve(ctx, lo, lh, llog)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// freshValidators restores the crawler's state (registry walks included)
// but its validators: a new crawl leader fetches each catalog in full
// once, since the last leader may have saved validators for fetches whose
// writes the log then refused, and a 304 must never stand for records the
// index lacks.
type freshValidators struct{ crawlerState }

func (f freshValidators) UnmarshalState(b []byte) error {
	if err := f.crawlerState.UnmarshalState(b); err != nil {
		return err
	}
	f.c.SetValidators(nil)
	return nil
}
