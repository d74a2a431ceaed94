package searchapi

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agentfinder/agentfinder/searchapi/door"
)

// defaultBodyTimeout is Config.BodyTimeout's default: a search body is a few
// hundred bytes, so even a slow link sends it well within this.
const defaultBodyTimeout = 5 * time.Second

// bufferBody reads the request body into memory (readBody) before the
// request takes a slot, so a client trickling its body holds a connection
// but never a slot. Requests without a body pass untouched.
func (s *Server) bufferBody(w http.ResponseWriter, r *http.Request) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	raw, err := door.ReadBody(w, r, s.cfg.BodyTimeout)
	if err != nil {
		if errors.Is(err, door.ErrSlowBody) {
			s.metrics.refused(refusedSlowBody)
			return fmt.Errorf("%w within %s", door.ErrSlowBody, s.cfg.BodyTimeout)
		}
		return err
	}
	door.Buffer(r, raw)
	return nil
}
