package sigcheck_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler/sigcheck"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

// docs is a Fetcher serving fixed documents by URL and counting fetches.
type docs struct {
	m map[string][]byte
	n atomic.Int64
}

func (d *docs) Fetch(_ context.Context, u string) ([]byte, error) {
	d.n.Add(1)
	if b, ok := d.m[u]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("get %s: HTTP 404", u)
}

var now = time.Date(2026, time.March, 2, 9, 0, 0, 0, time.UTC)

// signedCatalog is a catalog of host with one url entry whose trust
// manifest is signed by signer's key (kid of signer), edited by edit first.
func signedCatalog(host, signer string, edit func(tm map[string]any)) []byte {
	id := "urn:air:" + host + ":agent:one"
	e := map[string]any{"identifier": id, "displayName": "One", "type": "application/a2a-agent-card+json",
		"url": "https://" + host + "/agents/one.json", "version": "1.0.0"}
	tm := map[string]any{"identity": fixtures.DID(host), "issuedAt": "2026-01-01T00:00:00Z",
		"subject": map[string]any{"identifier": id, "type": e["type"], "version": "1.0.0", "url": e["url"]}}
	if edit != nil {
		edit(tm)
	}
	fixtures.SignManifest(tm, fixtures.SigningKey(signer), fixtures.KeyID(signer), nil)
	e["trustManifest"] = tm
	b, _ := json.Marshal(map[string]any{"specVersion": "1.0", "entries": []any{e}})
	return b
}

func codes(v normalize.SignatureVerdict) []string {
	var out []string
	for _, p := range v.Problems {
		out = append(out, p.Code)
	}
	return out
}

func TestEntrySignature(t *testing.T) {
	const host = "pub.test"
	f := &docs{m: map[string][]byte{"https://pub.test/.well-known/did.json": fixtures.DIDDocument(host)}}
	cases := []struct {
		name string
		body []byte
		want string // "" = valid
	}{
		{"valid", signedCatalog(host, host, nil), ""},
		{"other signer", signedCatalog(host, "evil.test", nil), normalize.CodeWrongSigner},
		{"expired", signedCatalog(host, host, func(tm map[string]any) { tm["expiresAt"] = "2026-03-01T00:00:00Z" }), normalize.CodeSignatureExpired},
		{"not yet", signedCatalog(host, host, func(tm map[string]any) { tm["issuedAt"] = "2026-04-01T00:00:00Z" }), normalize.CodeSignatureExpired},
		{"no subject", signedCatalog(host, host, func(tm map[string]any) { delete(tm, "subject") }), normalize.CodeSubjectMismatch},
		{"version", signedCatalog(host, host, func(tm map[string]any) { tm["subject"].(map[string]any)["version"] = "2.0.0" }), normalize.CodeSubjectMismatch},
		{"http url", signedCatalog(host, host, func(tm map[string]any) {
			tm["subject"].(map[string]any)["url"] = "http://pub.test/agents/one.json"
		}), normalize.CodeSubjectMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := sigcheck.New(sigcheck.Config{}).Catalog(t.Context(), f, tc.body, now)
			if v == nil || v.Catalog != nil {
				t.Fatalf("verdicts = %+v, want one entry verdict and no catalog verdict", v)
			}
			ev := v.Entries["entries[0]"]
			switch {
			case tc.want == "" && !ev.Valid():
				t.Fatalf("verdict = %+v, want valid", ev)
			case tc.want != "" && (ev.Valid() || !slices.Contains(codes(ev), tc.want)):
				t.Fatalf("verdict = %+v, want %s", ev, tc.want)
			}
		})
	}
}

