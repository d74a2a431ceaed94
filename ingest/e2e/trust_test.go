package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi"
)

// TestSignedCatalogsEndToEnd crawls the signed publishers into a real
// Meilisearch and reads each case's trust back through GET /agents/{id}:
// every case ends at the level (and with the problem) the rules give it.
// Then the signer's DID document goes away while its catalog stays byte
// for byte the same: the next crawl must rewrite its records as none.
func TestSignedCatalogsEndToEnd(t *testing.T) {
	st := newStack(t, "trust", stackOptions{crawler: func(c *crawler.Config) {
		c.DIDCacheTTL = time.Nanosecond // every crawl resolves the DIDs again
	}})
	w := st.w
	crawl := func() {
		t.Helper()
		st.crawl(t, w.SignedSeeds())
	}
	srv, err := searchapi.New(searchapi.Config{Index: st.index, Meili: st.s.Client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	trustOf := func(id string) normalize.Trust {
		t.Helper()
		resp, err := http.Get(hs.URL + "/agents/" + url.PathEscape(id))
		if err != nil {
			t.Fatalf("GET %s: %v", id, err)
		}
		defer resp.Body.Close()
		var rec struct {
			Trust *normalize.Trust `json:"trust"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&rec); err != nil || resp.StatusCode != http.StatusOK || rec.Trust == nil {
			t.Fatalf("GET %s: status %d, trust %+v, %v", id, resp.StatusCode, rec.Trust, err)
		}
		return *rec.Trust
	}
	check := func(id, level, code string) {
		t.Helper()
		tr := trustOf(id)
		var codes []string
		for _, p := range tr.Problems {
			codes = append(codes, p.Code)
		}
		if tr.Level != level || (code == "") != (len(codes) == 0) || (code != "" && !slices.Contains(codes, code)) {
			t.Errorf("%s: trust %s %v, want %s %q", id, tr.Level, codes, level, code)
		}
	}

	crawl()
	sid := fixtures.SignedIdentifier
	for _, c := range []struct{ id, level, code string }{
		{sid(fixtures.SignedCaseValid), normalize.TrustSigned, ""},
		{sid(fixtures.SignedCaseObject), normalize.TrustSigned, ""},
		{sid(fixtures.SignedCaseCovered), normalize.TrustSigned, ""},
		{sid(fixtures.SignedCaseTampered), normalize.TrustNone, normalize.CodeBadSignature},
		{sid(fixtures.SignedCaseExpired), normalize.TrustNone, normalize.CodeSignatureExpired},
		{sid(fixtures.SignedCaseWrongSigner), normalize.TrustNone, normalize.CodeWrongSigner},
		{sid(fixtures.SignedCaseJKU), normalize.TrustNone, normalize.CodeForbiddenHeader},
		{sid(fixtures.SignedCaseSubject), normalize.TrustNone, normalize.CodeSubjectMismatch},
		{sid(fixtures.SignedCaseDigest), normalize.TrustNone, normalize.CodeDigestMismatch},
		{sid(fixtures.SignedCaseAttestation), normalize.TrustNone, normalize.CodeDigestMismatch},
		{"urn:air:" + fixtures.HostSignedNoDID + ":agent:unresolvable", normalize.TrustNone, normalize.CodeUnresolvableKey},
		{"urn:air:" + fixtures.HostSignedTampered + ":agent:altered", normalize.TrustNone, normalize.CodeBadSignature},
	} {
		check(c.id, c.level, c.code)
	}

	// The key goes away; the catalog does not change.
	w.RemoveFile(fixtures.HostSigned, "/.well-known/did.json")
	crawl()
	for _, c := range []string{fixtures.SignedCaseValid, fixtures.SignedCaseObject, fixtures.SignedCaseCovered} {
		check(sid(c), normalize.TrustNone, normalize.CodeUnresolvableKey)
	}
}
