// Package writelog is the index write log of a cluster: every write to the
// Meilisearch index (a documents request, a settings change, an index
// creation) is one message in one JetStream stream, and each Meilisearch
// replica applies the stream in order (see ingest/replica). The stream
// sequence becomes the write's Meilisearch task id on every replica.
//
// One writer at a time may append: the crawl leader. A Writer carries its
// lease's fencing token on every message and appends by compare-and-set on
// the last sequence of its subject, after a fence message that marks the
// start of its term. A stale leader (paused past its lease, or cut off)
// therefore has every later append refused by the stream itself: someone
// appended since it last did. The subject names a partition ("p0"), so a
// later split of the crawl into partitions gives each partition leader its
// own subject and its own chain.
//
// writelog imports the NATS JetStream client; it must not import anything
// of ours.
package writelog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Stream is the stream name of the index write log.
const Stream = "AGENTFINDER_INDEX"

// Subjects of the log: writes go to SubjectWrites+"."+partition, task
// clean-ups to SubjectControl.
const (
	SubjectPrefix  = "agentfinder.index"
	SubjectWrites  = SubjectPrefix + ".w"
	SubjectControl = SubjectPrefix + ".ctl"
)

// Message headers of a write.
const (
	HeaderMethod = "Af-Method" // HTTP method, or MethodFence
	HeaderPath   = "Af-Path"   // path and query of the Meilisearch request
	HeaderType   = "Content-Type"
	HeaderToken  = "Af-Token"  // fencing token of the writer's term
	HeaderHolder = "Af-Holder" // who wrote it, for operators
)

// MethodFence marks the start of a writer's term; appliers skip it.
const MethodFence = "FENCE"

// StreamConfig says how the log is kept.
type StreamConfig struct {
	// Replicas is the JetStream replication factor (3 in a 3-node cluster).
	Replicas int
	// MaxAge is how long writes are kept: longer than the longest outage
	// of a replica you want to heal from the log alone. Default 7 days.
	MaxAge time.Duration
	// MaxBytes bounds the log's size; 0: no bound but MaxAge.
	MaxBytes int64
}

// EnsureStream creates the log's stream, or updates its limits.
func EnsureStream(ctx context.Context, js jetstream.JetStream, cfg StreamConfig) (jetstream.Stream, error) {
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = 7 * 24 * time.Hour
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = -1
	}
	st, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        Stream,
		Description: "agentfinder index write log: applied in order to every Meilisearch replica",
		Subjects:    []string{SubjectPrefix + ".>"},
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      cfg.MaxAge,
		MaxBytes:    cfg.MaxBytes,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
		Duplicates:  2 * time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("index write log stream: %w", err)
	}
	return st, nil
}

// ErrFenced means the log refused an append: another writer appended since
// this one last did (it holds a newer term), or this writer's term ended.
var ErrFenced = errors.New("index write refused: this writer's term is over")

// Config configures a Writer.
type Config struct {
	// JS is the JetStream API.
	JS jetstream.JetStream
	// Partition names the writer's chain; default "p0".
	Partition string
	// Token is the fencing token of the writer's lease term.
	Token uint64
	// Holder names the writer (its node).
	Holder string
	// Valid reports whether the term still holds; checked before each
	// append. Nil: always.
	Valid func() bool
	// MaxMessage bounds one message's body; larger document writes are
	// split. Default 1 MiB (NATS's default max payload) minus headroom.
	MaxMessage int
	// CleanEvery appends a task clean-up every this many writes; default
	// 1000. CleanAge is the age of finished tasks it removes; default 1h.
	CleanEvery int
	CleanAge   time.Duration
}

// Writer appends one term's writes to the log. Its methods are safe for
// concurrent use; appends are serialized.
type Writer struct {
	cfg     Config
	subject string
	mu      sync.Mutex
	last    uint64 // sequence of the chain's last message, as this writer appended it
	n       uint64
	fenced  bool
}

// Begin starts a term: it reads the chain's last sequence and appends a
// fence message after it, so a previous writer's next append is refused.
// It returns the fence's sequence.
func Begin(ctx context.Context, cfg Config) (*Writer, uint64, error) {
	if cfg.Partition == "" {
		cfg.Partition = "p0"
	}
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = 1<<20 - 8<<10
	}
	if cfg.CleanEvery <= 0 {
		cfg.CleanEvery = 1000
	}
	if cfg.CleanAge <= 0 {
		cfg.CleanAge = time.Hour
	}
	w := &Writer{cfg: cfg, subject: SubjectWrites + "." + cfg.Partition}
	for attempt := 0; ; attempt++ {
		last, err := w.lastSeq(ctx)
		if err != nil {
			return nil, 0, err
		}
		w.last = last
		seq, err := w.append(ctx, MethodFence, "", "", nil)
		if err == nil {
			return w, seq, nil
		}
		// Someone appended between our read and our fence: read again.
		if !errors.Is(err, ErrFenced) || attempt >= 5 || ctx.Err() != nil {
			return nil, 0, fmt.Errorf("begin index write term: %w", err)
		}
		w.fenced = false
	}
}

