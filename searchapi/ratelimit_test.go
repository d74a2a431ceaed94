package searchapi

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/agentfinder/agentfinder/searchapi/door"
)

// clientFrom is an HTTP client whose connections leave from the loopback
// address ip, so the server sees it as its own client.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

// post sends a search as client c and returns the status, the Retry-After
// header and the error code.
func post(t *testing.T, c *http.Client, base, text string) (int, string, string) {
	t.Helper()
	body := `{"query":{"text":` + strconv.Quote(text) + `,"federation":"none"}}`
	resp, err := c.Post(base+"/search", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out searchOut
	_ = json.NewDecoder(resp.Body).Decode(&out)
	code := ""
	if out.Error != nil {
		code = out.Error.Code
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), code
}

// TestFloodAndSlowBodies runs a server with two request slots and a small
// per-client rate on real sockets: a client flooding it gets 429s while
// another client's searches succeed, and clients trickling bodies neither
// take slots nor keep others out; they get 408 after the body timeout.
func TestFloodAndSlowBodies(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newFixture(t, func(c *Config) {
		c.MaxConcurrent = 2
		c.BodyTimeout = time.Second
		c.RateLimit = RateLimit{PerSecond: 2, Burst: 4}
		c.Metrics = reg
	})
	refused := func(reason string) float64 {
		return testutil.ToFloat64(f.srv.metrics.refusals.WithLabelValues(reason))
	}

	t.Run("flood", func(t *testing.T) {
		flooder, other := clientFrom("127.0.0.2"), clientFrom("127.0.0.3")
		limited := 0
		for i := range 20 {
			status, retry, code := post(t, flooder, f.http.URL, "weather")
			if status == http.StatusTooManyRequests {
				limited++
				if code != door.CodeRateLimited || retry == "" || retry == "0" {
					t.Fatalf("429 with code %q, Retry-After %q", code, retry)
				}
			} else if status != http.StatusOK {
				t.Fatalf("flooder's search %d: %d", i, status)
			}
			if i%5 == 4 {
				if status, _, _ := post(t, other, f.http.URL, "weather"); status != http.StatusOK {
					t.Fatalf("the other client's search during the flood: %d", status)
				}
			}
		}
		// A burst of 4 and 2 per second: most of 20 back-to-back requests wait.
		if limited < 10 {
			t.Fatalf("%d of 20 flooding requests limited", limited)
		}
		if got := refused(refusedRateLimited); got != float64(limited) {
			t.Errorf("refused{rate_limited} = %v, want %d", got, limited)
		}
		// A browser over its rate gets the error page, with Retry-After too.
		req, _ := http.NewRequest(http.MethodGet, f.http.URL+"/?q=weather", nil)
		req.Header.Set("Accept", "text/html")
		resp, err := flooder.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || resp.Header.Get("Retry-After") == "" {
			t.Errorf("flooding browser: %d %q Retry-After %q, want 429 text/html with Retry-After", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Retry-After"))
		}
		// Probes are never limited, even for the flooding client.
		for _, p := range []string{"/healthz", "/readyz"} {
			resp, err := flooder.Get(f.http.URL + p)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s from the flooding client: %d", p, resp.StatusCode)
			}
		}
	})

	t.Run("slow bodies", func(t *testing.T) {
		const slow = 5 // more than the 2 slots
		addr := strings.TrimPrefix(f.http.URL, "http://")
		var conns []*bufio.Reader
		for i := range slow {
			ip := "127.0.1." + strconv.Itoa(i+1) // one client each: under its rate
			c, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			// Expect: 100-continue makes the server say when a handler
			// starts reading the body; then only part of it comes.
			if _, err := io.WriteString(c, "POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+
				"Content-Length: 60\r\nExpect: 100-continue\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			line, err := br.ReadString('\n')
			if err != nil || !strings.Contains(line, " 100 ") {
				t.Fatalf("slow client %d: %q %v, want 100 Continue (a 429 means it was refused a slot)", i, line, err)
			}
			if _, err := br.ReadString('\n'); err != nil { // the blank line after 100
				t.Fatal(err)
			}
			if _, err := io.WriteString(c, `{"query":`); err != nil {
				t.Fatal(err)
			}
			conns = append(conns, br)
		}
		other := clientFrom("127.0.0.4") // a fresh client: 127.0.0.3 spent its burst above
		for range 3 {
			if status, _, _ := post(t, other, f.http.URL, "weather"); status != http.StatusOK {
				t.Fatalf("search while %d bodies trickle: %d", slow, status)
			}
		}
		for i, br := range conns {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("slow client %d: %v", i, err)
			}
			var out searchOut
			_ = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout || out.Error == nil || out.Error.Code != door.CodeInvalidRequest {
				t.Errorf("slow client %d: %d %+v, want 408 invalid_request", i, resp.StatusCode, out.Error)
			}
		}
		if got := refused(refusedSlowBody); got != slow {
			t.Errorf("refused{slow_body} = %v, want %d", got, slow)
		}
	})
}

// TestSearchOutlivesBodyTimeout: the body deadline ends with the body; a
// search that takes longer than it still answers.
func TestSearchOutlivesBodyTimeout(t *testing.T) {
	emb := &blockingEmbedder{entered: make(chan struct{}, 1), release: make(chan struct{})}
	f := newFixture(t, func(c *Config) { c.Embedder = emb; c.BodyTimeout = 50 * time.Millisecond })
	type answer struct {
		status int
		out    searchOut
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		resp, err := http.Post(f.http.URL+"/search", "application/json", strings.NewReader(`{"query":{"text":"weather","federation":"none"}}`))
		if err != nil {
			a.err = err
			done <- a
			return
		}
		defer resp.Body.Close()
		a.status, a.err = resp.StatusCode, json.NewDecoder(resp.Body).Decode(&a.out)
		done <- a
	}()
	<-emb.entered
	time.Sleep(200 * time.Millisecond) // past the body deadline; not a timing assertion
	close(emb.release)
	// A cancelled search would write nothing (an empty 200).
	if a := <-done; a.err != nil || a.status != http.StatusOK || len(a.out.Results) == 0 {
		t.Fatalf("search held past the body timeout: %d, %d results, %v", a.status, len(a.out.Results), a.err)
	}
}

func TestClientAddress(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	l, err := newClientLimiter(RateLimit{PerSecond: 1, TrustedProxies: trusted}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"direct client", "198.51.100.7:5000", nil, "198.51.100.7"},
		{"untrusted peer's XFF is ignored", "198.51.100.7:5000", []string{"203.0.113.9"}, "198.51.100.7"},
		{"trusted proxy", "10.1.2.3:5000", []string{"203.0.113.9"}, "203.0.113.9"},
		{"right-most untrusted hop", "10.1.2.3:5000", []string{"192.0.2.1, 203.0.113.9, 10.9.9.9"}, "203.0.113.9"},
		{"spoofed left part ignored", "10.1.2.3:5000", []string{"1.2.3.4", "203.0.113.9"}, "203.0.113.9"},
		{"all hops trusted", "10.1.2.3:5000", []string{"10.4.4.4"}, "10.4.4.4"},
		{"garbage ends the walk", "10.1.2.3:5000", []string{"203.0.113.9, nonsense"}, "10.1.2.3"},
		{"proxy without XFF", "10.1.2.3:5000", nil, "10.1.2.3"},
		{"IPv6 proxy, mapped IPv4 client", "[fd00::1]:5000", []string{"::ffff:203.0.113.9"}, "203.0.113.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/agents", nil)
			r.RemoteAddr = tc.peer
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := l.who.client(r).String(); got != tc.want {
				t.Errorf("client = %s, want %s", got, tc.want)
			}
		})
	}
	// One IPv6 /64 is one client.
	if a, b := clientKey(netip.MustParseAddr("2001:db8:1:2::1")), clientKey(netip.MustParseAddr("2001:db8:1:2:ffff::9")); a != b {
		t.Errorf("same /64, different buckets: %s %s", a, b)
	}
}

