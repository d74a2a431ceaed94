package searchapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/agentfinder/agentfinder/searchapi/filterlang"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// Error codes of the xu error model (docs/ARCHITECTURE.md, "External contracts").
const (
	CodeInvalidRequest    = "invalid_request"
	CodeUnsupportedFilter = "unsupported_filter"
	CodeUnauthorized      = "unauthorized"
	CodeForbidden         = "forbidden"
	CodeNotFound          = "not_found"
	CodeConflict          = "conflict"
	CodeRateLimited       = "rate_limited"
	CodeUnavailable       = "unavailable"
	CodeNotImplemented    = "not_implemented"
	CodeInternal          = "internal"
)

// APIError is an error the client may see: an HTTP status, an xu code and a
// message safe to show. Anything that is not an APIError becomes a generic 500.
type APIError struct {
	Status  int
	Code    string
	Message string
	// RetryAfter, when set, is sent as Retry-After (whole seconds, rounded
	// up); 429 and 503 answers without it say 1 second.
	RetryAfter time.Duration
}

func (e *APIError) Error() string { return e.Code + ": " + e.Message }

// invalid returns a 400 invalid_request error.
func invalid(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// unsupported returns a 400 unsupported_filter error naming the filter.
func unsupported(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Code: CodeUnsupportedFilter, Message: fmt.Sprintf(format, args...)}
}

// notImplemented returns a 501 not_implemented error.
func notImplemented(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusNotImplemented, Code: CodeNotImplemented, Message: fmt.Sprintf(format, args...)}
}

var (
	errNotFound    = &APIError{Status: http.StatusNotFound, Code: CodeNotFound, Message: "no such resource"}
	errRateLimited = &APIError{Status: http.StatusTooManyRequests, Code: CodeRateLimited, Message: "too many concurrent requests; retry shortly"}
	errUnavailable = &APIError{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Message: "the search index is unavailable; retry shortly"}
	errInternal    = &APIError{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "internal error"}
)

// errorBody is the JSON shape of every error response.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code          string `json:"code"`
	Message       string `json:"message"`
	CorrelationID string `json:"correlationId"`
}

// classify maps any error to what the client is told. It is the one place
// that decides statuses and codes.
func classify(err error) *APIError {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	var fe *filterlang.Error
	switch {
	case errors.As(err, &fe) && fe.Unsupported:
		return unsupported("%s", fe.Message)
	case errors.As(err, &fe):
		return invalid("%s", fe.Message)
	}
	switch search.KindOf(err) {
	case search.KindInvalid:
		return invalid("%s", search.MessageOf(err))
	case search.KindUnsupported:
		return unsupported("%s", search.MessageOf(err))
	case search.KindNotFound:
		return &APIError{Status: http.StatusNotFound, Code: CodeNotFound, Message: search.MessageOf(err)}
	case search.KindUnavailable:
		return errUnavailable
	}
	return errInternal
}

// newCorrelationID returns a random request id.
func newCorrelationID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// errorShape encodes a classified error as one API binding answers errors:
// Agent Finder's {"error":{...}} (agentFinderError), xu's, HAIDIP's, ADP's.
type errorShape func(ae *APIError, correlationID string) any

// agentFinderError is the error body of the Agent Finder API (and the
// default): {"error":{"code","message","correlationId"}}.
func agentFinderError(ae *APIError, cid string) any {
	return errorBody{Error: errorDetail{Code: ae.Code, Message: ae.Message, CorrelationID: cid}}
}

// bindingErrorShapes are the paths of the bindings that answer errors in
// their protocol's own shape; every other path answers agentFinderError.
var bindingErrorShapes = map[string]errorShape{
	"/discover":      xuError,
	"/agents/search": haidipError,
	"/adp/discover":  adpError,
}

// errorShapeOf returns the error shape of the binding r asked.
func errorShapeOf(r *http.Request) errorShape {
	if sh, ok := bindingErrorShapes[r.URL.Path]; ok {
		return sh
	}
	return agentFinderError
}

// writeError writes err as the client should see it, in the error shape of
// the binding asked, and logs it once. A request whose client went away
// gets nothing written and no error logged.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.reportError(w, r, err)
	if ae == nil {
		return
	}
	writeJSON(w, ae.Status, errorShapeOf(r)(ae, correlationID(r.Context())))
}

// reportError classifies err, logs it once and sets the headers its status
// calls for. It returns nil when the client went away (or the server is
// shutting down): nobody reads an answer, and it is not an error of ours.
func (s *Server) reportError(w http.ResponseWriter, r *http.Request, err error) *APIError {
	cid := correlationID(r.Context())
	// A body that timed out cancels the request's context too, but its
	// slow client is still there to be told.
	if r.Context().Err() != nil && !errors.Is(err, errSlowBody) {
		// The client went away (or the server is shutting down): nobody reads
		// an answer, and it is not an error of ours.
		s.log.Debug("request cancelled", "correlationId", cid, "path", r.URL.Path)
		return nil
	}
	ae := classify(err)
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

// writeJSON writes v with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"internal error","correlationId":""}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	_, _ = w.Write([]byte{'\n'})
}

type ctxKey int

const correlationKey ctxKey = 0

// correlationID returns the request's correlation id.
func correlationID(ctx context.Context) string {
	id, _ := ctx.Value(correlationKey).(string)
	return id
}
