package crawler_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

// TestCrawlSignatures crawls the signed publishers and checks that each
// case ends with the trust level and problem the rules give it.
func TestCrawlSignatures(t *testing.T) {
	web := startWeb(t)
	reg := prometheus.NewRegistry()
	cfg := webConfig(web)
	cfg.Metrics = reg
	sink := &crawlertest.Collector{}
	c := newCrawler(t, cfg, sink)
	crawl(t, c, web.SignedSeeds()...)

	got := map[string]*normalize.Trust{}
	for _, r := range sink.Results() {
		for _, rec := range r.Records {
			got[rec.Identifier] = rec.Trust
		}
	}
	cases := []struct {
		id, level, code string
	}{
		{fixtures.SignedIdentifier(fixtures.SignedCaseValid), normalize.TrustSigned, ""},
		{fixtures.SignedIdentifier(fixtures.SignedCaseObject), normalize.TrustSigned, ""},
		{fixtures.SignedIdentifier(fixtures.SignedCaseCovered), normalize.TrustSigned, ""},
		{fixtures.SignedIdentifier(fixtures.SignedCaseTampered), normalize.TrustNone, normalize.CodeBadSignature},
		{fixtures.SignedIdentifier(fixtures.SignedCaseExpired), normalize.TrustNone, normalize.CodeSignatureExpired},
		{fixtures.SignedIdentifier(fixtures.SignedCaseWrongSigner), normalize.TrustNone, normalize.CodeWrongSigner},
		{fixtures.SignedIdentifier(fixtures.SignedCaseJKU), normalize.TrustNone, normalize.CodeForbiddenHeader},
		{fixtures.SignedIdentifier(fixtures.SignedCaseSubject), normalize.TrustNone, normalize.CodeSubjectMismatch},
		{fixtures.SignedIdentifier(fixtures.SignedCaseDigest), normalize.TrustNone, normalize.CodeDigestMismatch},
		{fixtures.SignedIdentifier(fixtures.SignedCaseAttestation), normalize.TrustNone, normalize.CodeDigestMismatch},
		{"urn:air:" + fixtures.HostSignedNoDID + ":agent:unresolvable", normalize.TrustNone, normalize.CodeUnresolvableKey},
		{"urn:air:" + fixtures.HostSignedTampered + ":agent:altered", normalize.TrustNone, normalize.CodeBadSignature},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			tr := got[tc.id]
			if tr == nil {
				t.Fatalf("no record or no trust for %s", tc.id)
			}
			var codes []string
			for _, p := range tr.Problems {
				codes = append(codes, p.Code)
			}
			if tr.Level != tc.level || (tc.code == "" && len(codes) > 0) || (tc.code != "" && !slices.Contains(codes, tc.code)) {
				t.Fatalf("trust = %s %v (%+v), want %s %q", tr.Level, codes, tr.Problems, tc.level, tc.code)
			}
			t.Logf("%s %v", tr.Level, tr.Problems)
			if tr.CheckedAt.IsZero() {
				t.Errorf("checkedAt is zero")
			}
			if tc.level == normalize.TrustSigned && tr.Signer != fixtures.DID(fixtures.HostSigned) {
				t.Errorf("signer = %q, want %q", tr.Signer, fixtures.DID(fixtures.HostSigned))
			}
		})
	}
	const fam = "agentfinder_crawler_trust_checks_total"
	if n := sumOf(t, reg, fam, map[string]string{"outcome": "valid"}); n < 3 {
		t.Errorf("valid trust checks counted = %v, want at least 3", n)
	}
	if n := sumOf(t, reg, fam, map[string]string{"outcome": normalize.CodeWrongSigner}); n != 1 {
		t.Errorf("wrong_signer checks counted = %v, want 1", n)
	}
}

// TestSignedCatalogRevalidated: a signed catalog answers 304 on the next
// crawl while its verdict holds, and is fetched and checked whole once the
// signer's DID document is due again (its verdict may have changed though
// its bytes did not).
func TestSignedCatalogRevalidated(t *testing.T) {
	web := startWeb(t)
	var mu sync.Mutex
	now := time.Now()
	cfg := webConfig(web)
	cfg.DIDCacheTTL = time.Hour
	cfg.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c := newCrawler(t, cfg, &crawlertest.Collector{})
	status := func() normalize.FetchStatus {
		t.Helper()
		rep := crawl(t, c, fixtures.HostSigned)
		cr, ok := find(rep, "https://"+fixtures.HostSigned+fixtures.PathWellKnown)
		if !ok {
			t.Fatalf("no report for %s: %+v", fixtures.HostSigned, rep.Catalogs)
		}
		return cr.Status
	}
	if s := status(); s != normalize.StatusOK {
		t.Fatalf("first crawl: %s", s)
	}
	if s := status(); s != normalize.StatusNotModified {
		t.Fatalf("second crawl within the DID document's cache time: %s, want not_modified", s)
	}
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	if s := status(); s != normalize.StatusOK {
		t.Fatalf("crawl after the DID document's cache time: %s, want a whole fetch (ok)", s)
	}
}

// TestSlowDIDDocument: a signed catalog whose signer's DID document answers
// only after the request timeout is indexed all the same, unsigned with an
// unresolvable_key problem: never missing, never signed. (Once, on a loaded
// machine, such a catalog was missing from the index instead.)
func TestSlowDIDDocument(t *testing.T) {
	web := startWeb(t)
	web.Script(fixtures.HostSigned, "/.well-known/did.json", fixtures.Behavior{Delay: 20 * time.Second})
	cfg := webConfig(web)
	cfg.Timeout = 2 * time.Second
	cfg.MaxAttempts = 2
	sink := &crawlertest.Collector{}
	c := newCrawler(t, cfg, sink)
	rep := crawl(t, c, fixtures.HostSigned)
	if cr, ok := find(rep, "https://"+fixtures.HostSigned+fixtures.PathWellKnown); !ok || cr.Status != normalize.StatusOK {
		t.Fatalf("the signed catalog: %+v (found %v), want fetched ok", cr, ok)
	}
	got := map[string]*normalize.Trust{}
	for _, r := range sink.Results() {
		for _, rec := range r.Records {
			got[rec.Identifier] = rec.Trust
		}
	}
	for _, sc := range []string{fixtures.SignedCaseValid, fixtures.SignedCaseObject, fixtures.SignedCaseCovered} {
		id := fixtures.SignedIdentifier(sc)
		tr, ok := got[id]
		if !ok {
			t.Errorf("%s missing: a slow DID document must leave it present, unsigned", id)
			continue
		}
		var codes []string
		if tr != nil {
			for _, p := range tr.Problems {
				codes = append(codes, p.Code)
			}
		}
		if tr == nil || tr.Level != normalize.TrustNone || !slices.Contains(codes, normalize.CodeUnresolvableKey) {
			t.Errorf("%s: trust %+v, want none with %s", id, tr, normalize.CodeUnresolvableKey)
		}
	}
}
