package door

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/agentfinder/agentfinder/searchapi/search"
)

// MaxBodyBytes bounds every API request body.
const MaxBodyBytes = 64 << 10

// DecodeBody reads a JSON request body of at most MaxBodyBytes into v and
// returns the raw body.
func DecodeBody(w http.ResponseWriter, r *http.Request, v any) ([]byte, error) {
	body, err := ReadBody(w, r, 0)
	if err != nil {
		return nil, err
	}
	if err := search.DecodeJSON(body, v); err != nil {
		return nil, err
	}
	return body, nil
}

// bufferedBody is a request body already read into memory (Buffer).
type bufferedBody struct {
	*bytes.Reader
	raw []byte
}

func (bufferedBody) Close() error { return nil }

// ErrSlowBody answers a body not received within the body timeout.
var ErrSlowBody = &APIError{Status: http.StatusRequestTimeout, Code: CodeInvalidRequest, Message: "request body not received in time"}

// ReadBody returns the request body, at most MaxBodyBytes: the one Buffer
// kept, or read now within timeout (0: no deadline of its own).
func ReadBody(w http.ResponseWriter, r *http.Request, timeout time.Duration) ([]byte, error) {
	if b, ok := r.Body.(bufferedBody); ok {
		return b.raw, nil
	}
	if timeout > 0 {
		rc := http.NewResponseController(w)
		// Writers without deadlines (tests' recorders) read without one.
		_ = rc.SetReadDeadline(time.Now().Add(timeout))
		// Then back to none: the connection's background read must not
		// cancel a search that outlives the body's deadline.
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, Invalid("request body exceeds %d bytes", MaxBodyBytes)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, ErrSlowBody
	case err != nil:
		return nil, Invalid("request body could not be read")
	}
	return raw, nil
}

// Buffer makes raw, the body ReadBody returned, r's body again: read from
// memory by every later ReadBody and DecodeBody.
func Buffer(r *http.Request, raw []byte) {
	r.Body = bufferedBody{Reader: bytes.NewReader(raw), raw: raw}
}
