package door

import (
	"errors"
	"fmt"
	"net/http"
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

// Error returns the code and message.
func (e *APIError) Error() string { return e.Code + ": " + e.Message }

// Invalid returns a 400 invalid_request error.
func Invalid(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// Unsupported returns a 400 unsupported_filter error naming the filter.
func Unsupported(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Code: CodeUnsupportedFilter, Message: fmt.Sprintf(format, args...)}
}

// NotImplemented returns a 501 not_implemented error.
func NotImplemented(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusNotImplemented, Code: CodeNotImplemented, Message: fmt.Sprintf(format, args...)}
}

// The errors every door answers the same way.
var (
	ErrNotFound    = &APIError{Status: http.StatusNotFound, Code: CodeNotFound, Message: "no such resource"}
	ErrUnavailable = &APIError{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Message: "the search index is unavailable; retry shortly"}
	ErrInternal    = &APIError{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "internal error"}
)

// ErrorBody is the JSON shape of the Agent Finder error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the error member of an ErrorBody.
type ErrorDetail struct {
	Code          string `json:"code"`
	Message       string `json:"message"`
	CorrelationID string `json:"correlationId"`
}

// Classify maps any error to what the client is told. It is the one place
// that decides statuses and codes; each door then writes it in its own
// ErrorShape.
func Classify(err error) *APIError {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	var fe *filterlang.Error
	switch {
	case errors.As(err, &fe) && fe.Unsupported:
		return Unsupported("%s", fe.Message)
	case errors.As(err, &fe):
		return Invalid("%s", fe.Message)
	}
	switch search.KindOf(err) {
	case search.KindInvalid:
		return Invalid("%s", search.MessageOf(err))
	case search.KindUnsupported:
		return Unsupported("%s", search.MessageOf(err))
	case search.KindNotFound:
		return &APIError{Status: http.StatusNotFound, Code: CodeNotFound, Message: search.MessageOf(err)}
	case search.KindUnavailable:
		return ErrUnavailable
	}
	return ErrInternal
}

// ErrorShape encodes a classified error as one door answers errors: Agent
// Finder's {"error":{...}} (AgentFinderError), xu's, HAIDIP's, ADP's.
type ErrorShape func(ae *APIError, correlationID string) any

// AgentFinderError is the error body of the Agent Finder API (and the
// default): {"error":{"code","message","correlationId"}}.
func AgentFinderError(ae *APIError, cid string) any {
	return ErrorBody{Error: ErrorDetail{Code: ae.Code, Message: ae.Message, CorrelationID: cid}}
}
