package federation

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// loopback is where the tests' upstreams listen.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func TestMain(m *testing.M) {
	// Idle keep-alive connections of the Meilisearch clients the end-to-end
	// tests use (meilitest offers no way to close them) are not leaks of
	// ours; every Federator closes its own in t.Cleanup.
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"))
}

// newFederator builds a Federator closed at the end of the test.
//
// Every upstream of these tests listens on loopback, which the network guard
// refuses by default: unless cfg opens something itself, the loopback
// ranges (and only those) are opened.
func newFederator(t testing.TB, cfg Config) *Federator {
	t.Helper()
	if !cfg.AllowPrivate && cfg.AllowCIDRs == nil {
		cfg.AllowCIDRs = loopback
	}
	f, err := New(cfg, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

// entry is a catalog entry as a registry would return it.
func entry(id, name string, extra ...any) map[string]any {
	e := map[string]any{
		"identifier":  id,
		"displayName": name,
		"type":        "application/a2a-agent-card+json",
		"url":         "https://" + strings.Split(id, ":")[2] + "/agents/" + name + ".json",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		e[extra[i].(string)] = extra[i+1]
	}
	return e
}

// localHit is a hit from this registry's own index.
func localHit(id string, score float64, verified bool) Hit {
	e := entry(id, "local "+id)
	e["source"] = "https://local.test/"
	e["score"] = score
	raw := map[string]json.RawMessage{}
	for k, v := range e {
		raw[k] = mustJSON(v)
	}
	return Hit{Identifier: id, Entry: raw, Score: score, Source: "https://local.test/", Verified: verified, Local: true}
}

// localOf pages over hits; the token is the offset.
func localOf(hits []Hit) LocalSearch {
	return func(_ context.Context, q Query, tok string) ([]Hit, string, error) {
		off, _ := strconv.Atoi(tok)
		end := min(off+q.PageSize, len(hits))
		if off >= len(hits) {
			return nil, "", nil
		}
		next := ""
		if end < len(hits) {
			next = strconv.Itoa(end)
		}
		return hits[off:end], next, nil
	}
}

// swapServer is an httptest server whose handler can be set after its URL
// is known.
type swapServer struct {
	*httptest.Server
	h     atomic.Value // http.Handler
	calls atomic.Int64
	mu    sync.Mutex
	reqs  []recorded
}

type recorded struct {
	body map[string]any
	via  string
	auth string // the Authorization header
}

func newSwapServer(t testing.TB, h http.Handler) *swapServer {
	s := &swapServer{}
	s.h.Store(h)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		s.mu.Lock()
		s.reqs = append(s.reqs, recorded{body: m, via: r.Header.Get("Via"), auth: r.Header.Get("Authorization")})
		s.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		s.h.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *swapServer) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// listHandler answers v0.4.2 requests from a fixed list of entries, paged
// (the token is the offset), after delay.
func listHandler(entries []map[string]any, delay time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		var req struct {
			Query struct {
				Text string `json:"text"`
			} `json:"query"`
			PageSize  int    `json:"pageSize"`
			PageToken string `json:"pageToken"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Query.Text == "" {
			writeJSON(w, 400, map[string]any{"error": map[string]string{"code": "invalid_request"}})
			return
		}
		off, _ := strconv.Atoi(req.PageToken)
		n := req.PageSize
		if n <= 0 {
			n = 10
		}
		end := min(off+n, len(entries))
		res := []map[string]any{}
		if off < len(entries) {
			res = entries[off:end]
		}
		out := map[string]any{"results": res}
		if end < len(entries) {
			out["pageToken"] = strconv.Itoa(end)
		}
		writeJSON(w, 200, out)
	})
}

// hangHandler never answers; it returns when the client gives up.
func hangHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
}

// capturesDir holds real answers of the hf-agentfinder challenge registry
// (copied from the shared realworld folder).
const capturesDir = "testdata/hf-challenge-captures"

// hfHandler replays the captured hf-agentfinder answers, with the
// capture's base URL replaced by base. Like that server (pydantic, extra
// fields forbidden) it rejects the v0.4.2 request shape with the captured
// 422.
func hfHandler(t testing.TB, base func() string) http.Handler {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(capturesDir, name))
		if err != nil {
			t.Fatalf("capture: %v", err)
		}
		return b
	}
	files := map[string][]byte{}
	for _, n := range []string{"error-422-v042-request-shape.json", "error-422-pagesize-200.json",
		"search-root-auto.json", "search-root-none.json", "search-root-referrals.json",
		"search-tools-referrals.json", "search-skills-referrals.json", "search-nested-referrals.json",
		"search-deep-referrals.json", "search-empty-referrals.json"} {
		files[n] = read(n)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]json.RawMessage
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
			writeJSON(w, 422, map[string]any{"detail": "bad body"})
			return
		}
		var q map[string]json.RawMessage
		_ = json.Unmarshal(req["query"], &q)
		for k := range q {
			if k != "text" && k != "filter" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(422)
				_, _ = w.Write(files["error-422-v042-request-shape.json"])
				return
			}
		}
		var size int
		_ = json.Unmarshal(req["pageSize"], &size)
		if size > 100 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(422)
			_, _ = w.Write(files["error-422-pagesize-200.json"])
			return
		}
		var name string
		switch {
		case r.URL.Path == "/search":
			var fed string
			_ = json.Unmarshal(req["federation"], &fed)
			if fed == "" {
				fed = "auto"
			}
			name = "search-root-" + fed + ".json"
		case strings.HasPrefix(r.URL.Path, "/registries/") && strings.HasSuffix(r.URL.Path, "/search"):
			reg := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/registries/"), "/search")
			name = "search-" + reg + "-referrals.json"
		}
		body, ok := files[name]
		if !ok {
			writeJSON(w, 404, map[string]any{"detail": "Not Found"})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(strings.ReplaceAll(string(body), "http://127.0.0.1:8090", base())))
	})
}

// ownRegistry is this registry's federation behind a minimal POST /search
// (what searchapi does, reduced to the federation contract): several of
// them make a network of our own servers.
type ownRegistry struct {
	*swapServer
	fed *Federator
}

func newOwnRegistry(t testing.TB, cfg func(self string) Config, local []Hit) *ownRegistry {
	o := &ownRegistry{}
	o.swapServer = newSwapServer(t, http.NotFoundHandler())
	o.fed = newFederator(t, cfg(o.URL))
	o.h.Store(http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query struct {
				Text       string `json:"text"`
				Federation string `json:"federation"`
			} `json:"query"`
			PageSize  int    `json:"pageSize"`
			PageToken string `json:"pageToken"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeJSON(w, 400, map[string]any{"error": map[string]string{"code": "invalid_request"}})
			return
		}
		mode, err := ParseMode(req.Query.Federation)
		if err != nil {
			writeJSON(w, 400, map[string]any{"error": map[string]string{"code": "invalid_request"}})
			return
		}
		q := Query{Text: req.Query.Text, PageSize: req.PageSize}
		var resp Response
		if mode == ModeNone {
			hits, _, _ := localOf(local)(r.Context(), normQuery(q), "")
			for _, h := range hits {
				resp.Results = append(resp.Results, o.fed.present(h))
			}
		} else {
			resp, err = o.fed.Search(r.Context(), mode, q, req.PageToken, r.Header.Values("Via"), localOf(local))
			if err != nil {
				writeJSON(w, 500, map[string]any{"error": map[string]string{"code": "internal"}})
				return
			}
		}
		results := []map[string]json.RawMessage{}
		for _, h := range resp.Results {
			results = append(results, h.Entry)
		}
		writeJSON(w, 200, map[string]any{"results": results, "referrals": resp.Referrals, "pageToken": resp.PageToken, "upstreams": resp.Upstreams})
	})))
	return o
}

// ids lists the identifiers of hits.
func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Identifier
	}
	return out
}

// outcomeOf finds the outcome for an endpoint.
func outcomeOf(t testing.TB, r Response, endpoint string) Outcome {
	t.Helper()
	for _, o := range r.Upstreams {
		if o.Registry == endpoint {
			return o
		}
	}
	t.Fatalf("no outcome for %s in %+v", endpoint, r.Upstreams)
	return Outcome{}
}

func field(t testing.TB, h Hit, k string) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(h.Entry[k], &s); err != nil {
		t.Fatalf("%s.%s = %s: %v", h.Identifier, k, h.Entry[k], err)
	}
	return s
}

var _ = fmt.Sprintf
