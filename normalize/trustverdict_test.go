package normalize

import (
	"testing"
	"time"
)

func TestTrustLevels(t *testing.T) {
	body := []byte(`{"specVersion":"1.0","entries":[
		{"identifier":"urn:air:pub.test:agent:a","displayName":"A","type":"application/json","url":"https://pub.test/a.json"},
		{"identifier":"urn:air:eu.pub.test:agent:b","displayName":"B","type":"application/json","url":"https://pub.test/b.json"},
		{"identifier":"urn:air:other.test:agent:c","displayName":"C","type":"application/json","url":"https://pub.test/c.json"}]}`)
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	bad := []Problem{{Path: "signature", Code: CodeBadSignature, Severity: SeverityError, Message: "x"}}
	ok := func(s string) SignatureVerdict { return SignatureVerdict{Signer: s} }
	cases := []struct {
		name  string
		trust *TrustVerdicts
		want  [3]string
	}{
		// b's publisher eu.pub.test is not verified by a catalog on pub.test.
		{"not checked", nil, [3]string{TrustDomain, TrustNone, TrustNone}},
		{"nothing signed", &TrustVerdicts{CheckedAt: at}, [3]string{TrustDomain, TrustNone, TrustNone}},
		{"entry signed", &TrustVerdicts{CheckedAt: at, Entries: map[string]SignatureVerdict{"entries[0]": ok("did:web:pub.test")}},
			[3]string{TrustSigned, TrustNone, TrustNone}},
		{"entry bad", &TrustVerdicts{CheckedAt: at, Entries: map[string]SignatureVerdict{"entries[0]": {Signer: "did:web:pub.test", Problems: bad}}},
			[3]string{TrustNone, TrustNone, TrustNone}},
		// An unsupported algorithm proves nothing either way.
		{"entry unsupported", &TrustVerdicts{CheckedAt: at, Entries: map[string]SignatureVerdict{"entries[0]": {Signer: "did:web:pub.test",
			Problems: []Problem{{Code: CodeUnsupportedSigAlg}}}}}, [3]string{TrustDomain, TrustNone, TrustNone}},
		// A catalog signature by the publisher's domain covers its
		// subdomains' entries, never another publisher's.
		{"catalog signed", &TrustVerdicts{CheckedAt: at, Catalog: &SignatureVerdict{Signer: "did:web:pub.test"}},
			[3]string{TrustSigned, TrustSigned, TrustNone}},
		{"catalog bad", &TrustVerdicts{CheckedAt: at, Catalog: &SignatureVerdict{Signer: "did:web:pub.test", Problems: bad},
			Entries: map[string]SignatureVerdict{"entries[0]": ok("did:web:pub.test")}}, [3]string{TrustNone, TrustNone, TrustNone}},
		{"catalog by a tenant path", &TrustVerdicts{CheckedAt: at, Catalog: &SignatureVerdict{Signer: "did:web:pub.test:users:x"}},
			[3]string{TrustDomain, TrustNone, TrustNone}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := Catalog(body, Options{Origin: "https://pub.test/.well-known/ai-catalog.json", Trust: tc.trust})
			if len(res.Records) != 3 {
				t.Fatalf("%d records, want 3: %+v", len(res.Records), res.Problems)
			}
			for i, rec := range res.Records {
				if rec.Trust == nil || rec.Trust.Level != tc.want[i] {
					t.Errorf("%s: trust %+v, want %s", rec.Identifier, rec.Trust, tc.want[i])
					continue
				}
				if rec.Trust.Level == TrustSigned && len(rec.Trust.Problems) > 0 {
					t.Errorf("%s: level %s with problems %v", rec.Identifier, rec.Trust.Level, rec.Trust.Problems)
				}
				if tc.trust != nil && !rec.Trust.CheckedAt.Equal(at) {
					t.Errorf("%s: checkedAt %v", rec.Identifier, rec.Trust.CheckedAt)
				}
			}
		})
	}
}

func TestFailTrust(t *testing.T) {
	rec := Record{Trust: &Trust{Level: TrustSigned, Signer: "did:web:pub.test"}}
	FailTrust(&rec, Problem{Code: CodeDigestMismatch})
	if rec.Trust.Level != TrustNone || len(rec.Trust.Problems) != 1 || rec.Trust.Signer != "did:web:pub.test" {
		t.Fatalf("trust after a digest mismatch = %+v", rec.Trust)
	}
	var bare Record
	FailTrust(&bare, Problem{Code: CodeWeakDigest})
	if bare.Trust == nil || bare.Trust.Level != TrustNone {
		t.Fatalf("trust = %+v", bare.Trust)
	}
}
