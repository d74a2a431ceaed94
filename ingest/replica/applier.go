// Package replica keeps several Meilisearch (Community Edition) replicas of
// the index identical by applying the index write log (ingest/writelog) to
// each, and serves reads from the replicas that are healthy and caught up.
//
// An Applier applies the log to one replica in order, sending each write
// with the stream sequence as its Meilisearch task id (the replica runs
// with --experimental-replication-parameters). Meilisearch refuses a task
// id that is not above its last one, so a replayed write is refused, not
// applied twice: an applier that crashed, or two appliers that overlap on
// one replica while their lease changes hands, apply each write once. An
// applier starts after the replica's last task id, so the replica's own
// data is the only record of how far it got; a replica that was down
// catches up from the log when it is back. A write that makes no task (the
// experimental features a setting needs) is applied in its place too; an
// applier that restarts after it sends it again, which changes nothing.
//
// A Set watches the replicas (health, applied sequence, pending tasks) and
// gives a Transport for meilisearch-go clients: reads go to a replica in
// the read set (healthy, within MaxLag of the log's end), writes go to the
// log through the current writelog.Writer, and a task's status is the
// status on every replica in the read set, so a write counts as done once
// all readers can see it.
//
// replica imports ingest/writelog and the NATS JetStream client; it must
// not import ingest, searchapi or cmd.
package replica

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfinder/agentfinder/ingest/writelog"
)

// Replica is one Meilisearch server of the set.
type Replica struct {
	Name   string // stable name: the applier lease and progress key
	URL    string // base URL, e.g. http://10.0.0.5:7700
	APIKey string // master or admin key; "" for none
}

// ProgressBucket is the key-value bucket where appliers publish how far
// each replica got (key: replica name, value: the last sequence applied).
const ProgressBucket = "agentfinder_replicas"

// Progress creates (or opens) the progress bucket.
func Progress(ctx context.Context, js jetstream.JetStream, replicas int) (jetstream.KeyValue, error) {
	if replicas <= 0 {
		replicas = 1
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: ProgressBucket, Description: "agentfinder: index write log applied per replica",
		History: 1, Replicas: replicas, Storage: jetstream.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("replica progress bucket: %w", err)
	}
	return kv, nil
}

// Applier applies the index write log to one replica.
type Applier struct {
	// JS is the JetStream API; Progress the bucket from Progress.
	JS       jetstream.JetStream
	Progress jetstream.KeyValue
	// Replica is where writes go.
	Replica Replica
	// HTTP sends the writes; it should not ask for compression (see
	// ingest/meili).
	HTTP *http.Client
	// Logger receives lifecycle and failure logs; nil discards.
	Logger *slog.Logger
	// OnApply, when set, is called after each message with its sequence.
	OnApply func(seq uint64)
}

// ErrBehindRetention means the replica needs writes the log no longer
// keeps: seed it from a snapshot of a caught-up replica.
var ErrBehindRetention = errors.New("replica is behind the write log's retention")

// Run applies the log from the replica's last task id on, until ctx ends
// (it then returns nil). It waits while the replica is unreachable. It
// fails only with ErrBehindRetention.
func (a *Applier) Run(ctx context.Context) error {
	if a.Logger == nil {
		a.Logger = slog.New(slog.DiscardHandler)
	}
	log := a.Logger.With("component", "applier", "replica", a.Replica.Name)
	for ctx.Err() == nil {
		err := a.run(ctx, log)
		if errors.Is(err, ErrBehindRetention) {
			return err
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("applier restarting", "err", err)
			sleep(ctx, 200*time.Millisecond)
		}
	}
	return nil
}

func (a *Applier) run(ctx context.Context, log *slog.Logger) error {
	last, err := a.lastTask(ctx)
	if err != nil {
		return err
	}
	st, err := a.JS.Stream(ctx, writelog.Stream)
	if err != nil {
		return err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return err
	}
	start := last + 1
	if first := info.State.FirstSeq; first > start && info.State.Msgs > 0 {
		return fmt.Errorf("%w: it applied up to %d, the log starts at %d", ErrBehindRetention, last, first)
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{writelog.SubjectPrefix + ".>"},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    start,
	})
	if err != nil {
		return err
	}
	log.Info("applier started", "from", start)
	rctx, stopReports := context.WithCancel(ctx)
	defer stopReports()
	report := a.reporter(rctx)
	for ctx.Err() == nil {
		// A fetch ends after 256 messages or 500ms; each message is
		// applied, and reported, as it arrives.
		batch, err := cons.Fetch(256, jetstream.FetchMaxWait(500*time.Millisecond))
		if err != nil {
			return err
		}
		for msg := range batch.Messages() {
			md, err := msg.Metadata()
			if err != nil {
				return err
			}
			if err := a.apply(ctx, log, md.Sequence.Stream, msg); err != nil {
				return err
			}
			report(md.Sequence.Stream)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && ctx.Err() == nil {
			return err
		}
	}
	return nil
}

