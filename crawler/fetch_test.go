package crawler_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

var acmeWellKnown = "https://" + fixtures.HostAcme + fixtures.PathWellKnown

func TestConditionalGETYieldsNotModified(t *testing.T) {
	web := startWeb(t)
	sink := &crawlertest.Collector{}
	c := newCrawler(t, webConfig(web), sink)

	first := crawl(t, c, fixtures.HostAcme)
	if got, _ := find(first, acmeWellKnown); got.Status != normalize.StatusOK {
		t.Fatalf("first crawl: %s is %s %s", acmeWellKnown, got.Status, got.Reason)
	}
	web.ResetRequests()
	second := crawl(t, c, fixtures.HostAcme)
	got, _ := find(second, acmeWellKnown)
	if got.Status != normalize.StatusNotModified || got.Records != 0 {
		t.Fatalf("second crawl: %s is %s with %d records, want not_modified", acmeWellKnown, got.Status, got.Records)
	}
	// The nested catalogs named by the unchanged document are still visited
	// (and are themselves not modified).
	if second.Totals.NotModified < 2 {
		t.Errorf("second crawl: %d not_modified catalogs, want the well-known one and those it links", second.Totals.NotModified)
	}
	var sent bool
	for _, r := range web.RequestsFor(fixtures.HostAcme) {
		if r.Path == fixtures.PathWellKnown {
			sent = r.IfNoneMatch != "" || r.IfModifiedSince != ""
			if r.Status != http.StatusNotModified {
				t.Errorf("well-known answered %d, want 304", r.Status)
			}
		}
	}
	if !sent {
		t.Error("second crawl sent no validators")
	}

	// Validators exported by one crawler make another one's fetch conditional.
	other := newCrawler(t, webConfig(web), &crawlertest.Collector{})
	other.SetValidators(c.Validators())
	third := crawl(t, other, fixtures.HostAcme)
	if got, _ := find(third, acmeWellKnown); got.Status != normalize.StatusNotModified {
		t.Fatalf("crawler with imported validators: %s is %s", acmeWellKnown, got.Status)
	}
}

func TestSSRFGuard(t *testing.T) {
	web := startWeb(t)
	public := webConfig(web)
	public.AllowPrivate = false
	seeds := []string{fixtures.HostAcme, web.URL("127.0.0.1", fixtures.PathWellKnown)}

	rep := crawl(t, newCrawler(t, public, &crawlertest.Collector{}), seeds...)
	if len(rep.Catalogs) == 0 {
		t.Fatal("public-mode crawl reported nothing")
	}
	for _, c := range rep.Catalogs {
		if c.Status != normalize.StatusFailed || c.Reason != crawler.ReasonSSRFBlocked {
			t.Errorf("public mode: %s is %s %q, want failed ssrf_blocked", c.URL, c.Status, c.Reason)
		}
	}
	if n := len(web.Requests()); n != 0 {
		t.Fatalf("public mode: the loopback web received %d requests", n)
	}

	rep = crawl(t, newCrawler(t, webConfig(web), &crawlertest.Collector{}), fixtures.HostAcme)
	if got, _ := find(rep, acmeWellKnown); got.Status != normalize.StatusOK {
		t.Fatalf("allow private: %s is %s %q", acmeWellKnown, got.Status, got.Reason)
	}

	// An allowed prefix opens exactly that range.
	cidr := webConfig(web)
	cidr.AllowPrivate = false
	cidr.AllowCIDRs = mustPrefixes("127.0.0.0/8")
	rep = crawl(t, newCrawler(t, cidr, &crawlertest.Collector{}), fixtures.HostAcme)
	if got, _ := find(rep, acmeWellKnown); got.Status != normalize.StatusOK {
		t.Fatalf("allow-cidr 127.0.0.0/8: %s is %s %q", acmeWellKnown, got.Status, got.Reason)
	}
}

