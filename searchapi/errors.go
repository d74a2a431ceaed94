package searchapi

import (
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/agentfinder/agentfinder/searchapi/door"
)

// writeError writes err as the client should see it, in the error shape of
// the route r was routed to (shapeOf), and logs it once. A request whose client went away
// gets nothing written and no error logged.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.reportError(w, r, err)
	if ae == nil {
		return
	}
	door.WriteJSON(w, ae.Status, s.shapeOf(r)(ae, door.CorrelationID(r.Context())))
}

// shapeOf is the error shape of the route r was routed to, as its door
// registered it (mount); the Agent Finder shape for any other.
func (s *Server) shapeOf(r *http.Request) door.ErrorShape {
	if sh := s.shapes[r.Pattern]; sh != nil {
		return sh
	}
	return door.AgentFinderError
}

// reportError classifies err, logs it once and sets the headers its status
// calls for. It returns nil when the client went away (or the server is
// shutting down): nobody reads an answer, and it is not an error of ours.
func (s *Server) reportError(w http.ResponseWriter, r *http.Request, err error) *door.APIError {
	cid := door.CorrelationID(r.Context())
	// A body that timed out cancels the request's context too, but its
	// slow client is still there to be told.
	if r.Context().Err() != nil && !errors.Is(err, door.ErrSlowBody) {
		// The client went away (or the server is shutting down): nobody reads
		// an answer, and it is not an error of ours.
		s.log.Debug("request cancelled", "correlationId", cid, "path", r.URL.Path)
		return nil
	}
	ae := door.Classify(err)
	switch {
	case ae.Status >= 500:
		s.log.Error("request failed", "correlationId", cid, "path", r.URL.Path, "status", ae.Status, "err", err)
	default:
		s.log.Debug("request rejected", "correlationId", cid, "path", r.URL.Path, "status", ae.Status, "code", ae.Code, "err", err)
	}
	switch {
	case ae.RetryAfter > 0:
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(ae.RetryAfter.Seconds()))))
	case ae.Status == http.StatusServiceUnavailable || ae.Status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
	}
	return ae
}

// page wraps a page handler: the concurrency limit of the API, and errors
// as HTML pages with the status door.Classify gives them.
func (s *Server) page(h door.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, err := s.authenticate(w, r)
		if err != nil {
			s.writeErrorPage(w, r, err)
			return
		}
		release, err := s.slot(r)
		if err != nil {
			s.writeErrorPage(w, r, err)
			return
		}
		defer release()
		if err := h(w, r); err != nil {
			s.writeErrorPage(w, r, err)
		}
	})
}

// writeErrorPage is writeError for people: the same status, code and log
// line, as the site's page that says what happened and what to do.
func (s *Server) writeErrorPage(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.reportError(w, r, err)
	if ae == nil {
		return
	}
	s.site.ErrorPage(w, r, ae)
}
