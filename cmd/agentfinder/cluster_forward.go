package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

// In cluster mode the crawl (scheduler, crawler, ingest) runs on the crawl
// lease's holder only, but any node behind the load balancer may receive an
// IndexNow ping or an admin request. Each node passes them to the leader
// over NATS (request and reply, to the one subscriber of a queue group),
// and the leader answers with its own handlers, so the answers are those a
// single node gives: key verification, admission, per-host budgets,
// triggered seeds, the crawl's status.

// leaderSubject carries forwarded HTTP requests to the crawl leader.
const (
	leaderSubject = "agentfinder.leader.http"
	leaderQueue   = "crawl-leader"
)

// Headers of a forwarded request and its answer, beside the HTTP headers.
const (
	fwdMethod = "Agentfinder-Fwd-Method"
	fwdURI    = "Agentfinder-Fwd-Uri"
	fwdRemote = "Agentfinder-Fwd-Remote"
	fwdStatus = "Agentfinder-Fwd-Status"
	fwdNode   = "X-Agentfinder-Node" // the leader that answered, also sent to the client
)

// leaderForwarder is every node's /indexnow and /admin/*: it forwards the
// request to the crawl leader and relays its answer.
type leaderForwarder struct {
	nc         *nats.Conn
	timeout    time.Duration // the leader's answer, key file fetch included
	retryAfter time.Duration // told to clients while no node leads
	adminToken string        // "" : no admin endpoints
	indexNow   bool
	log        *slog.Logger
}

// mount puts the forwarded routes on mux, as buildHandler would put the
// leader's own: admin behind the bearer token, IndexNow public.
func (f *leaderForwarder) mount(mux interface {
	Handle(pattern string, h http.Handler)
}) {
	if f.adminToken != "" {
		mux.Handle("/admin/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !bearerMatches(r.Header.Get("Authorization"), f.adminToken) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="agentfinder-admin"`)
				writeAdminError(w, http.StatusUnauthorized, "unauthorized", "a valid admin bearer token is required")
				return
			}
			f.ServeHTTP(w, r)
		}))
	}
	if f.indexNow {
		mux.Handle("GET /indexnow", f)
		mux.Handle("POST /indexnow", f)
	}
}

// maxForwardBody bounds a forwarded body below NATS's message size.
func (f *leaderForwarder) maxForwardBody() int64 {
	return max(f.nc.MaxPayload()-64<<10, 0)
}

func (f *leaderForwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.maxForwardBody()))
	if err != nil {
		writeAdminError(w, http.StatusRequestEntityTooLarge, "invalid_request", "request body too large or unreadable: "+err.Error())
		return
	}
	msg := nats.NewMsg(leaderSubject)
	msg.Header = nats.Header(r.Header.Clone())
	msg.Header.Set(fwdMethod, r.Method)
	msg.Header.Set(fwdURI, r.URL.RequestURI())
	msg.Header.Set(fwdRemote, r.RemoteAddr)
	msg.Data = body
	ctx, cancel := context.WithTimeout(r.Context(), f.timeout)
	defer cancel()
	ans, err := f.nc.RequestMsgWithContext(ctx, msg)
	if err != nil {
		f.unavailable(w, r, err)
		return
	}
	status, err := strconv.Atoi(ans.Header.Get(fwdStatus))
	if err != nil || status < 100 || status > 599 {
		f.unavailable(w, r, errors.New("malformed answer from the crawl leader"))
		return
	}
	for k, v := range ans.Header {
		if k != fwdStatus {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(status)
	_, _ = w.Write(ans.Data)
}

// unavailable answers 503 with Retry-After: no node leads the crawl now (the
// lease is changing hands), or the leader did not answer in time.
func (f *leaderForwarder) unavailable(w http.ResponseWriter, r *http.Request, err error) {
	msg := "the crawl leader did not answer: retry later"
	if errors.Is(err, nats.ErrNoResponders) {
		msg = "no node leads the crawl right now (the lease is changing hands): retry later"
	}
	f.log.Warn("request for the crawl leader not answered", "path", r.URL.Path, "err", err)
	w.Header().Set("Retry-After", strconv.Itoa(int(max(f.retryAfter/time.Second, 1))))
	writeAdminError(w, http.StatusServiceUnavailable, "unavailable", msg)
}

// maxAnswering bounds forwarded requests the leader answers at once (an
// IndexNow ping may wait for a key file).
const maxAnswering = 16

// answerForwarded answers forwarded requests with h (the leader's own
// handler) until ctx ends. Its subscription ends with the term, so a node
// that lost the lease stops answering.
func answerForwarded(ctx context.Context, nc *nats.Conn, node string, h http.Handler, log *slog.Logger) error {
	slots := make(chan struct{}, maxAnswering)
	sub, err := nc.QueueSubscribe(leaderSubject, leaderQueue, func(m *nats.Msg) {
		slots <- struct{}{}
		go func() {
			defer func() { <-slots }()
			if err := m.RespondMsg(answerOne(ctx, node, h, m)); err != nil {
				log.Warn("answer a forwarded request", "err", err)
			}
		}()
	})
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		_ = sub.Unsubscribe()
	}()
	return nil
}

// answerOne runs forwarded request m through h and returns the answer.
func answerOne(ctx context.Context, node string, h http.Handler, m *nats.Msg) *nats.Msg {
	out := nats.NewMsg(m.Reply)
	req, err := http.NewRequestWithContext(ctx, m.Header.Get(fwdMethod), m.Header.Get(fwdURI), bytes.NewReader(m.Data))
	if err != nil {
		out.Header.Set(fwdStatus, strconv.Itoa(http.StatusBadRequest))
		return out
	}
	req.Header = http.Header(m.Header)
	req.RemoteAddr = m.Header.Get(fwdRemote)
	for _, k := range []string{fwdMethod, fwdURI, fwdRemote} {
		req.Header.Del(k)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out.Header = nats.Header(rec.Header().Clone())
	out.Header.Set(fwdStatus, strconv.Itoa(rec.Code))
	out.Header.Set(fwdNode, node)
	out.Data = rec.Body.Bytes()
	return out
}
