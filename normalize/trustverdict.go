package normalize

import (
	"strings"
	"time"
)

// SignatureVerdict is the crawler's check of one signature: who signed and
// what failed. No problems means the signature is valid, by the signer the
// rules require.
type SignatureVerdict struct {
	// Signer is the DID the signature names (its kid or signer member).
	Signer string `json:"signer,omitempty"`
	// Problems name what failed (Code* signature and digest codes).
	Problems []Problem `json:"problems,omitempty"`
}

// Valid reports whether the signature was checked and holds.
func (v SignatureVerdict) Valid() bool { return v.Signer != "" && len(v.Problems) == 0 }

// TrustVerdicts is what the crawler found when it checked one catalog's
// signatures and inline digests, handed to Catalog as data (Options.Trust):
// normalize never fetches a key itself.
type TrustVerdicts struct {
	// CheckedAt is when the checks ran (the crawl's clock).
	CheckedAt time.Time `json:"checkedAt"`
	// Catalog is the verdict on the whole-catalog signature; nil when the
	// catalog carries none.
	Catalog *SignatureVerdict `json:"catalog,omitempty"`
	// Entries holds the verdict on each entry that carries a signed trust
	// manifest or a digest, by the entry's JSON path ("entries[3]").
	Entries map[string]SignatureVerdict `json:"entries,omitempty"`
	// Until is when the verdicts may next change for the same document: a
	// signature expires or becomes valid, or a signer's DID document is
	// due to be fetched again. Zero means they do not depend on time.
	Until time.Time `json:"until,omitzero"`
}

// Problems returns every problem of the verdicts, the catalog's first, for
// a report.
func (t *TrustVerdicts) Problems() []Problem {
	if t == nil {
		return nil
	}
	var out []Problem
	if t.Catalog != nil {
		out = append(out, t.Catalog.Problems...)
	}
	for _, v := range t.Entries {
		out = append(out, v.Problems...)
	}
	return out
}

// trustFor is the one rule that turns verdicts into a record's Trust:
//   - a problem (the entry's own signature or digests, or a failed
//     whole-catalog signature) gives TrustNone with the problems, except a
//     signature in a profile or algorithm we do not support
//     (CodeUnsupportedSigAlg): it proves nothing either way, so the record
//     is judged as if unsigned (never TrustSigned), the problem shown;
//   - else a valid signature by the publisher (the entry's own, or the
//     whole catalog's when its signer is did:web of the publisher's domain
//     or a parent of it) gives TrustSigned;
//   - else a catalog fetched from the publisher's domain gives TrustDomain;
//   - else TrustNone.
//
// v nil means the signatures were not checked: only the domain counts.
func trustFor(rec *Record, path string, v *TrustVerdicts) *Trust {
	t := &Trust{Level: TrustNone}
	if rec.PublisherVerified {
		t.Level = TrustDomain
	}
	if v == nil {
		return t
	}
	t.CheckedAt = v.CheckedAt
	signer := ""
	if ev, ok := v.Entries[path]; ok {
		t.Signer = ev.Signer
		t.Problems = append(t.Problems, ev.Problems...)
		if ev.Valid() {
			signer = ev.Signer
		}
	}
	if c := v.Catalog; c != nil {
		switch {
		case len(c.Problems) > 0:
			t.Problems = append(t.Problems, c.Problems...)
			if t.Signer == "" {
				t.Signer = c.Signer
			}
		case signer == "" && didCovers(c.Signer, rec.Publisher):
			signer, t.Signer = c.Signer, c.Signer
		}
	}
	switch {
	case demotes(t.Problems):
		t.Level = TrustNone
	case len(t.Problems) > 0:
		// only unsupported signatures: the domain level stands
	case signer != "":
		t.Level = TrustSigned
	}
	return t
}

// demotes reports whether problems hold one that drops a record to
// TrustNone: anything but an unsupported signature profile or algorithm.
func demotes(problems []Problem) bool {
	for _, p := range problems {
		if p.Code != CodeUnsupportedSigAlg {
			return true
		}
	}
	return false
}

// didCovers reports whether a did:web signer speaks for publisher: the DID's
// host is the publisher's domain or a parent domain of it.
func didCovers(did, publisher string) bool {
	host, ok := strings.CutPrefix(did, "did:web:")
	if !ok || publisher == "" {
		return false
	}
	if i := strings.IndexByte(host, ':'); i >= 0 {
		return false // a DID with a path names one tenant, not the domain
	}
	return isSubdomain(strings.ToLower(publisher), strings.ToLower(host))
}

// FailTrust records a trust problem found after normalization (an artifact or
// attestation whose bytes do not match its digest): the record keeps every
// earlier problem and drops to TrustNone, whatever it was.
func FailTrust(rec *Record, p Problem) {
	if rec.Trust == nil {
		rec.Trust = &Trust{}
	}
	rec.Trust.Problems = append(rec.Trust.Problems, p)
	rec.Trust.Level = TrustNone
}
