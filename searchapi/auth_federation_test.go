package searchapi

import (
	"slices"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/searchapi/authn"
)

// TestForwardAuthToUpstream runs two instances of our server: the upstream
// (auth optional) holds public and group-marked records; the federating one
// holds none and federates in auto mode. Only an upstream configured with
// ForwardAuth receives the caller's key, so only through it does the key's
// holder see the upstream's hr records; anonymous callers and a bad key
// never do.
func TestForwardAuthToUpstream(t *testing.T) {
	up, _, keysPath := newAuthFixture(t, AuthOptional)
	keys, err := authn.LoadKeys(keysPath) // the same key is valid on both
	if err != nil {
		t.Fatal(err)
	}
	front := func(forward bool) *fixture {
		fc := federation.Config{Name: "https://front.test.example", Upstreams: []string{up.http.URL}, AllowPrivate: true}
		if forward {
			fc.ForwardAuthTo = []string{up.http.URL}
		}
		fed, err := federation.New(fc, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(fed.Close)
		cfg := Config{PublicURL: "https://front.test.example", PageTokenKey: []byte("k"), MinScore: new(int), Now: func() time.Time { return testNow },
			Auth: AuthOptional, Verifiers: []Verifier{keys}, Federation: fed}
		return serveRecords(t, "authfront", nil, nil, nil, cfg, nil)
	}
	publishers := func(f *fixture, tok string) []string {
		t.Helper()
		var out searchOut
		r := f.do("POST", "/search", map[string]any{"query": map[string]any{"text": "payroll", "federation": "auto"}, "pageSize": 50}, bearerHdr(tok), &out)
		if r.StatusCode != 200 {
			t.Fatalf("search as %q: %d %+v", tok, r.StatusCode, out.Error)
		}
		if len(out.Results) == 0 {
			t.Logf("upstreams: %s", out.Upstreams)
		}
		var pubs []string
		for _, res := range out.Results {
			if !slices.Contains(pubs, res.Publisher) {
				pubs = append(pubs, res.Publisher)
			}
		}
		slices.Sort(pubs)
		return pubs
	}
	withFwd, without := front(true), front(false)
	for _, c := range []struct {
		f    *fixture
		tok  string
		want []string
	}{
		{withFwd, "hr-secret", []string{"hr.example", "public.example"}},
		{withFwd, "", []string{"public.example"}},
		{without, "hr-secret", []string{"public.example"}},
		{without, "", []string{"public.example"}},
	} {
		if got := publishers(c.f, c.tok); !slices.Equal(got, c.want) {
			t.Errorf("forward=%v key %q: publishers %v, want %v", c.f == withFwd, c.tok, got, c.want)
		}
	}
	// A key the front refuses is never forwarded: 401 at the front.
	if r := withFwd.do("POST", "/search", map[string]any{"query": map[string]any{"text": "payroll", "federation": "auto"}}, bearerHdr("nope"), nil); r.StatusCode != 401 {
		t.Fatalf("bad key: %d", r.StatusCode)
	}
}