// reporter publishes the replica's progress as soon as it is made: a
// writer waits for it (Set's GET /tasks/{uid}), so a report must not wait
// for the end of a fetch. Reports coalesce: while one is being put, only
// the latest sequence is kept for the next. It stops when ctx ends.
func (a *Applier) reporter(ctx context.Context) func(seq uint64) {
	if a.Progress == nil {
		return func(uint64) {}
	}
	var latest atomic.Uint64
	kick := make(chan struct{}, 1)
	go func() {
		var sent uint64
		for {
			select {
			case <-ctx.Done():
				return
			case <-kick:
			}
			seq := latest.Load()
			if seq <= sent {
				continue
			}
			if _, err := a.Progress.Put(ctx, a.Replica.Name, []byte(strconv.FormatUint(seq, 10))); err == nil {
				sent = seq
				continue
			}
			sleep(ctx, 100*time.Millisecond) // then try again
			select {
			case kick <- struct{}{}:
			default:
			}
		}
	}()
	return func(seq uint64) {
		latest.Store(seq)
		select {
		case kick <- struct{}{}:
		default:
		}
	}
}

// apply sends one message to the replica with its sequence as task id,
// retrying until the replica answers. A refusal (4xx) is final: a replayed
// write ("bad task id") or a request Meilisearch rejects on every replica
// alike.
func (a *Applier) apply(ctx context.Context, log *slog.Logger, seq uint64, msg jetstream.Msg) error {
	h := msg.Headers()
	method := h.Get(writelog.HeaderMethod)
	if method == writelog.MethodFence || method == "" {
		a.done(seq)
		return nil
	}
	wait := 50 * time.Millisecond
	for {
		status, body, err := a.send(ctx, seq, method, h.Get(writelog.HeaderPath), h.Get(writelog.HeaderType), msg.Data())
		switch {
		case err == nil && status < 300:
			a.done(seq)
			return nil
		case err == nil && status < 500 && status != http.StatusTooManyRequests:
			if !bytes.Contains(body, []byte("bad task id")) {
				log.Warn("write refused by replica", "seq", seq, "status", status, "body", string(body))
			}
			a.done(seq)
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		}
		log.Debug("replica unavailable, retrying", "seq", seq, "status", status, "err", err)
		sleep(ctx, wait)
		wait = min(2*wait, 2*time.Second)
	}
}

func (a *Applier) done(seq uint64) {
	if a.OnApply != nil {
		a.OnApply(seq)
	}
}

func (a *Applier) send(ctx context.Context, seq uint64, method, path, ctype string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(a.Replica.URL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if a.Replica.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+a.Replica.APIKey)
	}
	req.Header.Set("TaskId", strconv.FormatUint(seq, 10))
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, b, nil
}

// lastTask is the replica's highest task id (0: none), waiting while the
// replica is unreachable.
func (a *Applier) lastTask(ctx context.Context) (uint64, error) {
	for {
		uid, err := lastTaskUID(ctx, a.HTTP, a.Replica)
		if err == nil {
			return uid, nil
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		sleep(ctx, 200*time.Millisecond)
	}
}

func lastTaskUID(ctx context.Context, hc *http.Client, r Replica) (uint64, error) {
	var res struct {
		Results []struct {
			UID uint64 `json:"uid"`
		} `json:"results"`
	}
	if err := getJSON(ctx, hc, r, "/tasks?limit=1", &res); err != nil {
		return 0, err
	}
	if len(res.Results) == 0 {
		return 0, nil
	}
	return res.Results[0].UID, nil
}

func getJSON(ctx context.Context, hc *http.Client, r Replica, path string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(r.URL, "/")+path, nil)
	if err != nil {
		return err
	}
	if r.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.APIKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d", r.Name, path, resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