// TestRateLimitBucket drives one bucket with a fake clock: the burst, the
// wait it reports, the refill, and the bound on clients kept.
func TestRateLimitBucket(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	l, err := newClientLimiter(RateLimit{PerSecond: 4, Burst: 2, MaxClients: 2}, clock)
	if err != nil {
		t.Fatal(err)
	}
	req := func(ip string) *http.Request {
		r := httptest.NewRequestWithContext(context.Background(), "GET", "/agents", nil)
		r.RemoteAddr = ip + ":1"
		return r
	}
	for i := range 2 {
		if ok, _ := l.allow(req("192.0.2.1")); !ok {
			t.Fatalf("request %d within the burst refused", i)
		}
	}
	ok, wait := l.allow(req("192.0.2.1"))
	if ok || wait != 250*time.Millisecond {
		t.Fatalf("over the burst: ok %v, wait %v; want refused, 250ms (4 per second)", ok, wait)
	}
	mu.Lock()
	now = now.Add(wait)
	mu.Unlock()
	if ok, _ := l.allow(req("192.0.2.1")); !ok {
		t.Fatal("refused after waiting what it was told")
	}
	l.allow(req("192.0.2.2"))
	l.allow(req("192.0.2.3"))
	if n := l.clients.Len(); n != 2 {
		t.Fatalf("%d clients kept, want MaxClients (2)", n)
	}
	if _, err := newClientLimiter(RateLimit{PerSecond: -1}, time.Now); err == nil {
		t.Error("a negative rate was accepted")
	}
	if l, err := newClientLimiter(RateLimit{}, time.Now); l != nil || err != nil {
		t.Errorf("zero RateLimit: %v %v, want no limiter", l, err)
	}
}

// TestPerClientInFlight: a client with MaxPerClient searches in flight is
// refused another, while a second client still gets a slot.
func TestPerClientInFlight(t *testing.T) {
	emb := &blockingEmbedder{entered: make(chan struct{}, 4), release: make(chan struct{})}
	f := newFixture(t, func(c *Config) { c.Embedder = emb; c.MaxConcurrent = 8; c.MaxPerClient = 1 })
	a, b := clientFrom("127.0.0.5"), clientFrom("127.0.0.6")
	held := make(chan int, 2)
	go func() { status, _, _ := post(t, a, f.http.URL, "weather"); held <- status }()
	<-emb.entered // a's first search holds its one place
	if status, _, code := post(t, a, f.http.URL, "weather"); status != http.StatusTooManyRequests || code != door.CodeRateLimited {
		t.Errorf("a's second search in flight: %d %s, want 429 rate_limited", status, code)
	}
	go func() { status, _, _ := post(t, b, f.http.URL, "weather"); held <- status }()
	<-emb.entered // b got a slot of its own
	close(emb.release)
	for range 2 {
		if status := <-held; status != http.StatusOK {
			t.Errorf("held search: %d", status)
		}
	}
}
