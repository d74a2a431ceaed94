package searchapi

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
)

// DefaultCORSOrigins lets any origin call the read-only API from a browser.
var DefaultCORSOrigins = []string{"*"}

// cors adds the CORS headers of the read-only API (every route this
// Server answers; the admin endpoints live elsewhere and never get them)
// and answers preflight requests. It reports whether it answered.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || len(s.cfg.CORSOrigins) == 0 {
		return false
	}
	allowed := ""
	switch {
	case slices.Contains(s.cfg.CORSOrigins, "*"):
		allowed = "*"
	case slices.Contains(s.cfg.CORSOrigins, origin):
		allowed = origin
	}
	h := w.Header()
	if allowed != "*" {
		h.Add("Vary", "Origin")
	}
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		methods := s.allowedMethods(r)
		if allowed == "" || len(methods) == 0 {
			return false // not for us: answered like any other OPTIONS
		}
		h.Set("Access-Control-Allow-Origin", allowed)
		h.Set("Access-Control-Allow-Methods", strings.Join(append(methods, http.MethodOptions), ", "))
		h.Set("Access-Control-Allow-Headers", "Content-Type, Accept, X-Correlation-ID")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	if allowed != "" {
		h.Set("Access-Control-Allow-Origin", allowed)
		h.Set("Access-Control-Expose-Headers", "X-Correlation-ID, Retry-After")
	}
	return false
}

// routeKey carries a *string through a request's context: the route pattern
// the innermost mux matched, for the access log.
type routeKey struct{}

// noteRoute records pattern as r's route for an enclosing AccessLog.
func noteRoute(r *http.Request, pattern string) {
	if p, ok := r.Context().Value(routeKey{}).(*string); ok && pattern != "" {
		*p = pattern
	}
}

// AccessLog wraps next with one info line per request: method, route
// pattern (bounded, unlike paths), status, duration and correlation id.
// Wrap the outermost handler so every route (API, metrics, admin) is in it.
func AccessLog(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var route string
		r = r.WithContext(context.WithValue(r.Context(), routeKey{}, &route))
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if route == "" {
			route = r.Pattern // set by a mux that routed this very request
		}
		if route == "" || route == "/" {
			route = "unmatched"
		}
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("route", route), slog.Int("status", status),
			slog.Duration("duration", time.Since(start)), slog.String("correlationId", w.Header().Get("X-Correlation-ID")))
	})
}
