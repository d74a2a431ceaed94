package searchapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/agentfinder/agentfinder/searchapi/search"
)

// defaultBodyTimeout is Config.BodyTimeout's default: a search body is a few
// hundred bytes, so even a slow link sends it well within this.
const defaultBodyTimeout = 5 * time.Second

// maxBodyBytes bounds every API request body.
const maxBodyBytes = 64 << 10

// decodeBody reads a JSON request body of at most maxBodyBytes into v and
// returns the raw body.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) ([]byte, error) {
	body, err := readBody(w, r, 0)
	if err != nil {
		return nil, err
	}
	if err := search.DecodeJSON(body, v); err != nil {
		return nil, err
	}
	return body, nil
}

// bufferedBody is a request body already read into memory by bufferBody.
type bufferedBody struct {
	*bytes.Reader
	raw []byte
}

func (bufferedBody) Close() error { return nil }

// errSlowBody answers a body not received within the body timeout.
var errSlowBody = &APIError{Status: http.StatusRequestTimeout, Code: CodeInvalidRequest, Message: "request body not received in time"}

// bufferBody reads the request body into memory (readBody) before the
// request takes a slot, so a client trickling its body holds a connection
// but never a slot. Requests without a body pass untouched.
func (s *Server) bufferBody(w http.ResponseWriter, r *http.Request) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	raw, err := readBody(w, r, s.cfg.BodyTimeout)
	if err != nil {
		if errors.Is(err, errSlowBody) {
			s.metrics.refused(refusedSlowBody)
			return fmt.Errorf("%w within %s", errSlowBody, s.cfg.BodyTimeout)
		}
		return err
	}
	r.Body = bufferedBody{Reader: bytes.NewReader(raw), raw: raw}
	return nil
}

// readBody returns the request body, at most maxBodyBytes: the one
// bufferBody kept, or read now within timeout (0: no deadline of its own).
func readBody(w http.ResponseWriter, r *http.Request, timeout time.Duration) ([]byte, error) {
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
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, invalid("request body exceeds %d bytes", maxBodyBytes)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, errSlowBody
	case err != nil:
		return nil, invalid("request body could not be read")
	}
	return raw, nil
}
