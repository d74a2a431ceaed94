package main

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/agentfinder/agentfinder/searchapi"
)

// adminHandler serves /admin/crawl and /admin/status behind a bearer token.
func (s *server) adminHandler(token string) http.Handler {
	mux := &searchapi.Mux{}
	mux.HandleFunc("POST /admin/crawl", s.adminCrawl)
	mux.HandleFunc("GET /admin/status", s.adminStatus)
	mux.HandleFunc("/admin/", adminFallback)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !bearerMatches(r.Header.Get("Authorization"), token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentfinder-admin"`)
			writeAdminError(w, http.StatusUnauthorized, "unauthorized", "a valid admin bearer token is required")
			return
		}
		mux.ServeHTTP(w, r)
	})
	s.routes = append(s.routes, mux.Patterns()...)
	return h
}

// bearerMatches reports whether an Authorization header value carries token
// under the Bearer scheme, whose name is case-insensitive (RFC 9110 §11.1).
func bearerMatches(header, token string) bool {
	scheme, got, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}

// adminAllow is the Allow header of each admin endpoint.
var adminAllow = map[string]string{"/admin/crawl": "POST", "/admin/status": "GET, HEAD"}

// adminFallback answers what no admin route matched in the error model: a
// known endpoint with the wrong method is 405 with Allow, anything else 404.
func adminFallback(w http.ResponseWriter, r *http.Request) {
	if allow, ok := adminAllow[r.URL.Path]; ok {
		w.Header().Set("Allow", allow)
		writeAdminError(w, http.StatusMethodNotAllowed, "invalid_request", "method "+r.Method+" is not allowed on "+r.URL.Path)
		return
	}
	writeAdminError(w, http.StatusNotFound, "not_found", "no such admin endpoint")
}

// adminCrawl re-reads the seeds and crawls now: the seeds named by ?seed=
// (repeatable) or a JSON body {"seeds": [...]}, else every seed.
func (s *server) adminCrawl(w http.ResponseWriter, r *http.Request) {
	if !s.opts.crawl {
		writeAdminError(w, http.StatusConflict, "conflict", "crawling is off in this replica (--crawl=false)")
		return
	}
	names := r.URL.Query()["seed"]
	if r.ContentLength != 0 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var body struct {
			Seeds []string `json:"seeds"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
			writeAdminError(w, http.StatusBadRequest, "invalid_request", "body must be {\"seeds\": [...]}")
			return
		}
		names = append(names, body.Seeds...)
	}
	reloadErr := s.sched.Reload()
	if reloadErr != nil {
		s.log.Error("reload seeds failed", "err", reloadErr)
	}
	triggered := s.sched.Trigger(names...)
	if len(names) > 0 && len(triggered) < len(names) {
		writeAdminError(w, http.StatusNotFound, "not_found", "unknown seed: add it to --seed or the seeds file first")
		return
	}
	if s.hooks.schedState != nil { // a cluster's: a new crawl leader runs them too
		if err := s.sched.Save(); err != nil {
			s.log.Warn("triggered seeds not saved: a new crawl leader would not run them now", "err", err)
		}
	}
	resp := map[string]any{"triggered": triggered}
	if reloadErr != nil {
		resp["reloadError"] = reloadErr.Error()
	}
	writeJSON(w, http.StatusAccepted, resp)
}

// adminStatus shows the seeds (only those named by ?seed=, when given),
// their state and last reports, a count of seeds per outcome, ingest's
// counters, the registry book and whether embeddings are on.
func (s *server) adminStatus(w http.ResponseWriter, r *http.Request) {
	emb := map[string]any{"enabled": s.embedNote == ""}
	if s.embedNote != "" {
		emb["reason"] = s.embedNote
	}
	st := s.sched.Status()
	byOutcome := map[string]int{}
	for _, sd := range st.Seeds {
		o := sd.Outcome
		if o == "" {
			o = "pending"
		}
		byOutcome[o]++
	}
	if want := r.URL.Query()["seed"]; len(want) > 0 {
		keep := st.Seeds[:0]
		for _, sd := range st.Seeds {
			if slices.Contains(want, sd.Seed) {
				keep = append(keep, sd)
			}
		}
		st.Seeds = keep
	}
	probes := any(map[string]any{"enabled": false})
	if s.prober != nil {
		probes = s.prober.Stats()
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"probe":      probes,
		"version":    version,
		"index":      s.index,
		"crawl":      s.opts.crawl,
		"outcomes":   byOutcome,
		"scheduler":  st,
		"ingest":     s.indexer.Stats(),
		"registries": s.fed.Book().Registries(),
		"embeddings": emb,
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// writeAdminError writes the xu error model, with a fresh correlation id
// also in the X-Correlation-Id header.
func writeAdminError(w http.ResponseWriter, status int, code, msg string) {
	raw := make([]byte, 8)
	_, _ = rand.Read(raw)
	id := hex.EncodeToString(raw)
	w.Header().Set("X-Correlation-ID", id)
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg, "correlationId": id}})
}
