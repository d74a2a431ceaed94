package indexnow

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// maxBody bounds a POST body: 10000 URLs of a few hundred bytes.
const maxBody = 4 << 20

// ServeHTTP answers GET and POST /indexnow.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.m.received.Inc()
	p, rej := parse(w, r)
	if rej == nil {
		rej = h.accept(r.Context(), p)
	}
	if rej != nil {
		h.m.rejected.WithLabelValues(rej.reason).Inc()
		h.log.Info("ping refused", "host", p.Host, "status", rej.status, "reason", rej.reason, "msg", rej.msg)
		writeError(w, rej)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"host": p.Host, "accepted": len(p.URLList)})
}

// parse reads a ping in either form.
func parse(w http.ResponseWriter, r *http.Request) (*ping, *rejection) {
	p := &ping{}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		q := r.URL.Query()
		p.Key, p.KeyLocation = q.Get("key"), q.Get("keyLocation")
		if raw := q.Get("url"); raw != "" {
			p.URLList = []string{raw}
			if u, err := url.Parse(raw); err == nil {
				p.Host = u.Host
			}
		}
	case http.MethodPost:
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			return p, reject(400, reasonBadRequest, "POST /indexnow takes application/json")
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
		if err := dec.Decode(p); err != nil {
			return p, reject(400, reasonBadRequest, "body must be {\"host\", \"key\", \"keyLocation\", \"urlList\"}: "+err.Error())
		}
	default:
		return p, &rejection{status: http.StatusMethodNotAllowed, reason: reasonBadRequest, msg: "use GET or POST"}
	}
	return p, p.check()
}

// accept runs a well-formed ping through key verification, admission and
// the host's budget, and starts its crawl. The key is verified first,
// whatever the host: whether this registry crawls a host (a seed only some
// groups may see, a catalog hidden from the public) is told only to its
// owner, never to whoever pings with a made-up key.
func (h *Handler) accept(ctx context.Context, p *ping) *rejection {
	if rej := h.verify(ctx, p); rej != nil {
		return rej
	}
	h.m.verified.Inc()
	if !h.cfg.Crawls.Admit(p.Host, p.URLList) {
		return reject(403, reasonUnknownHost, "this registry does not crawl "+p.Host)
	}
	if wait := h.budgets.take(p.Host, h.cfg.Now()); wait > 0 {
		h.m.rateLimited.Inc()
		return &rejection{status: http.StatusTooManyRequests, reason: "rate_limited",
			msg: "too many pings for " + p.Host + ": retry later", retryAfter: wait}
	}
	if _, ok := h.pending.Get(p.Host); !ok {
		h.pending.Add(p.Host, h.cfg.Now())
	}
	if err := h.cfg.Crawls.Crawl(p.Host, p.URLList); err != nil {
		h.log.Warn("crawl on ping failed to start", "host", p.Host, "err", err)
		return reject(http.StatusServiceUnavailable, reasonCrawl, "crawling is unavailable: "+err.Error())
	}
	h.log.Info("ping accepted", "host", p.Host, "urls", len(p.URLList))
	return nil
}

// keyID is what a verdict is cached under.
type keyID struct{ host, key, location string }

// verdict is the cached outcome of fetching a key file.
type verdict struct {
	rej   *rejection // nil: verified
	until time.Time
}

// verify checks p's key against its key file, from the cache while the
// verdict is fresh.
func (h *Handler) verify(ctx context.Context, p *ping) *rejection {
	id := keyID{p.Host, p.Key, p.keyURL()}
	now := h.cfg.Now()
	if v, ok := h.keys.Get(id); ok && now.Before(v.until) {
		return v.rej
	}
	// Fetching is work for the publisher's server too: a host's key files
	// are fetched at most at its crawl budget's rate, so a flood of made-up
	// keys cannot turn this endpoint against it.
	if wait := h.fetches.take(p.Host, now); wait > 0 {
		h.m.rateLimited.Inc()
		return &rejection{status: http.StatusTooManyRequests, reason: "rate_limited",
			msg: "too many key checks for " + p.Host + ": retry later", retryAfter: wait}
	}
	fctx, cancel := context.WithTimeout(ctx, h.cfg.FetchTimeout)
	defer cancel()
	body, err := h.cfg.Keys.FetchOwnershipFile(fctx, id.location)
	v := verdict{until: now.Add(h.cfg.VerifiedFor)}
	switch {
	case err != nil && ctx.Err() != nil:
		return reject(400, reasonBadRequest, "the request ended before the key file was fetched")
	case err != nil && errors.Is(err, ErrOtherHost):
		v.rej = reject(403, reasonRedirect, "the key file redirects to another host: "+err.Error())
	case err != nil:
		v.rej = reject(403, reasonKeyNotFound, "key file "+id.location+" not found: "+err.Error())
	case string(bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))) != p.Key:
		v.rej = reject(403, reasonKeyMismatch, "key file "+id.location+" does not hold the key")
	}
	if v.rej != nil {
		v.until = now.Add(h.cfg.FailedFor)
	}
	h.keys.Add(id, v)
	return v.rej
}

// Written tells the handler that ingest has written a catalog at
// catalogURL: when a ping for its host waits to become searchable, the time
// since that ping is observed (agentfinder_indexnow_ping_to_searchable_seconds).
func (h *Handler) Written(catalogURL string) {
	u, err := url.Parse(catalogURL)
	if err != nil {
		return
	}
	for _, host := range []string{u.Host, u.Hostname()} {
		if at, ok := h.pending.Peek(host); ok {
			h.pending.Remove(host)
			h.m.toSearchable.Observe(h.cfg.Now().Sub(at).Seconds())
			return
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes the error model {"error": {code, message, correlationId}}.
func writeError(w http.ResponseWriter, rej *rejection) {
	code := "invalid_request"
	switch rej.status {
	case http.StatusForbidden:
		code = "forbidden"
	case http.StatusTooManyRequests:
		code = "rate_limited"
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(rej.retryAfter.Seconds()))))
	case http.StatusServiceUnavailable:
		code = "unavailable"
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", "GET, HEAD, POST")
	}
	id := w.Header().Get("X-Correlation-ID")
	if id == "" {
		raw := make([]byte, 8)
		_, _ = rand.Read(raw)
		id = hex.EncodeToString(raw)
		w.Header().Set("X-Correlation-ID", id)
	}
	writeJSON(w, rej.status, map[string]any{"error": map[string]string{"code": code, "message": rej.msg, "correlationId": id}})
}
