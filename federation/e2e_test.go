package federation_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi"
)

// instance is one of our own registries: a real Meilisearch index filled
// through ingest, searchapi over it, and (optionally) a Federator.
type instance struct {
	url   string // public base URL
	calls atomic.Int64
	fed   *federation.Federator
}

// catalog builds a manifest of agents published by domain, each described
// as a "helper" so one query finds them on every instance.
func catalog(domain string, names ...string) []byte {
	var entries []map[string]any
	for _, n := range names {
		entries = append(entries, map[string]any{
			"identifier":  "urn:ai:" + domain + ":agent:" + n,
			"displayName": n + " helper",
			"type":        "application/a2a-agent-card+json",
			"url":         "https://" + domain + "/agents/" + n + ".json",
			"description": "A " + n + " helper agent.",
			"tags":        []string{"helper", n},
		})
	}
	b, _ := json.Marshal(map[string]any{"specVersion": "1.0", "host": map[string]string{"displayName": domain}, "entries": entries})
	return b
}

// newInstance starts a registry over its own index holding the catalogs
// (origin URL -> manifest). fed, when non-nil, configures its federation;
// its Name is set to the instance's host:port, as searchapi names itself in
// Via.
func newInstance(t *testing.T, prefix string, catalogs map[string][]byte, fed func(self string) federation.Config) *instance {
	t.Helper()
	ctx := t.Context()
	ms, idx := meilitest.Index(t, prefix)
	ix, err := ingest.New(ctx, ms.Client, ingest.Config{Index: idx})
	if err != nil {
		t.Fatalf("ingest.New: %v", err)
	}
	t.Cleanup(func() {
		if task, err := ms.Client.DeleteIndex(idx + "_sources"); err == nil {
			_ = meilitest.Wait(ms.Client, task.TaskUID)
		}
	})
	now := time.Now()
	for origin, body := range catalogs {
		res := normalize.Catalog(body, normalize.Options{Origin: origin, Via: normalize.ViaWellKnown, Now: now})
		if len(res.Records) == 0 {
			t.Fatalf("fixture %s: no records: %+v", origin, res.Problems)
		}
		if err := ix.Put(ctx, normalize.CatalogResult{Catalog: origin, Via: normalize.ViaWellKnown, Status: normalize.StatusOK, FetchedAt: now, Records: res.Records}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(ctx); err != nil {
		t.Fatal(err)
	}

	in := &instance{}
	ts := httptest.NewUnstartedServer(nil)
	in.url = "http://" + ts.Listener.Addr().String()
	// No cut-off: these tests follow results through the federation, not
	// their relevance (searchapi's relevance tests cover the cut-off).
	cfg := searchapi.Config{Index: idx, PublicURL: in.url, Meili: ms.Client, MinScore: new(int)}
	if fed != nil {
		fc := fed(in.url)
		fc.Name = ts.Listener.Addr().String()
		// Every instance listens on loopback; the guard opens only that.
		fc.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		f, err := federation.New(fc, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.Close)
		in.fed = f
		cfg.Federation = f
	}
	srv, err := searchapi.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/search" {
			in.calls.Add(1)
		}
		h.ServeHTTP(w, r)
	})
	ts.Start()
	t.Cleanup(ts.Close)
	return in
}

// searchResp is POST /search's answer as a client reads it.
type searchResp struct {
	Results []struct {
		Identifier    string  `json:"identifier"`
		Score         float64 `json:"score"`
		Source        string  `json:"source"`
		OriginService string  `json:"originService"`
		ReceivedAt    string  `json:"receivedAt"`
	} `json:"results"`
	Referrals []struct {
		Identifier, DisplayName, Type, URL string
	} `json:"referrals"`
	Upstreams []federation.Outcome `json:"upstreams"`
	PageToken string               `json:"pageToken"`
}

func search(t *testing.T, base string, body map[string]any) searchResp {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/search", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s/search: %d %s", base, resp.StatusCode, raw)
	}
	var out searchResp
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return out
}

func outcome(t *testing.T, r searchResp, endpoint string) federation.Outcome {
	t.Helper()
	for _, o := range r.Upstreams {
		if o.Registry == endpoint {
			return o
		}
	}
	t.Fatalf("no outcome for %s: %+v", endpoint, r.Upstreams)
	return federation.Outcome{}
}