// TestSSRFGuardEmbeddedIPv4 dials addresses that carry a loopback or private
// IPv4 inside IPv6 (NAT64, 6to4, IPv4-compatible, site-local): all are
// refused by the guard, before any connection, even with loopback opened by
// --allow-cidr (opening 127.0.0.0/8 does not open NAT64 or 6to4).
func TestSSRFGuardEmbeddedIPv4(t *testing.T) {
	web := startWeb(t)
	for _, mode := range []struct {
		name  string
		allow []string
	}{{"public", nil}, {"loopback allowed", []string{"127.0.0.0/8"}}} {
		cfg := webConfig(web)
		cfg.AllowPrivate = false
		cfg.AllowCIDRs = mustPrefixes(mode.allow...)
		cfg.MaxAttempts = 1
		var seeds []string
		for _, ip := range []string{
			"64:ff9b::7f00:1",    // NAT64 of 127.0.0.1
			"64:ff9b::a00:1",     // NAT64 of 10.0.0.1
			"64:ff9b::a9fe:a9fe", // NAT64 of 169.254.169.254
			"64:ff9b:1::7f00:1",  // local-use NAT64 of 127.0.0.1
			"2002:7f00:1::1",     // 6to4 over 127.0.0.1
			"2002:a9fe:a9fe::1",  // 6to4 over 169.254.169.254
			"::7f00:1",           // IPv4-compatible 127.0.0.1
			"fec0::1",            // site-local
			"2001:db8::1",        // documentation
			"100::1",             // discard-only
		} {
			seeds = append(seeds, fmt.Sprintf("http://[%s]:%d%s", ip, web.HTTPPort, fixtures.PathWellKnown))
		}
		rep := crawl(t, newCrawler(t, cfg, &crawlertest.Collector{}), seeds...)
		if len(rep.Catalogs) != len(seeds) {
			t.Fatalf("%s: %d catalogs reported, want %d", mode.name, len(rep.Catalogs), len(seeds))
		}
		for _, c := range rep.Catalogs {
			if c.Status != normalize.StatusFailed || c.Reason != crawler.ReasonSSRFBlocked {
				t.Errorf("%s: %s is %s %q (%s), want failed ssrf_blocked", mode.name, c.URL, c.Status, c.Reason, c.Error)
			}
		}
	}
}

func TestHostHeadersAndHostPatterns(t *testing.T) {
	web := startWeb(t)
	web.Script(fixtures.HostAcme, fixtures.PathWellKnown, fixtures.Behavior{RequireAuthorization: "Bearer s3cret"})

	rep := crawl(t, newCrawler(t, webConfig(web), &crawlertest.Collector{}), fixtures.HostAcme)
	if got, _ := find(rep, acmeWellKnown); got.Reason != crawler.ReasonHTTPStatus {
		t.Fatalf("without the header: %s is %s %q, want http_status", acmeWellKnown, got.Status, got.Reason)
	}

	cfg := webConfig(web)
	cfg.HostHeaders = map[string]http.Header{"acme.test": {"Authorization": {"Bearer s3cret"}}}
	web.ResetRequests()
	rep = crawl(t, newCrawler(t, cfg, &crawlertest.Collector{}), fixtures.HostAcme)
	if got, _ := find(rep, acmeWellKnown); got.Status != normalize.StatusOK {
		t.Fatalf("with the header: %s is %s %q", acmeWellKnown, got.Status, got.Reason)
	}
	// The header goes to its host only, never to the artifact hosts.
	for _, r := range web.Requests() {
		if r.Host != fixtures.HostAcme && r.Authorization != "" {
			t.Errorf("Authorization sent to %s%s", r.Host, r.Path)
		}
	}

	web.Unscript(fixtures.HostAcme, fixtures.PathWellKnown)
	cfg = webConfig(web)
	cfg.ExcludeHosts = []string{"*.acme.test"}
	web.ResetRequests()
	rep = crawl(t, newCrawler(t, cfg, &crawlertest.Collector{}), fixtures.HostAcme)
	for _, r := range web.Requests() {
		if strings.HasSuffix(r.Host, ".acme.test") {
			t.Errorf("excluded host requested: %s%s", r.Host, r.Path)
		}
	}
	got, _ := find(rep, acmeWellKnown)
	if got.Status != normalize.StatusOK || !hasProblem(got.Problems, normalize.CodeInvalidArtifact) {
		t.Errorf("excluding *.acme.test: %s is %s with problems %+v, want ok with the artifacts' invalid_artifact warnings",
			acmeWellKnown, got.Status, got.Problems)
	}
}