// lastSeq is the sequence of the chain's last message, 0 when empty.
func (w *Writer) lastSeq(ctx context.Context) (uint64, error) {
	st, err := w.cfg.JS.Stream(ctx, Stream)
	if err != nil {
		return 0, fmt.Errorf("index write log: %w", err)
	}
	m, err := st.GetLastMsgForSubject(ctx, w.subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("index write log: last message of %s: %w", w.subject, err)
	}
	return m.Sequence, nil
}

// Token is the writer's fencing token.
func (w *Writer) Token() uint64 { return w.cfg.Token }

// Append appends one Meilisearch write (method, path with query, content
// type, body), split into several messages when the body is a documents
// list larger than MaxMessage. It returns the sequences, in order.
// ErrFenced (wrapped) means the write was refused and will never apply.
func (w *Writer) Append(ctx context.Context, method, path, ctype string, body []byte) ([]uint64, error) {
	parts := split(body, ctype, w.cfg.MaxMessage)
	seqs := make([]uint64, 0, len(parts))
	for _, p := range parts {
		seq, err := w.append(ctx, method, path, ctype, p)
		if err != nil {
			return seqs, err
		}
		seqs = append(seqs, seq)
	}
	w.maybeClean(ctx)
	return seqs, nil
}

func (w *Writer) append(ctx context.Context, method, path, ctype string, body []byte) (uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fenced || (w.cfg.Valid != nil && !w.cfg.Valid()) {
		w.fenced = true
		return 0, ErrFenced
	}
	w.n++
	id := w.cfg.Holder + "-" + strconv.FormatUint(w.cfg.Token, 10) + "-" + strconv.FormatUint(w.n, 10)
	msg := &nats.Msg{Subject: w.subject, Header: nats.Header{}, Data: body}
	msg.Header.Set(HeaderMethod, method)
	msg.Header.Set(HeaderPath, path)
	if ctype != "" {
		msg.Header.Set(HeaderType, ctype)
	}
	msg.Header.Set(HeaderToken, strconv.FormatUint(w.cfg.Token, 10))
	msg.Header.Set(HeaderHolder, w.cfg.Holder)
	for attempt := 0; ; attempt++ {
		ack, err := w.cfg.JS.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(w.last), jetstream.WithMsgID(id))
		if err == nil {
			w.last = ack.Sequence
			return ack.Sequence, nil
		}
		if wrongLast(err) {
			w.fenced = true
			return 0, fmt.Errorf("%w (%v)", ErrFenced, err)
		}
		// The outcome is unknown (timeout, leader change): the message id
		// makes a resend a no-op if the first one landed.
		if attempt >= 3 || ctx.Err() != nil {
			return 0, fmt.Errorf("append to index write log: %w", err)
		}
	}
}

func wrongLast(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
	}
	return false
}

// maybeClean appends a task clean-up every CleanEvery writes: replicas run
// with automatic task clean-up off (it would take task ids of its own), so
// the log tells each to delete its old finished tasks.
func (w *Writer) maybeClean(ctx context.Context) {
	w.mu.Lock()
	due := w.n%uint64(w.cfg.CleanEvery) == 0
	w.mu.Unlock()
	if !due {
		return
	}
	_ = AppendCleanup(ctx, w.cfg.JS, time.Now().Add(-w.cfg.CleanAge))
}

// AppendCleanup appends a task clean-up: each replica deletes its
// finished tasks enqueued before before. It carries no token: it changes
// no document, and any node may append it.
func AppendCleanup(ctx context.Context, js jetstream.JetStream, before time.Time) error {
	msg := &nats.Msg{Subject: SubjectControl, Header: nats.Header{}}
	msg.Header.Set(HeaderMethod, "DELETE")
	msg.Header.Set(HeaderPath, "/tasks?statuses=succeeded,failed,canceled&beforeEnqueuedAt="+before.UTC().Format(time.RFC3339))
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		return fmt.Errorf("append task clean-up: %w", err)
	}
	return nil
}

// split cuts a documents body (a JSON array or NDJSON) into parts of at
// most max bytes, whole documents each; anything else stays one part.
func split(body []byte, ctype string, max int) [][]byte {
	if len(body) <= max {
		return [][]byte{body}
	}
	if strings.HasPrefix(ctype, "application/x-ndjson") {
		return splitLines(body, max)
	}
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
		return splitArray(t, max)
	}
	return [][]byte{body}
}

func splitLines(body []byte, max int) [][]byte {
	var out [][]byte
	start := 0
	for start < len(body) {
		end := min(start+max, len(body))
		if end < len(body) {
			if i := bytes.LastIndexByte(body[start:end], '\n'); i > 0 {
				end = start + i + 1
			} else if j := bytes.IndexByte(body[end:], '\n'); j >= 0 {
				end = end + j + 1 // one line longer than max: keep it whole
			} else {
				end = len(body)
			}
		}
		out = append(out, body[start:end])
		start = end
	}
	return out
}
