package federation

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/agentfinder/agentfinder/crawler/netguard"
	"github.com/agentfinder/agentfinder/federation/federationtest"
	"github.com/agentfinder/agentfinder/normalize"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		name, in string
		want     Mode
		err      bool
	}{
		{"default", "", ModeAuto, false},
		{"auto", "auto", ModeAuto, false},
		{"referrals", "referrals", ModeReferrals, false},
		{"referral alias", "Referral", ModeReferrals, false},
		{"none", "none", ModeNone, false},
		{"unknown", "everything", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMode(tc.in)
			if (err != nil) != tc.err || got != tc.want {
				t.Fatalf("ParseMode(%q) = %q, %v", tc.in, got, err)
			}
			if tc.err && !errors.Is(err, ErrInvalidMode) {
				t.Fatalf("error %v is not ErrInvalidMode", err)
			}
		})
	}
}

func TestSearchEndpoint(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"ends in search", "https://finder.nlweb.ai/search", "https://finder.nlweb.ai/search"},
		{"base with slash", "https://registry.acme.com/api/v1/", "https://registry.acme.com/api/v1/search"},
		{"base without slash", "https://Registry.Acme.com/api", "https://registry.acme.com/api/search"},
		{"host only", "http://127.0.0.1:8090", "http://127.0.0.1:8090/search"},
		{"nested search", "http://127.0.0.1:8090/registries/tools/search", "http://127.0.0.1:8090/registries/tools/search"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SearchEndpoint(tc.in)
			if err != nil || got != tc.want {
				t.Fatalf("SearchEndpoint(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
	for _, bad := range []string{"ftp://x.example/", "https://user:pw@x.example/", "not a url", "mailto:a@b.c"} {
		if _, err := SearchEndpoint(bad); err == nil {
			t.Errorf("SearchEndpoint(%q) accepted", bad)
		}
	}
}

func TestLoadUpstreamsFile(t *testing.T) {
	p := t.TempDir() + "/upstreams"
	body := "# registries we trust\nhttps://a.example/search\n\n  https://b.example/api/ forwardAuth # internal\nhttps://c.example/ forwardAuth=false\n"
	if err := writeFile(p, body); err != nil {
		t.Fatal(err)
	}
	got, err := LoadUpstreamsFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Upstream{{URL: "https://a.example/search"}, {URL: "https://b.example/api/", ForwardAuth: true}, {URL: "https://c.example/"}}; !slices.Equal(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if err := writeFile(p, "gopher://x\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadUpstreamsFile(p); err == nil {
		t.Fatal("bad URL accepted")
	}
	for _, bad := range []string{"https://a.example/ forwardauth=maybe", "https://a.example/ sendKeys"} {
		if _, err := ParseUpstream(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

func TestBookLearnsAndGuards(t *testing.T) {
	if err := NewBook(nil).AddConfigured("http://127.0.0.1:9/"); !errors.Is(err, netguard.ErrBlocked) {
		t.Fatalf("configured loopback upstream without an allowed range: %v, want netguard.ErrBlocked", err)
	}
	b := NewBook(netguard.New(netguard.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}))
	if err := b.AddConfigured("http://127.0.0.1:9/"); err != nil {
		t.Fatalf("configured loopback upstream refused with loopback allowed: %v", err)
	}
	n := b.AddFromRecords([]normalize.Record{
		{Identifier: "urn:ai:travel.example:registry:travel", DisplayName: "Travel Agent Finder", Type: "application/ai-registry", URL: "https://travel.example/finder/", Description: "Flights and hotels"},
		{Identifier: "urn:ai:evil.example:registry:x", DisplayName: "Private", Type: "application/ai-registry+json", URL: "http://10.0.0.7/search"},
		{Identifier: "urn:ai:evil.example:registry:y", DisplayName: "Loopback", Type: "application/ai-registry+json", URL: "http://localhost:8080/search"},
		{Identifier: "urn:ai:evil.example:registry:z", DisplayName: "NAT64 metadata", Type: "application/ai-registry+json", URL: "http://[64:ff9b::a9fe:a9fe]/search"},
		{Identifier: "urn:ai:acme.com:agent:a", DisplayName: "Not a registry", Type: "application/a2a-agent-card+json", URL: "https://acme.com/a.json"},
	})
	if n != 1 {
		t.Fatalf("AddFromRecords added %d, want 1 (private, loopback and non-registry entries skipped)", n)
	}
	if err := b.AddDNS("weather.example", "https://finder.weather.example/"); err != nil {
		t.Fatal(err)
	}
	if err := b.AddDNS("evil.example", "http://[fe80::1]/"); !errors.Is(err, netguard.ErrBlocked) {
		t.Fatalf("AddDNS link-local: %v, want netguard.ErrBlocked", err)
	}
	if err := b.AddDNS("evil.example", "http://[2002:a00:1::1]/"); !errors.Is(err, netguard.ErrBlocked) {
		t.Fatalf("AddDNS 6to4 over 10.0.0.1: %v, want netguard.ErrBlocked", err)
	}
	regs := b.Registries()
	if len(regs) != 3 {
		t.Fatalf("book has %d registries: %+v", len(regs), regs)
	}
	want := map[string]string{
		"http://127.0.0.1:9/search":             LearnedConfigured,
		"https://travel.example/finder/search":  LearnedCrawled,
		"https://finder.weather.example/search": LearnedDNS,
	}
	for _, r := range regs {
		if want[r.Endpoint] != r.Learned {
			t.Errorf("%s learned %q, want %q", r.Endpoint, r.Learned, want[r.Endpoint])
		}
		if r.Identifier == "" || r.DisplayName == "" {
			t.Errorf("%s lacks identifier or name: %+v", r.Endpoint, r)
		}
	}
	// The guard also sits in the dialer: no upstream reaches loopback, even
	// by a name that resolves there.
	f, err := New(Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	srv := newSwapServer(t, listHandler(nil, 0))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	if resp, err := f.client.Do(req); !errors.Is(err, netguard.ErrBlocked) {
		if resp != nil {
			resp.Body.Close()
		}
		t.Fatalf("guarded client reached loopback: %v", err)
	}
}

func TestReferralsMode(t *testing.T) {
	up := newSwapServer(t, listHandler([]map[string]any{entry("urn:ai:x.example:a", "a")}, 0))
	f := newFederator(t, Config{Upstreams: []string{up.URL}})
	f.Book().AddFromRecords([]normalize.Record{
		{Identifier: "urn:ai:travel.example:registry:travel", DisplayName: "Travel Agent Finder", Type: "application/ai-registry", URL: "https://travel.example/search", Tags: []string{"flights", "hotels"}},
		{Identifier: "urn:ai:weather.example:registry:wx", DisplayName: "Weather Registry", Type: "application/ai-registry+json", URL: "https://weather.example/api/"},
	})
	local := []Hit{localHit("urn:ai:acme.com:agent:expense", 97, true)}
	resp, err := f.Search(t.Context(), ModeReferrals, Query{Text: "book flights to Tokyo"}, "", nil, localOf(local))
	if err != nil {
		t.Fatal(err)
	}
	if up.calls.Load() != 0 {
		t.Fatalf("referrals mode called an upstream %d times", up.calls.Load())
	}
	if got := ids(resp.Results); !slices.Equal(got, []string{"urn:ai:acme.com:agent:expense"}) {
		t.Fatalf("results %q", got)
	}
	if len(resp.Referrals) != 3 {
		t.Fatalf("%d referrals, want 3: %s", len(resp.Referrals), resp.Referrals)
	}
	var first struct{ Identifier, DisplayName, Type, URL string }
	if err := json.Unmarshal(resp.Referrals[0], &first); err != nil {
		t.Fatal(err)
	}
	if first.Identifier != "urn:ai:travel.example:registry:travel" || first.Type != ReferralType || first.URL != "https://travel.example/search" {
		t.Fatalf("most relevant referral = %+v, want the travel registry", first)
	}
}

func TestNoneModeUntouchedByUpstreams(t *testing.T) {
	up := newSwapServer(t, listHandler([]map[string]any{entry("urn:ai:x.example:a", "a")}, 0))
	f := newFederator(t, Config{Upstreams: []string{up.URL}})
	resp, err := f.Search(t.Context(), ModeNone, Query{Text: "x"}, "", nil, localOf([]Hit{localHit("urn:ai:l.example:one", 50, false)}))
	if err != nil {
		t.Fatal(err)
	}
	if up.calls.Load() != 0 || len(resp.Upstreams) != 0 || len(resp.Referrals) != 0 {
		t.Fatalf("none mode touched upstreams: calls=%d %+v", up.calls.Load(), resp)
	}
	if got := ids(resp.Results); !slices.Equal(got, []string{"urn:ai:l.example:one"}) {
		t.Fatalf("results %q", got)
	}
}

func TestAutoMergesDedupesAndKeepsProvenance(t *testing.T) {
	u1 := newSwapServer(t, listHandler([]map[string]any{
		entry("urn:ai:shared.example:agent:x", "x-from-u1", "score", 250.7, "source", "upstream-label"),
		entry("urn:ai:u1.example:agent:y", "y-from-u1", "score", 0.91),
		entry("urn:ai:u1.example:agent:only1", "only1", "score", 12),
		{"identifier": "urn:ai:bad.example:agent:both", "displayName": "both", "type": "x", "url": "https://bad.example/a", "data": map[string]any{}},
		{"displayName": "no identifier", "type": "x", "url": "https://bad.example/b"},
		map[string]any{"identifier": "urn:ai:bad.example:agent:nourl", "displayName": "nothing", "type": "x"},
		map[string]any{"identifier": "agent-123", "displayName": "not a URN", "type": "x", "url": "https://bad.example/c"},
		map[string]any{"identifier": "urn:ai:bad.example:agent:js", "displayName": "script url", "type": "x", "url": "javascript:alert(1)"},
	}, 0))
	u2 := newSwapServer(t, listHandler([]map[string]any{
		entry("urn:ai:u1.example:agent:y", "y-from-u2", "publisherVerified", true),
		entry("urn:air:SHARED.example:agent:x", "x-from-u2"),
		entry("urn:ai:u2.example:agent:only2", "only2", "data", map[string]any{"name": "inline"}, "url", nil),
	}, 0))
	// The last entry has data and a null url: not well formed, dropped.
	f := newFederator(t, Config{Upstreams: []string{u1.URL, u2.URL}})
	local := []Hit{
		localHit("urn:ai:shared.example:agent:x", 80, false),
		localHit("urn:ai:local.example:agent:l", 70, false),
	}
	resp, err := f.Search(t.Context(), ModeAuto, Query{Text: "agents", PageSize: 20}, "", nil, localOf(local))
	if err != nil {
		t.Fatal(err)
	}
	for ep, dropped := range map[string]int{u1.URL + "/search": 5, u2.URL + "/search": 1} {
		if o := outcomeOf(t, resp, ep); o.Status != StatusOK || o.Dropped != dropped {
			t.Fatalf("outcome %+v, want ok with %d dropped", o, dropped)
		}
	}
	got := ids(resp.Results)
	seen := map[string]bool{}
	for _, id := range got {
		k := canonicalID(id)
		if seen[k] {
			t.Fatalf("duplicate %s in %q", id, got)
		}
		seen[k] = true
	}
	wantSet := []string{"urn:ai:shared.example:agent:x", "urn:ai:local.example:agent:l", "urn:ai:u1.example:agent:y", "urn:ai:u1.example:agent:only1"}
	if len(got) != len(wantSet) {
		t.Fatalf("results %q, want %q (invalid entries dropped)", got, wantSet)
	}
	byID := map[string]Hit{}
	for _, h := range resp.Results {
		byID[h.Identifier] = h
	}
	// x is in three sources: it ranks first and the local copy is kept.
	if got[0] != "urn:ai:shared.example:agent:x" || !byID[got[0]].Local {
		t.Fatalf("first result %q local=%v, want the local copy of x", got[0], byID[got[0]].Local)
	}
	// y: the verified copy (u2, a trusted upstream) wins over u1's.
	y := byID["urn:ai:u1.example:agent:y"]
	if y.Source != u2.URL+"/search" || field(t, y, "displayName") != "y-from-u2" || !y.Verified {
		t.Fatalf("y kept from %s (%s), want u2's verified copy", y.Source, field(t, y, "displayName"))
	}
	one := byID["urn:ai:u1.example:agent:only1"]
	if field(t, one, "source") != u1.URL+"/search" || field(t, one, "originService") != u1.URL+"/search" {
		t.Fatalf("only1 provenance: source %s origin %s", field(t, one, "source"), field(t, one, "originService"))
	}
	if _, err := time.Parse(time.RFC3339Nano, field(t, one, "receivedAt")); err != nil {
		t.Fatalf("receivedAt: %v", err)
	}
	for _, h := range resp.Results {
		var s int
		if err := json.Unmarshal(h.Entry["score"], &s); err != nil || s < 0 || s > 100 {
			t.Fatalf("%s score %s not an integer in 0..100", h.Identifier, h.Entry["score"])
		}
	}
	// Upstreams were asked with federation "none" and a Via naming us.
	for _, u := range []*swapServer{u1, u2} {
		r := u.requests()[0]
		q, _ := r.body["query"].(map[string]any)
		if q["federation"] != "none" || r.via != "1.1 "+f.Name() {
			t.Fatalf("upstream request query=%v via=%q", q, r.via)
		}
	}
}

func TestAutoScoresFromUpstreamAreClamped(t *testing.T) {
	u := newSwapServer(t, listHandler([]map[string]any{
		entry("urn:ai:u.example:agent:big", "big", "score", 250.7),
		entry("urn:ai:u.example:agent:frac", "frac", "score", 0.91),
		entry("urn:ai:u.example:agent:neg", "neg", "score", -3),
	}, 0))
	f := newFederator(t, Config{Upstreams: []string{u.URL}})
	resp, err := f.Search(t.Context(), ModeAuto, Query{Text: "x"}, "", nil, localOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"urn:ai:u.example:agent:big": "100", "urn:ai:u.example:agent:frac": "1", "urn:ai:u.example:agent:neg": "0"}
	if len(resp.Results) != 3 {
		t.Fatalf("results %q", ids(resp.Results))
	}
	for _, h := range resp.Results {
		if string(h.Entry["score"]) != want[h.Identifier] {
			t.Errorf("%s score %s, want %s", h.Identifier, h.Entry["score"], want[h.Identifier])
		}
	}
	// Rank by position: the upstream's order is kept.
	if got := ids(resp.Results); got[0] != "urn:ai:u.example:agent:big" || got[2] != "urn:ai:u.example:agent:neg" {
		t.Fatalf("order %q", got)
	}
}

func TestAutoSurvivesBadUpstreams(t *testing.T) {
	good := newSwapServer(t, listHandler([]map[string]any{entry("urn:ai:good.example:agent:g", "g")}, 0))
	hang := newSwapServer(t, hangHandler())
	fail := newSwapServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	garbage := newSwapServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"results": [ {"identifier": `))
	}))
	trailing := newSwapServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"results": []} {"results": []}`))
	}))
	huge := newSwapServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"results": [], "pad": "` + strings.Repeat("x", MaxResponseBytes) + `"}`))
	}))
	budget := 400 * time.Millisecond
	f := newFederator(t, Config{
		Upstreams: []string{good.URL, hang.URL, fail.URL, garbage.URL, trailing.URL, huge.URL},
		Budget:    budget,
	})
	start := time.Now()
	resp, err := f.Search(t.Context(), ModeAuto, Query{Text: "x"}, "", nil, localOf([]Hit{localHit("urn:ai:l.example:agent:l", 60, false)}))
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("search failed: %v", err)
	}
	want := map[string]string{
		good.URL: StatusOK, hang.URL: StatusTimeout, fail.URL: StatusError,
		garbage.URL: StatusError, trailing.URL: StatusError, huge.URL: StatusError,
	}
	for base, st := range want {
		if o := outcomeOf(t, resp, base+"/search"); o.Status != st {
			t.Errorf("%s: outcome %+v, want %s", base, o, st)
		}
	}
	if got := ids(resp.Results); len(got) != 2 {
		t.Fatalf("results %q, want the local and the good upstream's", got)
	}
	if elapsed > budget+time.Second { // sanity bound only; the outcome above is the assertion
		t.Fatalf("search took %v with a %v budget", elapsed, budget)
	}
}

func TestHFChallengeRegistry(t *testing.T) {
	var hf *swapServer
	hf = newSwapServer(t, http.NotFoundHandler())
	hf.h.Store(hfHandler(t, func() string { return hf.URL }))
	// AllowPrivate: the referred registries are on loopback.
	f := newFederator(t, Config{Upstreams: []string{hf.URL}, AllowPrivate: true})
	q := Query{Text: "find tools registries and skills", PageSize: 20}

	resp, err := f.Search(t.Context(), ModeAuto, q, "", nil, localOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	root := hf.URL + "/search"
	if o := outcomeOf(t, resp, root); o.Status != StatusOK || o.Results != 4 {
		t.Fatalf("root outcome %+v", o)
	}
	reqs := hf.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want the v0.4.2 shape then the ARD shape", len(reqs))
	}
	if _, ok := reqs[0].body["query"].(map[string]any)["federation"]; !ok {
		t.Fatalf("first request not v0.4.2 shaped: %v", reqs[0].body)
	}
	if reqs[1].body["federation"] != "none" {
		t.Fatalf("fallback request not ARD shaped: %v", reqs[1].body)
	}
	want := []string{
		"urn:ai:agentfinder.dev:challenge:skill:triage-skill",
		"urn:ai:agentfinder.dev:challenge:mcp:echo-tools",
		"urn:ai:agentfinder.dev:challenge:a2a:planner",
		"urn:ai:agentfinder.dev:challenge:catalog:bundle",
	}
	if got := ids(resp.Results); !slices.Equal(got, want) {
		t.Fatalf("results %q, want %q", got, want)
	}
	// The captured upstream labels its results "agentfinder:challenge":
	// not an http(s) URL, so the endpoint asked stands in for it.
	for _, h := range resp.Results {
		if h.Source != root || field(t, h, "originService") != root {
			t.Fatalf("%s source %s origin %s", h.Identifier, h.Source, field(t, h, "originService"))
		}
	}
	if string(resp.Results[0].Entry["score"]) != "97" {
		t.Fatalf("score %s, want 97 (float 97.0 shown as an integer)", resp.Results[0].Entry["score"])
	}
	// Registry entries in results are referrals (learned registries are
	// not federated to by default).
	var refs []string
	for _, r := range resp.Referrals {
		var e struct{ URL, Type string }
		_ = json.Unmarshal(r, &e)
		if e.Type != ReferralType {
			t.Fatalf("referral type %q", e.Type)
		}
		refs = append(refs, strings.TrimPrefix(e.URL, hf.URL))
	}
	slices.Sort(refs)
	if want := []string{"/registries/empty/search", "/registries/nested/search", "/registries/skills/search", "/registries/tools/search"}; !slices.Equal(refs, want) {
		t.Fatalf("referrals %q, want %q", refs, want)
	}

	// The ARD shape is remembered: the next search sends it first.
	if _, err := f.Search(t.Context(), ModeAuto, q, "", nil, localOf(nil)); err != nil {
		t.Fatal(err)
	}
	if reqs := hf.requests(); len(reqs) != 3 || reqs[2].body["federation"] != "none" {
		t.Fatalf("second search: %d requests, last %v", len(reqs), reqs[len(reqs)-1].body)
	}
}

func TestHFChallengeFollowsRegistriesWithinHopLimit(t *testing.T) {
	var hf *swapServer
	hf = newSwapServer(t, http.NotFoundHandler())
	hf.h.Store(hfHandler(t, func() string { return hf.URL }))
	f := newFederator(t, Config{Upstreams: []string{hf.URL}, FederateLearned: true, AllowPrivate: true, MaxHops: 2})
	resp, err := f.Search(t.Context(), ModeAuto, Query{Text: "walk deeper registries", PageSize: 50}, "", nil, localOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, reg := range []string{"tools", "skills", "nested", "empty"} {
		if o := outcomeOf(t, resp, hf.URL+"/registries/"+reg+"/search"); o.Status != StatusOK {
			t.Fatalf("%s: %+v", reg, o)
		}
	}
	got := ids(resp.Results)
	if !slices.Contains(got, "urn:ai:agentfinder.dev:challenge:skill:tree-walker") {
		t.Fatalf("nested registry's result missing: %q", got)
	}
	if slices.Contains(got, "urn:ai:agentfinder.dev:challenge:mcp:deep-mcp") {
		t.Fatalf("deep registry (3 hops) was followed: %q", got)
	}
	var deepReferred bool
	for _, r := range resp.Referrals {
		deepReferred = deepReferred || strings.Contains(string(r), "/registries/deep/search")
	}
	if !deepReferred {
		t.Fatalf("deep registry not referred: %s", resp.Referrals)
	}
	seen := map[string]bool{}
	for _, id := range got {
		if seen[id] {
			t.Fatalf("duplicate %s", id)
		}
		seen[id] = true
	}
}

func TestLoopIsCut(t *testing.T) {
	// A and B federate to each other and forward "auto": B must not call A
	// back, and A refuses a request whose Via already names it.
	a := newOwnRegistry(t, func(self string) Config {
		return Config{Name: self, ForwardAuto: true, MaxHops: 3}
	}, []Hit{localHit("urn:ai:a.example:agent:a", 90, false)})
	b := newOwnRegistry(t, func(self string) Config {
		return Config{Name: self, ForwardAuto: true, MaxHops: 3, Upstreams: []string{a.URL}}
	}, []Hit{localHit("urn:ai:b.example:agent:b", 90, false)})
	if err := a.fed.Book().AddConfigured(b.URL); err != nil {
		t.Fatal(err)
	}

	resp, err := a.fed.Search(t.Context(), ModeAuto, Query{Text: "x"}, "", nil, localOf([]Hit{localHit("urn:ai:a.example:agent:a", 90, false)}))
	if err != nil {
		t.Fatal(err)
	}
	if o := outcomeOf(t, resp, b.URL+"/search"); o.Status != StatusOK {
		t.Fatalf("A->B %+v", o)
	}
	if n := a.calls.Load(); n != 0 {
		t.Fatalf("B called A back %d times", n)
	}
	r := b.requests()[0]
	if q := r.body["query"].(map[string]any); q["federation"] != "auto" || r.via != "1.1 "+strings.TrimPrefix(a.URL, "http://") {
		t.Fatalf("A->B request federation=%v via=%q", q["federation"], r.via)
	}
	if got := ids(resp.Results); !slices.Contains(got, "urn:ai:b.example:agent:b") {
		t.Fatalf("results %q lack B's", got)
	}

	// A request that already passed through A is answered locally.
	resp, err = a.fed.Search(t.Context(), ModeAuto, Query{Text: "x"}, "", []string{"1.1 " + b.URL + ", 1.1 " + a.URL}, localOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if o := outcomeOf(t, resp, b.URL+"/search"); o.Status != StatusSkipped || o.Error != "loop" {
		t.Fatalf("looped request: %+v", o)
	}
}

func TestHopLimit(t *testing.T) {
	up := newSwapServer(t, listHandler([]map[string]any{entry("urn:ai:u.example:agent:u", "u")}, 0))
	f := newFederator(t, Config{Upstreams: []string{up.URL}, MaxHops: 2})
	resp, err := f.Search(t.Context(), ModeAuto, Query{Text: "x"}, "", []string{"1.1 r1.example", "1.1 r2.example"}, localOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if o := outcomeOf(t, resp, up.URL+"/search"); o.Status != StatusSkipped || o.Error != "hop limit" || up.calls.Load() != 0 {
		t.Fatalf("outcome %+v calls %d", o, up.calls.Load())
	}
}

func TestBreakerOpensAndCloses(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))
	healthy := make(chan bool, 1)
	healthy <- false
	up := newSwapServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok := <-healthy
		healthy <- ok
		if !ok {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		listHandler([]map[string]any{entry("urn:ai:u.example:agent:u", "u")}, 0).ServeHTTP(w, r)
	}))
	f := newFederator(t, Config{Upstreams: []string{up.URL}, BreakerFailures: 2, BreakerCooldown: time.Minute, Now: clock.Now})
	ep := up.URL + "/search"
	search := func() Outcome {
		t.Helper()
		resp, err := f.Search(t.Context(), ModeAuto, Query{Text: "x"}, "", nil, localOf(nil))
		if err != nil {
			t.Fatal(err)
		}
		return outcomeOf(t, resp, ep)
	}
	setHealthy := func(v bool) { <-healthy; healthy <- v }

	for i := range 2 {
		if o := search(); o.Status != StatusError {
			t.Fatalf("failure %d: %+v", i, o)
		}
	}
	if o := search(); o.Status != StatusSkipped || o.Error != "circuit open" {
		t.Fatalf("after 2 failures: %+v, want skipped (circuit open)", o)
	}
	calls := up.calls.Load()
	clock.Advance(time.Minute)
	// Half-open: one probe goes out; it fails and the circuit opens again.
	if o := search(); o.Status != StatusError || up.calls.Load() != calls+1 {
		t.Fatalf("probe: %+v", o)
	}
	if o := search(); o.Status != StatusSkipped {
		t.Fatalf("after failed probe: %+v", o)
	}
	setHealthy(true)
	clock.Advance(time.Minute)
	if o := search(); o.Status != StatusOK {
		t.Fatalf("probe after recovery: %+v", o)
	}
	if o := search(); o.Status != StatusOK {
		t.Fatalf("closed circuit: %+v", o)
	}
}

func TestPageTokenContinuesEverySource(t *testing.T) {
	var upEntries []map[string]any
	var local []Hit
	for i := range 23 {
		upEntries = append(upEntries, entry("urn:ai:u.example:agent:u"+itoa(i), "u"+itoa(i)))
	}
	for i := range 17 {
		local = append(local, localHit("urn:ai:l.example:agent:l"+itoa(i), float64(90-i), false))
	}
	// Three identifiers are in both.
	for i := range 3 {
		upEntries = append(upEntries, entry("urn:ai:l.example:agent:l"+itoa(10+i), "dup"))
	}
	up := newSwapServer(t, listHandler(upEntries, 0))
	f := newFederator(t, Config{Upstreams: []string{up.URL}, TokenKey: []byte("k")})
	q := Query{Text: "paging", PageSize: 7}
	seen := map[string]bool{}
	tok := ""
	pages := 0
	for {
		resp, err := f.Search(t.Context(), ModeAuto, q, tok, nil, localOf(local))
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		pages++
		for _, id := range ids(resp.Results) {
			if seen[id] {
				t.Fatalf("page %d repeats %s", pages, id)
			}
			seen[id] = true
		}
		if resp.PageToken == "" {
			break
		}
		if pages > 20 {
			t.Fatal("paging does not end")
		}
		tok = resp.PageToken
	}
	if len(seen) != 40 {
		t.Fatalf("%d distinct results over %d pages, want 40", len(seen), pages)
	}

	// Tokens are signed and bound to the query.
	first, _ := f.Search(t.Context(), ModeAuto, q, "", nil, localOf(local))
	if _, err := f.Search(t.Context(), ModeAuto, Query{Text: "other", PageSize: 7}, first.PageToken, nil, localOf(local)); !errors.Is(err, ErrInvalidPageToken) {
		t.Fatalf("token for another query: %v", err)
	}
	other := newFederator(t, Config{TokenKey: []byte("other key")})
	if _, err := other.Search(t.Context(), ModeAuto, q, first.PageToken, nil, localOf(local)); !errors.Is(err, ErrInvalidPageToken) {
		t.Fatalf("token under another key: %v", err)
	}
	if _, err := f.Search(t.Context(), ModeAuto, q, "garbage", nil, localOf(local)); !errors.Is(err, ErrInvalidPageToken) {
		t.Fatalf("garbage token: %v", err)
	}
}

func TestLocalErrorFailsSearch(t *testing.T) {
	f := newFederator(t, Config{})
	boom := errors.New("index down")
	_, err := f.Search(t.Context(), ModeAuto, Query{Text: "x"}, "", nil, func(context.Context, Query, string) ([]Hit, string, error) {
		return nil, "", boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want the local error", err)
	}
}

func TestParseVia(t *testing.T) {
	got := ParseVia([]string{"1.1 https://a.example, HTTP/1.1 b.example (comment)", "1.0 c"})
	if want := []string{"https://a.example", "b.example", "c"}; !slices.Equal(got, want) {
		t.Fatalf("ParseVia = %q, want %q", got, want)
	}
	if FormatVia([]string{"a", "b"}) != "1.1 a, 1.1 b" {
		t.Fatal(FormatVia([]string{"a", "b"}))
	}
}

func TestInChain(t *testing.T) {
	tests := []struct {
		name  string
		via   []string
		names []string
		want  bool
	}{
		{"url against host", []string{"Finder.Example:8443"}, []string{"https://finder.example:8443/search"}, true},
		{"trailing slash and scheme", []string{"http://a.example/api/"}, []string{"https://A.example/api/search"}, true},
		{"second name", []string{"x.example", "b.example"}, []string{"a.example", "b.example"}, true},
		{"other path", []string{"a.example/v2"}, []string{"https://a.example/v1"}, false},
		{"empty via", nil, []string{"a.example"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := InChain(tc.via, tc.names...); got != tc.want {
				t.Fatalf("InChain(%q, %q) = %v", tc.via, tc.names, got)
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func writeFile(p, s string) error { return os.WriteFile(p, []byte(s), 0o600) }

func TestLearnedRegistriesReferredUnlessAllowed(t *testing.T) {
	crawled := newSwapServer(t, listHandler([]map[string]any{entry("urn:ai:c.example:agent:c", "c")}, 0))
	rec := []normalize.Record{{Identifier: "urn:ai:c.example:registry:c", DisplayName: "Crawled Registry", Type: "application/ai-registry+json", URL: crawled.URL + "/"}}
	tests := []struct {
		name      string
		cfg       Config
		federated bool
	}{
		{"referral by default", Config{AllowPrivate: true}, false},
		{"allowed by host pattern", Config{AllowPrivate: true, FederateHosts: []string{"127.0.0.*"}}, true},
		{"allowed for all learned", Config{AllowPrivate: true, FederateLearned: true}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFederator(t, tc.cfg)
			if n := f.Book().AddFromRecords(rec); n != 1 {
				t.Fatalf("added %d", n)
			}
			before := crawled.calls.Load()
			resp, err := f.Search(t.Context(), ModeAuto, Query{Text: "x"}, "", nil, localOf(nil))
			if err != nil {
				t.Fatal(err)
			}
			called := crawled.calls.Load() > before
			if called != tc.federated {
				t.Fatalf("called=%v, want %v", called, tc.federated)
			}
			referred := len(resp.Referrals) == 1 && strings.Contains(string(resp.Referrals[0]), crawled.URL+"/search")
			if referred == tc.federated {
				t.Fatalf("referrals %s (federated=%v)", resp.Referrals, tc.federated)
			}
			if tc.federated && (len(resp.Results) != 1 || resp.Results[0].Source != crawled.URL+"/search") {
				t.Fatalf("results %+v", resp.Results)
			}
		})
	}
}

func TestUpstreamCannotReferToPrivateAddresses(t *testing.T) {
	up := newSwapServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{
			"results": []any{
				map[string]any{"identifier": "urn:ai:evil.example:registry:r", "displayName": "internal", "type": "application/ai-registry+json", "url": "http://169.254.169.254/latest/"},
				entry("urn:ai:ok.example:agent:a", "a"),
			},
			"referrals": []any{
				map[string]any{"identifier": "urn:ai:evil.example:registry:r2", "displayName": "intranet", "type": "application/ai-registry", "url": "http://10.1.2.3/search"},
				map[string]any{"identifier": "urn:ai:fine.example:registry:r3", "displayName": "Fine", "type": "application/ai-registry", "url": "https://finder.fine.example/search"},
			},
		})
	}))
	f := newFederator(t, Config{Upstreams: []string{up.URL}})
	resp, err := f.Search(t.Context(), ModeAuto, Query{Text: "x"}, "", nil, localOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 1 {
		t.Fatalf("results %q", ids(resp.Results))
	}
	for _, r := range resp.Referrals {
		if strings.Contains(string(r), "169.254") || strings.Contains(string(r), "10.1.2.3") {
			t.Fatalf("private registry relayed: %s", r)
		}
	}
	if len(resp.Referrals) != 1 || !strings.Contains(string(resp.Referrals[0]), "https://finder.fine.example/search") {
		t.Fatalf("referrals %s, want the public one only", resp.Referrals)
	}
}

func TestEnterpriseCAPool(t *testing.T) {
	up := httptest.NewTLSServer(listHandler([]map[string]any{entry("urn:ai:corp.example:agent:c", "c")}, 0))
	t.Cleanup(up.Close)
	pool := x509.NewCertPool()
	pool.AddCert(up.Certificate())
	tests := []struct {
		name string
		cas  *x509.CertPool
		want string
	}{
		{"system roots reject the private CA", nil, StatusError},
		{"configured CA pool", pool, StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A generous budget: loading the system roots on a busy machine
			// under -race can take longer than the default second.
			f := newFederator(t, Config{Upstreams: []string{up.URL}, RootCAs: tc.cas, Budget: 10 * time.Second, UpstreamTimeout: 10 * time.Second})
			resp, err := f.Search(t.Context(), ModeAuto, Query{Text: "x"}, "", nil, localOf(nil))
			if err != nil {
				t.Fatal(err)
			}
			if o := outcomeOf(t, resp, up.URL+"/search"); o.Status != tc.want {
				t.Fatalf("outcome %+v, want %s", o, tc.want)
			}
		})
	}
}

// TestUpstreamRedirectToLoopbackRefused: a configured upstream on 127.0.0.2
// (opened by AllowCIDRs, as an enterprise opens its internal registry)
// answers 307 to a service on 127.0.0.1. The guard in the dialer refuses
// that hop: the service never sees the caller's query, the upstream is
// reported as an error, and the search still answers with the local hits.
func TestUpstreamRedirectToLoopbackRefused(t *testing.T) {
	up := federationtest.NewRedirector(t)

	f := newFederator(t, Config{Upstreams: []string{up.URL}, AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}})
	local := []Hit{localHit("urn:ai:l.example:one", 50, false)}
	resp, err := f.Search(t.Context(), ModeAuto, Query{Text: "payroll"}, "", nil, localOf(local))
	if err != nil {
		t.Fatalf("search failed with a redirecting upstream: %v", err)
	}
	if up.Calls() == 0 {
		t.Fatal("the allowed upstream on 127.0.0.2 was never called")
	}
	if n := up.VictimCalls(); n != 0 {
		t.Fatalf("the redirect target on 127.0.0.1 received %d requests", n)
	}
	if len(resp.Upstreams) != 1 || resp.Upstreams[0].Status != StatusError || !strings.Contains(resp.Upstreams[0].Error, "refused") {
		t.Fatalf("upstream outcomes %+v, want one error naming the refusal", resp.Upstreams)
	}
	if got := ids(resp.Results); !slices.Equal(got, []string{"urn:ai:l.example:one"}) {
		t.Fatalf("results %q, want the local hit", got)
	}
}

// TestOriginServiceOnlyHTTP: an upstream's originService (or source label)
// leaves this server only when it is an http(s) URL; anything else
// (javascript:, data:, a bare label) is replaced by the endpoint asked.
func TestOriginServiceOnlyHTTP(t *testing.T) {
	cases := []struct{ origin, want string }{
		{"javascript:alert(document.cookie)", ""},
		{"JavaScript:alert(1)", ""},
		{"data:text/html,<script>alert(1)</script>", ""},
		{"//evil.example/x", ""},
		{"https://user:pw@evil.example/", ""},
		{"agentfinder:challenge", ""},
		{"https://origin.example/registry", "https://origin.example/registry"},
	}
	var hits []map[string]any
	for i, tc := range cases {
		e := entry(fmt.Sprintf("urn:ai:o.example:agent:%d", i), "origin case")
		e["originService"] = tc.origin
		hits = append(hits, e)
	}
	up := newSwapServer(t, listHandler(hits, 0))
	f := newFederator(t, Config{Upstreams: []string{up.URL}})
	resp, err := f.Search(t.Context(), ModeAuto, Query{Text: "origin", PageSize: 20}, "", nil, localOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != len(cases) {
		t.Fatalf("%d results, want %d", len(resp.Results), len(cases))
	}
	for _, h := range resp.Results {
		var i int
		fmt.Sscanf(h.Identifier, "urn:ai:o.example:agent:%d", &i)
		want := cases[i].want
		if want == "" {
			want = up.URL + "/search"
		}
		if got := field(t, h, "originService"); got != want {
			t.Errorf("upstream originService %q relayed as %q, want %q", cases[i].origin, got, want)
		}
	}
}