func TestHeaderRules(t *testing.T) {
	const host = "pub.test"
	f := &docs{m: map[string][]byte{"https://pub.test/.well-known/did.json": fixtures.DIDDocument(host)}}
	sign := func(hdr map[string]any) []byte {
		cat := map[string]any{"specVersion": "1.0", "host": map[string]any{"identifier": fixtures.DID(host)}, "entries": []any{}}
		fixtures.SignManifest(cat, fixtures.SigningKey(host), fixtures.KeyID(host), hdr)
		b, _ := json.Marshal(cat)
		return b
	}
	cases := []struct {
		name string
		hdr  map[string]any
		want string
	}{
		{"plain", nil, ""},
		{"jwk", map[string]any{"jwk": map[string]string{"kty": "EC"}}, normalize.CodeForbiddenHeader},
		{"x5u", map[string]any{"x5u": "https://pub.test/cert.pem"}, normalize.CodeForbiddenHeader},
		{"x5c", map[string]any{"x5c": []string{"MIIB"}}, normalize.CodeForbiddenHeader},
		{"hs256", map[string]any{"alg": "HS256"}, normalize.CodeUnsupportedSigAlg},
		{"none", map[string]any{"alg": "none"}, normalize.CodeUnsupportedSigAlg},
		{"kid elsewhere", map[string]any{"kid": "did:web:pub.test"}, normalize.CodeUnresolvableKey},
		{"unknown key", map[string]any{"kid": "did:web:pub.test#key-9"}, normalize.CodeUnresolvableKey},
		{"exp past", map[string]any{"exp": now.Add(-time.Hour).Unix()}, normalize.CodeSignatureExpired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := sigcheck.New(sigcheck.Config{}).Catalog(t.Context(), f, sign(tc.hdr), now)
			if v == nil || v.Catalog == nil {
				t.Fatalf("verdicts = %+v, want a catalog verdict", v)
			}
			cv := *v.Catalog
			if (tc.want == "") != cv.Valid() || (tc.want != "" && !slices.Contains(codes(cv), tc.want)) {
				t.Fatalf("catalog verdict = %+v, want %q", cv, tc.want)
			}
		})
	}
}

func TestCatalogSignerMustBeHost(t *testing.T) {
	cat := map[string]any{"specVersion": "1.0", "host": map[string]any{"identifier": "did:web:a.test"}, "entries": []any{}}
	fixtures.SignManifest(cat, fixtures.SigningKey("b.test"), fixtures.KeyID("b.test"), nil)
	body, _ := json.Marshal(cat)
	f := &docs{m: map[string][]byte{"https://b.test/.well-known/did.json": fixtures.DIDDocument("b.test")}}
	v := sigcheck.New(sigcheck.Config{}).Catalog(t.Context(), f, body, now)
	if v == nil || v.Catalog == nil || !slices.Contains(codes(*v.Catalog), normalize.CodeWrongSigner) {
		t.Fatalf("verdicts = %+v, want wrong_signer", v)
	}
	if f.n.Load() != 0 {
		t.Errorf("fetched %d documents for a wrong signer, want none", f.n.Load())
	}
}

// TestRealworld: the published examples carry placeholder signatures; none
// may pass, each failure is named, nothing panics.
func TestRealworld(t *testing.T) {
	files, _ := filepath.Glob("testdata/realworld/*.json")
	if len(files) == 0 {
		t.Fatal("no real-world files")
	}
	f := &docs{}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			body, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			v := sigcheck.New(sigcheck.Config{}).Catalog(t.Context(), f, body, now)
			if v == nil {
				return // nothing signed, no digest: unsigned_trust.json, trust_nonuri.json
			}
			all := append([]normalize.SignatureVerdict{}, mapValues(v.Entries)...)
			if v.Catalog != nil {
				all = append(all, *v.Catalog)
			}
			for _, sv := range all {
				if sv.Valid() || len(sv.Problems) == 0 {
					t.Errorf("verdict %+v passes a placeholder signature", sv)
				}
				for _, p := range sv.Problems {
					if p.Code == "" || p.Path == "" || p.Message == "" {
						t.Errorf("unnamed problem %+v", p)
					}
				}
			}
			// What each file must yield, for the files that say it.
			want := map[string]string{
				"weak_signature.json": normalize.CodeUnsupportedSigAlg,
				"trust_findings.json": normalize.CodeBadSignature,
				"trust_clean.json":    normalize.CodeUnresolvableKey,
			}[filepath.Base(name)]
			if want != "" && !slices.Contains(codes(normalize.SignatureVerdict{Problems: v.Problems()}), want) {
				t.Errorf("problems %+v, want one %s", v.Problems(), want)
			}
		})
	}
}