// TestOwnServersAsRegistries federates several instances of our own server,
// each over its own index, plus an upstream that hangs, one that fails, one
// that answers garbage and one that points back to the first (a loop).
func TestOwnServersAsRegistries(t *testing.T) {
	b := newInstance(t, "fedb", map[string][]byte{
		"https://weather.example/.well-known/ai-catalog.json": catalog("weather.example", "forecast", "radar"),
		"https://shared.example/.well-known/ai-catalog.json":  catalog("shared.example", "translator"),
	}, nil)
	c := newInstance(t, "fedc", map[string][]byte{
		"https://lang.example/.well-known/ai-catalog.json":   catalog("lang.example", "dictionary"),
		"https://shared.example/.well-known/ai-catalog.json": catalog("shared.example", "translator"),
	}, nil)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // the server notices a gone client only once the body is read
		<-r.Context().Done()
	}))
	t.Cleanup(hang.Close)
	fail := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 500) }))
	t.Cleanup(fail.Close)
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>nope")) }))
	t.Cleanup(garbage.Close)

	// A and D federate to each other and forward "auto" (chains allowed).
	a := newInstance(t, "feda", map[string][]byte{
		"https://travel.example/.well-known/ai-catalog.json": catalog("travel.example", "flights", "hotels"),
	}, func(self string) federation.Config {
		return federation.Config{
			Upstreams:   []string{b.url, c.url, hang.URL, fail.URL, garbage.URL},
			Budget:      time.Second,
			ForwardAuto: true,
			MaxHops:     3,
		}
	})
	d := newInstance(t, "fedd", map[string][]byte{
		"https://loop.example/.well-known/ai-catalog.json": catalog("loop.example", "echo"),
	}, func(self string) federation.Config {
		return federation.Config{Upstreams: []string{a.url}, ForwardAuto: true, MaxHops: 3}
	})
	if err := a.fed.Book().AddConfigured(d.url); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	r := search(t, a.url, map[string]any{"query": map[string]any{"text": "helper"}, "pageSize": 20})
	if el := time.Since(start); el > 3*time.Second { // sanity bound; outcomes are the assertion
		t.Fatalf("federated search took %v with a 1s budget", el)
	}
	want := map[string]string{
		b.url + "/search": federation.StatusOK, c.url + "/search": federation.StatusOK, d.url + "/search": federation.StatusOK,
		hang.URL + "/search": federation.StatusTimeout, fail.URL + "/search": federation.StatusError, garbage.URL + "/search": federation.StatusError,
	}
	for ep, st := range want {
		if o := outcome(t, r, ep); o.Status != st {
			t.Errorf("%s: %+v, want %s", ep, o, st)
		}
	}
	// D did not call A back: A saw only the client's request.
	if n := a.calls.Load(); n != 1 {
		t.Fatalf("A served %d searches, want 1 (the loop through D must be cut)", n)
	}

	sourceOf := map[string]string{}
	for _, res := range r.Results {
		if _, dup := sourceOf[res.Identifier]; dup {
			t.Fatalf("duplicate %s", res.Identifier)
		}
		sourceOf[res.Identifier] = res.Source
		if res.Score < 0 || res.Score > 100 || res.Score != float64(int(res.Score)) {
			t.Fatalf("%s score %v", res.Identifier, res.Score)
		}
		if res.Source != a.url && (res.OriginService == "" || res.ReceivedAt == "") {
			t.Fatalf("%s from %s lacks provenance", res.Identifier, res.Source)
		}
	}
	wantSource := map[string]string{
		"urn:ai:travel.example:agent:flights":   a.url,
		"urn:ai:travel.example:agent:hotels":    a.url,
		"urn:ai:weather.example:agent:forecast": b.url + "/search",
		"urn:ai:weather.example:agent:radar":    b.url + "/search",
		"urn:ai:lang.example:agent:dictionary":  c.url + "/search",
		"urn:ai:loop.example:agent:echo":        d.url + "/search",
	}
	for id, src := range wantSource {
		if sourceOf[id] != src {
			t.Errorf("%s source %q, want %q (all: %v)", id, sourceOf[id], src, sourceOf)
		}
	}
	if s := sourceOf["urn:ai:shared.example:agent:translator"]; s != b.url+"/search" && s != c.url+"/search" {
		t.Errorf("translator (in B and C) source %q", s)
	}

	// none: untouched by upstreams.
	before := b.calls.Load()
	r = search(t, a.url, map[string]any{"query": map[string]any{"text": "helper", "federation": "none"}})
	if b.calls.Load() != before || len(r.Upstreams) != 0 {
		t.Fatalf("none mode reached upstreams: %+v", r.Upstreams)
	}
	for _, res := range r.Results {
		if res.Source != a.url {
			t.Fatalf("none mode result from %s", res.Source)
		}
	}

	// referrals: A's results plus its book.
	r = search(t, a.url, map[string]any{"query": map[string]any{"text": "helper", "federation": "referrals"}})
	if b.calls.Load() != before {
		t.Fatal("referrals mode called an upstream")
	}
	refs := map[string]bool{}
	for _, ref := range r.Referrals {
		if ref.Type != federation.ReferralType || ref.Identifier == "" {
			t.Fatalf("referral %+v", ref)
		}
		refs[ref.URL] = true
	}
	for _, in := range []*instance{b, c, d} {
		if !refs[in.url+"/search"] {
			t.Errorf("referrals %v lack %s", refs, in.url)
		}
	}
}

// TestOwnServersPaging pages a federated answer to the end: every source
// continues where it stopped, nothing repeats.
func TestOwnServersPaging(t *testing.T) {
	var names []string
	for i := range 12 {
		names = append(names, fmt.Sprintf("b%02d", i))
	}
	b := newInstance(t, "fedpb", map[string][]byte{"https://bee.example/.well-known/ai-catalog.json": catalog("bee.example", names...)}, nil)
	names = names[:0]
	for i := range 9 {
		names = append(names, fmt.Sprintf("a%02d", i))
	}
	a := newInstance(t, "fedpa", map[string][]byte{"https://ay.example/.well-known/ai-catalog.json": catalog("ay.example", names...)},
		func(string) federation.Config {
			// A generous budget: a page that times out on a loaded machine
			// (-race, busy CPUs) ends that source, which is not what this
			// test is about.
			return federation.Config{Upstreams: []string{b.url}, Budget: 20 * time.Second, UpstreamTimeout: 20 * time.Second}
		})
	seen := map[string]bool{}
	tok := ""
	for page := 0; ; page++ {
		if page > 10 {
			t.Fatal("paging does not end")
		}
		body := map[string]any{"query": map[string]any{"text": "helper"}, "pageSize": 5}
		if tok != "" {
			body["pageToken"] = tok
		}
		r := search(t, a.url, body)
		for _, res := range r.Results {
			if seen[res.Identifier] {
				t.Fatalf("page %d repeats %s", page, res.Identifier)
			}
			seen[res.Identifier] = true
		}
		if r.PageToken == "" {
			break
		}
		tok = r.PageToken
	}
	if len(seen) != 21 {
		t.Fatalf("%d results over all pages, want 21", len(seen))
	}
}
