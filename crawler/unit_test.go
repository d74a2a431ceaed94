package crawler

import (
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
)

func TestAgentmapLines(t *testing.T) {
	base, _ := url.Parse("https://example.test/robots.txt")
	body := []byte(`User-agent: *
Disallow: /private/
AGENTMAP: https://cdn.example.test/catalog.json
agentmap:/agents/ai-catalog.json   # relative
Agentmap: /agents/ai-catalog.json
Sitemap: https://example.test/sitemap.xml
# Agentmap: https://commented.test/x.json
Agentmap: ftp://example.test/no.json
Agentmap:
`)
	got := agentmapLines(body, base)
	want := []string{"https://cdn.example.test/catalog.json", "https://example.test/agents/ai-catalog.json"}
	if !slices.Equal(got, want) {
		t.Fatalf("agentmapLines = %q, want %q", got, want)
	}
}

func TestLinkTagCatalogs(t *testing.T) {
	base, _ := url.Parse("https://example.test/team/index.html")
	page := []byte(`<!doctype html><html><head>
<link rel="stylesheet" href="/style.css">
<link rel="alternate AI-Catalog" href="catalog.json">
<LINK REL=ard HREF="https://other.test/ard.json#frag">
<link rel="ai-catalogue" href="/nope.json">
<link rel="ai-catalog">
</head><body><link rel="ai-catalog" href="/body.json"></body></html>`)
	got := linkTagCatalogs(page, base)
	want := []string{"https://example.test/team/catalog.json", "https://other.test/ard.json", "https://example.test/body.json"}
	if !slices.Equal(got, want) {
		t.Fatalf("linkTagCatalogs = %q, want %q", got, want)
	}
}

func TestLinkHeaderCatalogs(t *testing.T) {
	base, _ := url.Parse("https://example.test/")
	h := http.Header{}
	h.Add("Link", `</a.json>; rel="ai-catalog", <https://x.test/b.json>; rel="alternate ard"; title="a, b"`)
	h.Add("Link", `</style.css>; rel=preload; as=style`)
	h.Add("Link", `</c.json>; rel=ai-catalog`)
	got := linkHeaderCatalogs(h, base)
	want := []string{"https://example.test/a.json", "https://x.test/b.json", "https://example.test/c.json"}
	if !slices.Equal(got, want) {
		t.Fatalf("linkHeaderCatalogs = %q, want %q", got, want)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name, v string
		want    time.Duration
	}{
		{"seconds", "2", 2 * time.Second},
		{"date", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"past date", now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"garbage", "soon", 0},
		{"empty", "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := retryAfter(tc.v, now); got != tc.want {
				t.Fatalf("retryAfter(%q) = %v, want %v", tc.v, got, tc.want)
			}
		})
	}
}

func TestMaxAge(t *testing.T) {
	cases := map[string]time.Duration{
		"public, max-age=3600":        time.Hour,
		"no-cache":                    0,
		"s-maxage=10, max-age=\"60\"": time.Minute,
		"":                            0,
	}
	for v, want := range cases {
		h := http.Header{}
		h.Set("Cache-Control", v)
		if got := maxAge(h); got != want {
			t.Errorf("maxAge(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestParseHostHeaders(t *testing.T) {
	got, err := ParseHostHeaders([]byte(`{"hosts": {"catalog.corp.test": {"Authorization": "Bearer x"}, "*.corp.test": {"X-Team": ["a", "b"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if v := got["catalog.corp.test"].Get("Authorization"); v != "Bearer x" {
		t.Errorf("Authorization = %q", v)
	}
	if v := got["*.corp.test"].Values("X-Team"); !slices.Equal(v, []string{"a", "b"}) {
		t.Errorf("X-Team = %q", v)
	}
	cfg := Config{HostHeaders: got}
	if h := cfg.headersFor("catalog.corp.test"); h.Get("Authorization") != "Bearer x" || len(h.Values("X-Team")) != 2 {
		t.Errorf("headersFor(catalog.corp.test) = %v", h)
	}
	if h := cfg.headersFor("catalog.other.test"); h != nil {
		t.Errorf("headersFor(other) = %v, want none", h)
	}
	for _, bad := range []string{`{"hosts": {"h": {"A": 1}}}`, `not json`, `{"hosts": {"[": {}}}`} {
		if _, err := ParseHostHeaders([]byte(bad)); err == nil {
			t.Errorf("ParseHostHeaders(%s) succeeded", bad)
		}
	}
}

func TestHostAllowed(t *testing.T) {
	cfg := Config{IncludeHosts: []string{"*.corp.test", "corp.test"}, ExcludeHosts: []string{"secret.corp.test"}}
	for host, want := range map[string]bool{
		"corp.test": true, "a.corp.test": true, "SECRET.corp.test": false, "evil.test": false,
	} {
		if got := cfg.hostAllowed(host); got != want {
			t.Errorf("hostAllowed(%s) = %v, want %v", host, got, want)
		}
	}
	if !(Config{}).hostAllowed("anything.test") {
		t.Error("zero config refuses a host")
	}
}

func TestReportFinishDedupesRegistries(t *testing.T) {
	r := Report{Registries: []Registry{
		{URL: "https://a.test/", Via: RegistryViaDNS},
		{URL: "https://a.test/", Via: RegistryViaCatalog},
		{URL: "https://a.test/", Via: RegistryViaDNS},
		{URL: "https://b.test/", Via: RegistryViaCatalog},
		{URL: "https://a.test/", Via: RegistryViaCatalog},
	}}
	r.finish()
	want := []Registry{
		{URL: "https://a.test/", Via: RegistryViaCatalog},
		{URL: "https://a.test/", Via: RegistryViaDNS},
		{URL: "https://b.test/", Via: RegistryViaCatalog},
	}
	if !reflect.DeepEqual(r.Registries, want) || r.Totals.Registries != len(want) {
		t.Errorf("registries %+v (total %d), want %+v", r.Registries, r.Totals.Registries, want)
	}
}

// TestRefreshOf: a catalog's refresh is the sooner of its max-age and its
// first record's expiry; expired or unreadable expiries and failed fetches
// ask for none.
func TestRefreshOf(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ok := normalize.CatalogResult{Status: normalize.StatusOK, MaxAge: 30 * time.Minute, Records: []normalize.Record{
		{Identifier: "urn:ai:a.test:agent:x", ExpiresAt: now.Add(10 * time.Minute).Format(time.RFC3339)},
		{Identifier: "urn:ai:a.test:agent:old", ExpiresAt: now.Add(-time.Hour).Format(time.RFC3339)}, // expired: no hint
		{Identifier: "urn:ai:a.test:agent:bad", ExpiresAt: "soon"},
	}}
	tests := []struct {
		name string
		res  normalize.CatalogResult
		want time.Duration
	}{
		{"nearest expiresAt", ok, 10 * time.Minute},
		{"failed fetch", normalize.CatalogResult{Status: normalize.StatusFailed, MaxAge: time.Minute}, 0},
		{"max-age of a 304", normalize.CatalogResult{Status: normalize.StatusNotModified, MaxAge: 2 * time.Minute}, 2 * time.Minute},
		{"nothing asked", normalize.CatalogResult{Status: normalize.StatusOK}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := refreshOf(&tc.res, now); got != tc.want {
				t.Fatalf("refreshOf = %v, want %v", got, tc.want)
			}
		})
	}
}