func TestEnrichmentFetchesArtifacts(t *testing.T) {
	web := startWeb(t)
	sink := &crawlertest.Collector{}
	rep := crawl(t, newCrawler(t, webConfig(web), sink), fixtures.HostAcme)
	if got, _ := find(rep, acmeWellKnown); got.Status != normalize.StatusOK {
		t.Fatalf("%s is %s", acmeWellKnown, got.Status)
	}
	if n := len(web.RequestsFor(fixtures.HostAcmeAPI)); n == 0 {
		t.Fatalf("no artifact fetched from %s", fixtures.HostAcmeAPI)
	}
	enriched := 0
	for _, r := range sink.Results() {
		for _, rec := range r.Records {
			if len(rec.Bindings) > 0 || len(rec.Skills) > 0 || len(rec.SkillNames) > 0 {
				enriched++
			}
		}
	}
	if enriched == 0 {
		t.Error("no record was enriched from its artifact")
	}

	cfg := webConfig(web)
	cfg.DisableEnrichment = true
	web.ResetRequests()
	crawl(t, newCrawler(t, cfg, &crawlertest.Collector{}), fixtures.HostAcme)
	if n := len(web.RequestsFor(fixtures.HostAcmeAPI)); n != 0 {
		t.Fatalf("enrichment off: %d requests to %s", n, fixtures.HostAcmeAPI)
	}
}

func TestRetriesHonourRetryAfterThenSucceed(t *testing.T) {
	web := startWeb(t)
	web.Script(fixtures.HostAcme, fixtures.PathWellKnown, fixtures.Behavior{Sequence: []fixtures.Behavior{
		{Status: http.StatusServiceUnavailable, RetryAfter: "30", Body: []byte("maintenance")},
		{Status: http.StatusTooManyRequests, RetryAfter: "1", Body: []byte("slow down")},
		{},
	}})
	cfg := webConfig(web)
	cfg.MaxAttempts = 3
	rep := crawl(t, newCrawler(t, cfg, &crawlertest.Collector{}), fixtures.HostAcme)
	if got, _ := find(rep, acmeWellKnown); got.Status != normalize.StatusOK {
		t.Fatalf("%s is %s %q, want ok on the third attempt", acmeWellKnown, got.Status, got.Reason)
	}
	var statuses []int
	for _, r := range web.RequestsFor(fixtures.HostAcme) {
		if r.Path == fixtures.PathWellKnown {
			statuses = append(statuses, r.Status)
		}
	}
	if len(statuses) != 3 || statuses[0] != 503 || statuses[1] != 429 || statuses[2] != 200 {
		t.Fatalf("well-known answered %v, want [503 429 200]", statuses)
	}
}

func TestVanishedWellKnownIsReportedFirstTimeProbesAreNot(t *testing.T) {
	web := startWeb(t)
	c := newCrawler(t, webConfig(web), &crawlertest.Collector{})
	rep := crawl(t, c, fixtures.HostAcme)
	ard := "https://" + fixtures.HostAcme + fixtures.PathARD
	if _, ok := find(rep, ard); ok || rep.Totals.NotFound == 0 {
		t.Fatalf("first crawl: a 404 probe of %s was reported (notFound %d)", ard, rep.Totals.NotFound)
	}
	web.Script(fixtures.HostAcme, fixtures.PathWellKnown, fixtures.Behavior{Status: http.StatusNotFound, Body: []byte("gone")})
	rep = crawl(t, c, fixtures.HostAcme)
	got, ok := find(rep, acmeWellKnown)
	if !ok || got.Status != normalize.StatusFailed || got.Reason != crawler.ReasonHTTPStatus {
		t.Fatalf("vanished %s: %+v (found %v), want failed http_status", acmeWellKnown, got, ok)
	}
}

func TestFetchFailureReasons(t *testing.T) {
	web := startWeb(t)
	// A chain of six redirects: one more than the limit.
	for i := 1; i <= 6; i++ {
		web.Script(fixtures.HostBroken, fmt.Sprintf("/hop/%d.json", i), fixtures.Behavior{Redirect: fmt.Sprintf("/hop/%d.json", i+1)})
	}
	noCA := webConfig(web)
	noCA.CAFile = ""
	cases := []struct {
		name   string
		cfg    crawler.Config
		seed   string
		url    string
		reason string
	}{
		{"too many redirects", webConfig(web), web.URL(fixtures.HostBroken, "/hop/1.json"), web.URL(fixtures.HostBroken, "/hop/1.json"), crawler.ReasonTooManyRedirects},
		{"unknown CA", noCA, fixtures.HostAcme, acmeWellKnown, crawler.ReasonTLSError},
		{"no such host", webConfig(web), "nowhere.test", "https://nowhere.test" + fixtures.PathWellKnown, crawler.ReasonDNSError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := crawl(t, newCrawler(t, tc.cfg, &crawlertest.Collector{}), tc.seed)
			got, ok := find(rep, tc.url)
			if !ok || got.Status != normalize.StatusFailed || got.Reason != tc.reason {
				t.Fatalf("%s: %+v (found %v), want failed %s", tc.url, got, ok, tc.reason)
			}
		})
	}
}