func mapValues(m map[string]normalize.SignatureVerdict) []normalize.SignatureVerdict {
	var out []normalize.SignatureVerdict
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func TestDIDCache(t *testing.T) {
	const host = "pub.test"
	f := &docs{m: map[string][]byte{"https://pub.test/.well-known/did.json": fixtures.DIDDocument(host)}}
	clock := now
	v := sigcheck.New(sigcheck.Config{CacheTTL: time.Hour, FailureTTL: time.Minute, Clock: func() time.Time { return clock }})
	body := signedCatalog(host, host, nil)
	for range 3 {
		if ev := v.Catalog(t.Context(), f, body, clock).Entries["entries[0]"]; !ev.Valid() {
			t.Fatalf("verdict %+v", ev)
		}
	}
	if n := f.n.Load(); n != 1 {
		t.Fatalf("fetched the DID document %d times in its TTL, want 1", n)
	}
	// Another catalog by the same signer uses the cached key.
	if ev := v.Catalog(t.Context(), f, signedCatalog(host, host, func(tm map[string]any) { tm["issuedAt"] = "2026-01-02T00:00:00Z" }), clock).Entries["entries[0]"]; !ev.Valid() || f.n.Load() != 1 {
		t.Fatalf("verdict %+v after %d fetches, want valid from the cached key", ev, f.n.Load())
	}
	clock = clock.Add(2 * time.Hour)
	v.Catalog(t.Context(), f, body, clock)
	if n := f.n.Load(); n != 2 {
		t.Fatalf("fetched %d times after the TTL, want 2", n)
	}
	// A failure is remembered for FailureTTL only.
	other := signedCatalog("gone.test", "gone.test", nil)
	v.Catalog(t.Context(), f, other, clock)
	v.Catalog(t.Context(), f, other, clock)
	if n := f.n.Load(); n != 3 {
		t.Fatalf("fetched %d times, want the failed DID fetched once", n)
	}
	clock = clock.Add(2 * time.Minute)
	v.Catalog(t.Context(), f, other, clock)
	if n := f.n.Load(); n != 4 {
		t.Fatalf("fetched %d times, want the failed DID tried again after FailureTTL", n)
	}
}

func TestDIDURL(t *testing.T) {
	for did, want := range map[string]string{
		"did:web:example.com":             "https://example.com/.well-known/did.json",
		"did:web:example.com%3A8443":      "https://example.com:8443/.well-known/did.json",
		"did:web:example.com:users:alice": "https://example.com/users/alice/did.json",
		"did:web:Example.COM":             "https://example.com/.well-known/did.json",
	} {
		if got, err := sigcheck.DIDURL(did); err != nil || got != want {
			t.Errorf("DIDURL(%q) = %q, %v; want %q", did, got, err, want)
		}
	}
	for _, bad := range []string{"did:key:z6Mk", "did:web:", "did:web:a.com:..", "did:web:a.com%2Fevil"} {
		if got, err := sigcheck.DIDURL(bad); err == nil {
			t.Errorf("DIDURL(%q) = %q, want an error", bad, got)
		}
	}
}

func TestCheckDigest(t *testing.T) {
	body := []byte("hello")
	cases := []struct {
		digest, want string
	}{
		{fixtures.Digest(body), ""},
		{"SHA256:" + fixtures.Digest(body)[7:], ""},
		{fixtures.Digest([]byte("other")), normalize.CodeDigestMismatch},
		{"md5:5d41402abc4b2a76b9719d911017c592", normalize.CodeWeakDigest},
		{"sha1:aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d", normalize.CodeWeakDigest},
		{"sha256:not-hex!", normalize.CodeWeakDigest},
		{"9f86d081", normalize.CodeWeakDigest},
	}
	for _, tc := range cases {
		p := sigcheck.CheckDigest(tc.digest, body, "$.digest", "the body")
		switch {
		case tc.want == "" && p != nil:
			t.Errorf("CheckDigest(%q) = %+v, want nil", tc.digest, p)
		case tc.want != "" && (p == nil || p.Code != tc.want):
			t.Errorf("CheckDigest(%q) = %+v, want %s", tc.digest, p, tc.want)
		}
	}
}

// TestSignedPayload: the signature member is cut from the canonical form
// wherever it sorts (first, middle, last), and for a signature object only
// its jws goes (with additionalSignatures).
func TestSignedPayload(t *testing.T) {
	for _, doc := range []map[string]any{
		{"signature": "x", "b": 1},
		{"a": []any{1, "two"}, "signature": "x", "z": map[string]any{"signature": "inner stays"}},
		{"a": 1, "signature": "x"},
		{"signature": "x"},
	} {
		want := map[string]any{}
		for k, v := range doc {
			if k != "signature" {
				want[k] = v
			}
		}
		got, err := sigcheck.SignedPayload(fixtures.Canonical(doc), false)
		if err != nil || string(got) != string(fixtures.Canonical(want)) {
			t.Errorf("SignedPayload(%s) = %s, %v; want %s", fixtures.Canonical(doc), got, err, fixtures.Canonical(want))
		}
	}
	doc := map[string]any{"subject": "s", "additionalSignatures": []any{"y"},
		"signature": map[string]any{"signer": "did:web:a.test", "jws": "h..s", "profile": "did-web-v1"}}
	want := fixtures.Canonical(map[string]any{"subject": "s", "signature": map[string]any{"signer": "did:web:a.test", "profile": "did-web-v1"}})
	if got, err := sigcheck.SignedPayload(fixtures.Canonical(doc), true); err != nil || string(got) != string(want) {
		t.Errorf("object shape: %s, %v; want %s", got, err, want)
	}
	if _, err := sigcheck.SignedPayload([]byte(`{"a":1,"a":2,"signature":"x"}`), false); err == nil {
		t.Error("duplicate member names were canonicalized")
	}
}

// TestUntil: verdicts say when they may change: when the signer's DID
// document is due again, or a signature expires first.
func TestUntil(t *testing.T) {
	const host = "pub.test"
	f := &docs{m: map[string][]byte{"https://pub.test/.well-known/did.json": fixtures.DIDDocument(host)}}
	clock := func() time.Time { return now }
	v := sigcheck.New(sigcheck.Config{CacheTTL: time.Hour, Clock: clock})
	if got := v.Catalog(t.Context(), f, signedCatalog(host, host, nil), now).Until; !got.Equal(now.Add(time.Hour)) {
		t.Errorf("until = %v, want the DID document's cache time %v", got, now.Add(time.Hour))
	}
	soon := now.Add(10 * time.Minute)
	body := signedCatalog(host, host, func(tm map[string]any) { tm["expiresAt"] = soon.Format(time.RFC3339) })
	if got := v.Catalog(t.Context(), f, body, now).Until; !got.Equal(soon) {
		t.Errorf("until = %v, want the expiry %v", got, soon)
	}
	// Nothing that depends on time: a wrong signer is refused before any key.
	if got := v.Catalog(t.Context(), f, signedCatalog(host, "evil.test", nil), now).Until; !got.IsZero() {
		t.Errorf("until = %v for a verdict that does not depend on time", got)
	}
}

// TestNestedInlineEntry: an entry of an inline nested catalog is checked
// too, under the path normalize gives it, and its record ends signed.
func TestNestedInlineEntry(t *testing.T) {
	const host = "pub.test"
	f := &docs{m: map[string][]byte{"https://pub.test/.well-known/did.json": fixtures.DIDDocument(host)}}
	var inner map[string]any
	if err := json.Unmarshal(signedCatalog(host, host, nil), &inner); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"specVersion": "1.0", "entries": []any{map[string]any{
		"identifier": "urn:air:pub.test:catalog:bundle", "displayName": "Bundle", "type": "application/ai-catalog+json", "data": inner}}})
	tv := sigcheck.New(sigcheck.Config{}).Catalog(t.Context(), f, body, now)
	if tv == nil || !tv.Entries["entries[0].data.entries[0]"].Valid() {
		t.Fatalf("verdicts %+v, want a valid one at entries[0].data.entries[0]", tv)
	}
	res := normalize.Catalog(body, normalize.Options{Origin: "https://other.test/c.json", Trust: tv})
	for _, rec := range res.Records {
		if rec.Identifier == "urn:air:pub.test:agent:one" && (rec.Trust == nil || rec.Trust.Level != normalize.TrustSigned) {
			t.Fatalf("nested record trust %+v, want signed", rec.Trust)
		}
	}
	if len(res.Records) != 2 {
		t.Fatalf("%d records, want the bundle and its entry", len(res.Records))
	}
}

