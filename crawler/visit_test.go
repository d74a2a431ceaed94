package crawler_test

import (
	"bytes"
	"errors"
	"net/http"
	"testing"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/fixtures"
)

func TestVisitor(t *testing.T) {
	web := startWeb(t)
	c := newCrawler(t, webConfig(web), nil)
	v := c.NewVisitor(t.Context())
	hdr := http.Header{"Content-Type": {"application/json"}}

	cases := []struct {
		name, method, host, path string
		status                   int
		err                      error
	}{
		{"post reaches the endpoint", http.MethodPost, fixtures.HostLive, fixtures.PathLiveUp, http.StatusOK, nil},
		{"a server error is an answer", http.MethodPost, fixtures.HostLive, fixtures.PathLiveDown, http.StatusServiceUnavailable, nil},
		{"robots.txt is obeyed", http.MethodPost, fixtures.HostLive, fixtures.PathLiveHidden, 0, crawler.ErrRobotsDisallowed},
		// Only the headers are read: a 5 MiB body and a trickling one end at once.
		{"huge body unread", http.MethodGet, fixtures.HostBroken, fixtures.PathHuge, http.StatusOK, nil},
		{"trickling body unread", http.MethodGet, fixtures.HostBroken, fixtures.PathTrickle, http.StatusOK, nil},
		// GET follows a redirect hop by hop; other methods get the redirect.
		{"get follows redirects", http.MethodGet, fixtures.HostLoop, fixtures.PathWellKnown, 0, crawler.ErrRedirectLoop},
		{"post does not", http.MethodPost, fixtures.HostLoop, fixtures.PathWellKnown, http.StatusFound, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := v.Visit(t.Context(), tc.method, web.URL(tc.host, tc.path), hdr, []byte(`{"jsonrpc":"2.0"}`))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Visit: %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Visit: %v", err)
			}
			if res.Status != tc.status || res.Elapsed <= 0 {
				t.Errorf("Visit: status %d after %v, want %d after some time", res.Status, res.Elapsed, tc.status)
			}
		})
	}
	if web.Fetched(fixtures.HostLive, fixtures.PathLiveHidden) {
		t.Error("a path robots.txt disallows was requested")
	}
	var posted bool
	for _, r := range web.RequestsFor(fixtures.HostLive) {
		posted = posted || (r.Method == http.MethodPost && r.Path == fixtures.PathLiveUp)
	}
	if !posted {
		t.Error("the fixture web saw no POST")
	}

	t.Run("the network guard applies", func(t *testing.T) {
		cfg := webConfig(web)
		cfg.AllowPrivate = false
		guarded := newCrawler(t, cfg, nil).NewVisitor(t.Context())
		_, err := guarded.Visit(t.Context(), http.MethodGet, web.URL(fixtures.HostLive, fixtures.PathLiveUp), nil, nil)
		if !errors.Is(err, crawler.ErrSSRFBlocked) {
			t.Errorf("Visit of a loopback address with private addresses refused: %v, want ErrSSRFBlocked", err)
		}
	})
}

// TestVisitorExchange: an exchange reads the body, up to its own limit: a
// larger one is ErrTooLarge (a huge unannounced one is probe's
// TestToolListBounded).
func TestVisitorExchange(t *testing.T) {
	web := startWeb(t)
	c := newCrawler(t, webConfig(web), nil)
	v := c.NewVisitor(t.Context())
	res, err := v.Exchange(t.Context(), http.MethodPost, web.URL(fixtures.HostLive, fixtures.PathLiveUp), nil, []byte(`{"jsonrpc":"2.0"}`), 4096)
	if err != nil || res.Status != http.StatusOK || !bytes.Contains(res.Body, []byte(`"jsonrpc"`)) || res.Elapsed <= 0 {
		t.Fatalf("Exchange: %+v, %v; want 200 with the JSON-RPC body", res, err)
	}
	if _, err := v.Exchange(t.Context(), http.MethodGet, web.URL(fixtures.HostLive, fixtures.PathWellKnown), nil, nil, 16); !errors.Is(err, crawler.ErrTooLarge) {
		t.Errorf("Exchange of a catalog with a 16-byte limit: %v, want ErrTooLarge", err)
	}
}
