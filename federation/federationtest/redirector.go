// Package federationtest gives tests upstream registries that try to abuse
// the federator. Only tests import it: it imports testing.
package federationtest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Redirector is an upstream registry on 127.0.0.2 that answers every
// request with a 307 to a service on 127.0.0.1, the victim: an upstream
// that tries to make the federator reach a private service. Only
// 127.0.0.2/32 needs opening to reach the upstream itself.
type Redirector struct {
	// URL is the upstream's base URL.
	URL         string
	calls       atomic.Int64
	victimCalls atomic.Int64
}

// NewRedirector starts a Redirector and its victim; both are closed when
// the test ends.
func NewRedirector(t testing.TB) *Redirector {
	t.Helper()
	r := &Redirector{}
	victim := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		r.victimCalls.Add(1)
		_, _ = w.Write([]byte(`{"results": []}`))
	}))
	t.Cleanup(victim.Close)
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("federationtest: listen on 127.0.0.2: %v", err)
	}
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.calls.Add(1)
		http.Redirect(w, req, victim.URL+"/search", http.StatusTemporaryRedirect)
	}))
	up.Listener.Close()
	up.Listener = ln
	up.Start()
	t.Cleanup(up.Close)
	r.URL = up.URL
	return r
}

// Calls is how many requests the upstream received.
func (r *Redirector) Calls() int64 { return r.calls.Load() }

// VictimCalls is how many requests reached the service on 127.0.0.1
// (through the redirect or otherwise).
func (r *Redirector) VictimCalls() int64 { return r.victimCalls.Load() }