// TestVerdictCache: the same bytes are not checked again while their
// verdict holds (no fetch, no crypto), and are once it may have changed.
func TestVerdictCache(t *testing.T) {
	const host = "pub.test"
	f := &docs{m: map[string][]byte{"https://pub.test/.well-known/did.json": fixtures.DIDDocument(host)}}
	clock := now
	v := sigcheck.New(sigcheck.Config{CacheTTL: time.Hour, Clock: func() time.Time { return clock }})
	body := signedCatalog(host, host, nil)
	first := v.Catalog(t.Context(), f, body, clock)
	delete(f.m, "https://pub.test/.well-known/did.json") // would fail if asked
	clock = clock.Add(time.Minute)
	again := v.Catalog(t.Context(), f, body, clock)
	if !again.Entries["entries[0]"].Valid() || !again.CheckedAt.Equal(clock) || !first.CheckedAt.Equal(now) || f.n.Load() != 1 {
		t.Fatalf("second check %+v (first %+v), %d fetches; want the cached verdict, checked now", again, first, f.n.Load())
	}
	clock = clock.Add(2 * time.Hour) // the key is due again, and now gone
	if ev := v.Catalog(t.Context(), f, body, clock).Entries["entries[0]"]; ev.Valid() || !slices.Contains(codes(ev), normalize.CodeUnresolvableKey) {
		t.Fatalf("verdict %+v after the DID document went away, want unresolvable_key", ev)
	}
	// Offline checks are never kept: a later online check must run.
	off := sigcheck.New(sigcheck.Config{})
	off.Catalog(t.Context(), sigcheck.Offline{}, body, now)
	f.m["https://pub.test/.well-known/did.json"] = fixtures.DIDDocument(host)
	if ev := off.Catalog(t.Context(), f, body, now).Entries["entries[0]"]; !ev.Valid() {
		t.Fatalf("verdict %+v online after an offline check, want valid", ev)
	}
}

