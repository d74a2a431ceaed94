package replica

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentfinder/agentfinder/ingest/writelog"
)

// Transport returns an http.RoundTripper for a meilisearch-go client (any
// base URL; requests are sent to the replicas). Reads go to the read set,
// writes to w (nil: writes are refused with code "not_leader"), and a
// task's status is its status on every replica in the read set.
func (s *Set) Transport(w *writelog.Writer) http.RoundTripper {
	return &transport{set: s, w: w, parts: map[uint64][]uint64{}}
}

type transport struct {
	set *Set
	w   *writelog.Writer

	mu    sync.Mutex
	parts map[uint64][]uint64 // last sequence of a split write -> all of them
}

// reads are POSTs that change nothing.
func isRead(r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	p := r.URL.Path
	return r.Method == http.MethodPost && (p == "/multi-search" || strings.HasSuffix(p, "/search") ||
		strings.HasSuffix(p, "/documents/fetch") || strings.HasSuffix(p, "/facet-search") ||
		strings.HasSuffix(p, "/similar"))
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/tasks/") {
		uid, err := strconv.ParseUint(strings.TrimPrefix(r.URL.Path, "/tasks/"), 10, 64)
		if err == nil {
			return t.task(r, uid)
		}
	}
	if isRead(r) {
		return t.read(r)
	}
	return t.write(r)
}

// read sends r to the read set, trying the next replica when one cannot be
// reached.
func (t *transport) read(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	var lastErr error = ErrNoReplica
	ts, k := t.set.pick()
	for i := range ts {
		resp, err := t.send(r, ts[(k+i)%len(ts)], body)
		if err == nil {
			return resp, nil
		}
		lastErr = err
		if r.Context().Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func (t *transport) send(r *http.Request, rep target, body []byte) (*http.Response, error) {
	if rep.base == nil {
		return nil, fmt.Errorf("replica %s: URL %q does not parse", rep.Name, rep.URL)
	}
	u := *rep.base
	u.Path = rep.base.Path + r.URL.Path
	if r.URL.RawPath != "" {
		u.RawPath = rep.base.EscapedPath() + r.URL.RawPath
	}
	u.RawQuery = r.URL.RawQuery
	out := r.Clone(r.Context())
	out.URL, out.Host, out.RequestURI = &u, u.Host, ""
	out.Body, out.ContentLength = nil, int64(len(body))
	if body != nil {
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	if rep.APIKey != "" {
		out.Header.Set("Authorization", "Bearer "+rep.APIKey)
	}
	return t.set.cfg.HTTP.Transport.RoundTrip(out)
}

// write appends r to the log and answers as Meilisearch would for an
// enqueued task, whose uid is the write's (last) sequence.
func (t *transport) write(r *http.Request) (*http.Response, error) {
	if t.w == nil {
		return answer(r, http.StatusForbidden, apiError("this node is not the index writer", "not_leader")), nil
	}
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	seqs, err := t.w.Append(r.Context(), r.Method, r.URL.RequestURI(), r.Header.Get("Content-Type"), body)
	if errors.Is(err, writelog.ErrFenced) {
		return answer(r, http.StatusConflict, apiError(err.Error(), "fenced_write")), nil
	}
	if err != nil {
		return answer(r, http.StatusServiceUnavailable, apiError(err.Error(), "write_log_unavailable")), nil
	}
	last := seqs[len(seqs)-1]
	if len(seqs) > 1 {
		t.mu.Lock()
		t.parts[last] = seqs
		t.mu.Unlock()
	}
	info := map[string]any{"taskUid": last, "indexUid": indexOf(r.URL.Path), "status": "enqueued",
		"type": "", "enqueuedAt": time.Now().UTC().Format(time.RFC3339Nano)}
	return answer(r, http.StatusAccepted, info), nil
}

// task answers GET /tasks/{uid} for a write of ours: enqueued until every
// reader applied it, then failed if any part failed, succeeded once all
// parts succeeded everywhere.
func (t *transport) task(r *http.Request, uid uint64) (*http.Response, error) {
	t.mu.Lock()
	seqs, split := t.parts[uid]
	t.mu.Unlock()
	if !split {
		seqs = []uint64{uid}
	}
	readers := t.set.readers()
	if len(readers) == 0 {
		return answer(r, http.StatusOK, taskDoc(uid, "enqueued", nil)), nil
	}
	for _, rep := range readers {
		for _, seq := range seqs {
			if t.set.applied(rep.Name) < seq {
				return answer(r, http.StatusOK, taskDoc(uid, "enqueued", nil)), nil
			}
			status, doc, err := t.replicaTask(r.Context(), rep, seq)
			if err != nil {
				return answer(r, http.StatusOK, taskDoc(uid, "enqueued", nil)), nil
			}
			switch status {
			case "succeeded":
				continue
			case "failed", "canceled", "refused":
				doc["uid"] = uid
				doc["status"] = "failed"
				return answer(r, http.StatusOK, doc), nil
			default:
				return answer(r, http.StatusOK, taskDoc(uid, "processing", nil)), nil
			}
		}
	}
	if split {
		t.mu.Lock()
		delete(t.parts, uid)
		t.mu.Unlock()
	}
	return answer(r, http.StatusOK, taskDoc(uid, "succeeded", nil)), nil
}

// replicaTask reads task seq on rep. A task the replica does not hold
// although its applier passed it was refused (a request Meilisearch
// rejected outright).
func (t *transport) replicaTask(ctx context.Context, rep Replica, seq uint64) (string, map[string]any, error) {
	var doc map[string]any
	err := getJSON(ctx, t.set.cfg.HTTP, rep, "/tasks/"+strconv.FormatUint(seq, 10), &doc)
	if err != nil {
		if strings.Contains(err.Error(), "status 404") {
			return "refused", taskDoc(seq, "failed", map[string]any{
				"code": "write_refused", "type": "invalid_request",
				"message": fmt.Sprintf("replica %s refused write %d", rep.Name, seq)}), nil
		}
		return "", nil, err
	}
	s, _ := doc["status"].(string)
	return s, doc, nil
}

func taskDoc(uid uint64, status string, taskErr map[string]any) map[string]any {
	d := map[string]any{"uid": uid, "status": status, "indexUid": "", "type": ""}
	if taskErr != nil {
		d["error"] = taskErr
	}
	return d
}

func apiError(msg, code string) map[string]any {
	return map[string]any{"message": msg, "code": code, "type": "invalid_request", "link": ""}
}

// indexOf returns the index uid in a path /indexes/{uid}/..., or "".
func indexOf(p string) string {
	rest, ok := strings.CutPrefix(p, "/indexes/")
	if !ok {
		return ""
	}
	uid, _, _ := strings.Cut(rest, "/")
	return uid
}

func answer(r *http.Request, status int, v any) *http.Response {
	b, _ := json.Marshal(v)
	return &http.Response{
		StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)), Request: r,
	}
}
