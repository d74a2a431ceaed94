package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// ErrOtherHost: a redirect left the host a fetch was pinned to.
var ErrOtherHost = errors.New("redirect to another host")

// ErrNotFound: the server answered, but not with 200 OK.
var ErrNotFound = errors.New("not found")

// FetchOwnershipFile fetches a small file by which a publisher proves it
// controls a host (an IndexNow key file, say) with the crawl's rules:
// robots.txt, host patterns, the network guard, size and time limits and
// retries. Redirects are followed hop by hop, but only on the URL's own
// host: a hop to another host fails with ErrOtherHost, since a file there
// proves nothing about this one. Any final status but 200 is ErrNotFound.
func (c *Crawler) FetchOwnershipFile(ctx context.Context, raw string) ([]byte, error) {
	u, err := parseHTTPURL(raw)
	if err != nil {
		return nil, err
	}
	s := c.newSession(ctx)
	s.pinHost = u.Host
	f, err := s.get(ctx, u.String(), kindOwnership, nil)
	if err != nil {
		return nil, err
	}
	if f.Status != http.StatusOK {
		return nil, fmt.Errorf("get %s: status %d: %w", f.URL, f.Status, ErrNotFound)
	}
	return f.Body, nil
}