// TestByteOrderMark: a catalog published with a UTF-8 BOM, which
// normalize reads as the same document, gets the same verdicts.
func TestByteOrderMark(t *testing.T) {
	const host = "pub.test"
	f := &docs{m: map[string][]byte{"https://pub.test/.well-known/did.json": fixtures.DIDDocument(host)}}
	body := append([]byte("\xef\xbb\xbf"), signedCatalog(host, host, nil)...)
	v := sigcheck.New(sigcheck.Config{}).Catalog(t.Context(), f, body, now)
	if v == nil || !v.Entries["entries[0]"].Valid() {
		t.Fatalf("verdicts of a signed catalog after a BOM = %+v, want entries[0] valid", v)
	}
}

func TestAttestationCheck(t *testing.T) {
	doc := []byte("report")
	rec := normalize.Record{Identifier: "urn:air:pub.test:agent:a", TrustManifest: json.RawMessage(`{"attestations":[
		{"type":"SOC2","uri":"https://pub.test/a.pdf","digest":"` + fixtures.Digest(doc) + `","size":6},
		{"type":"ISO","uri":"https://pub.test/b.pdf","digest":"` + fixtures.Digest(doc) + `","size":3},
		{"type":"old","uri":"https://pub.test/c.pdf","digest":"md5:5d41402abc4b2a76b9719d911017c592"},
		{"type":"none","uri":"https://pub.test/d.pdf"}]}`)}
	atts := sigcheck.Attestations(&rec, 10)
	if len(atts) != 2 {
		t.Fatalf("attestations %+v, want the two with a usable digest", atts)
	}
	if p := atts[0].Check(doc); p != nil {
		t.Errorf("matching attestation: %+v", p)
	}
	if p := atts[1].Check(doc); p == nil || p.Code != normalize.CodeDigestMismatch {
		t.Errorf("attestation over its declared size: %+v, want digest_mismatch", p)
	}
	if got := sigcheck.Attestations(&rec, 1); len(got) != 1 {
		t.Errorf("limit 1 gave %d", len(got))
	}
}
