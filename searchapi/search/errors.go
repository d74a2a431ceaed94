package search

import (
	"errors"
	"fmt"
	"net"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/federation"
)

// Kind is what went wrong, as a door tells its client: each door maps a
// kind to its own status and code.
type Kind int

// The kinds of error the engine returns.
const (
	// KindInternal is anything unexpected: the door answers a generic
	// server error and logs the detail.
	KindInternal Kind = iota
	// KindInvalid is a request the engine cannot read (400 invalid_request).
	KindInvalid
	// KindUnsupported names a filter or facet the engine does not know
	// (400 unsupported_filter).
	KindUnsupported
	// KindNotFound is a record that does not exist or that the caller may
	// not see (404 not_found).
	KindNotFound
	// KindUnavailable is Meilisearch unreachable, failing or without the
	// index yet (503 unavailable).
	KindUnavailable
)

// Error is an error of the request with a message safe to show its
// client.
type Error struct {
	Kind    Kind
	Message string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// invalid returns a KindInvalid error.
func invalid(format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Message: fmt.Sprintf(format, args...)}
}

// unsupported returns a KindUnsupported error.
func unsupported(format string, args ...any) *Error {
	return &Error{Kind: KindUnsupported, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a KindInvalid error with the message a door's own
// request reading composed, for the checks of a door's fields that share
// the engine's rules (ParsePageSize and the like).
func Invalid(format string, args ...any) *Error { return invalid(format, args...) }

// Unsupported returns a KindUnsupported error with the door's message.
func Unsupported(format string, args ...any) *Error { return unsupported(format, args...) }

// KindOf classifies any error the engine returned; messages of kinds other
// than KindInternal are safe to show (MessageOf).
func KindOf(err error) Kind {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.Kind
	case errors.Is(err, federation.ErrInvalidPageToken), errors.Is(err, federation.ErrInvalidMode):
		return KindInvalid
	case meiliUnavailable(err):
		return KindUnavailable
	}
	return KindInternal
}

// MessageOf is what a client may be told about err: its message for an
// *Error and the federation errors, "" for anything else (the door says
// something generic for its kind).
func MessageOf(err error) string {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.Message
	case errors.Is(err, federation.ErrInvalidPageToken):
		return "pageToken is not a token issued by this registry for this query"
	case errors.Is(err, federation.ErrInvalidMode):
		return "federation must be auto, referrals or none"
	}
	return ""
}

// meiliUnavailable reports whether err means Meilisearch could not be
// reached or answered with a server-side failure.
func meiliUnavailable(err error) bool {
	var me *meilisearch.Error
	if errors.As(err, &me) {
		switch me.ErrCode {
		case meilisearch.MeilisearchCommunicationError, meilisearch.MeilisearchTimeoutError, meilisearch.MeilisearchMaxRetriesExceeded:
			return true
		}
		if me.StatusCode >= 500 {
			return true
		}
	}
	if indexNotFound(err) {
		return true // ingest has not created the index yet
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

// noEmbedder reports whether err is Meilisearch refusing a vector search
// because the index has no embedder of that name (yet).
func noEmbedder(err error) bool {
	var me *meilisearch.Error
	return errors.As(err, &me) && me.MeilisearchApiError.Code == "invalid_search_embedder"
}

// indexNotFound reports whether err is Meilisearch answering that an index
// the request names does not exist.
func indexNotFound(err error) bool {
	var me *meilisearch.Error
	return errors.As(err, &me) && me.MeilisearchApiError.Code == "index_not_found"
}
