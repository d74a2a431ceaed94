package sigcheck

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
)

// maxAttestations bounds the attestation documents fetched per catalog.
const maxAttestations = 16

// CheckDigest compares data with a digest "algorithm:hex". SHA-256 and the
// longer SHA-2 digests are accepted; any other algorithm (md5, sha1, ...)
// is refused as CodeWeakDigest, and bytes that hash otherwise give
// CodeDigestMismatch. It returns nil when the digest holds. path locates
// the digest in the catalog, what names what was hashed for the message.
func CheckDigest(digest string, data []byte, path, what string) *normalize.Problem {
	h, want, p := parseDigest(digest, path)
	if p != nil {
		return p
	}
	h.Write(data)
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return problem(path, normalize.CodeDigestMismatch, "%s does not match its digest %s (its bytes hash to %s)", what, short(digest), short(got))
	}
	return nil
}

// parseDigest returns a fresh hash for digest and its expected lower-case hex.
func parseDigest(digest, path string) (hash.Hash, string, *normalize.Problem) {
	alg, hexv, ok := strings.Cut(strings.TrimSpace(digest), ":")
	alg = strings.ToLower(alg)
	var h hash.Hash
	var size int
	switch alg {
	case "sha256":
		h, size = sha256.New(), sha256.Size
	case "sha384":
		h, size = sha512.New384(), sha512.Size384
	case "sha512":
		h, size = sha512.New(), sha512.Size
	default:
		if !ok {
			return nil, "", problem(path, normalize.CodeWeakDigest, "digest %s is not algorithm:hex", short(digest))
		}
		return nil, "", problem(path, normalize.CodeWeakDigest, "digest algorithm %q is refused: use sha256", alg)
	}
	hexv = strings.ToLower(hexv)
	if b, err := hex.DecodeString(hexv); err != nil || len(b) != size {
		return nil, "", problem(path, normalize.CodeWeakDigest, "digest %s is not a %s value in hex", short(digest), alg)
	}
	return h, hexv, nil
}

// canonicalDigest checks the digest of inline JSON data: computed over its
// JCS (RFC 8785) form.
func canonicalDigest(digest string, data json.RawMessage, path string) *normalize.Problem {
	canon, err := canonicalize(data)
	if err != nil {
		return problem(path, normalize.CodeDigestMismatch, "inline data cannot be canonicalized to check its digest: %v", err)
	}
	return CheckDigest(digest, canon, path, "the inline data")
}

// ArtifactDigest returns the digest a record's artifact bytes must match:
// the entry's own digest member, else the digest of its trust manifest's
// signed subject (either shape); "" when it declares none.
func ArtifactDigest(rec *normalize.Record) string {
	if d := str(rec.Extra["digest"]); d != "" {
		return d
	}
	var tm struct {
		Subject struct {
			Digest string `json:"digest"`
		} `json:"subject"`
	}
	if len(rec.TrustManifest) > 0 && json.Unmarshal(rec.TrustManifest, &tm) == nil && tm.Subject.Digest != "" {
		return tm.Subject.Digest
	}
	var many []struct {
		Subject struct {
			Digest string `json:"digest"`
		} `json:"subject"`
	}
	if raw, ok := rec.Extra["trustManifests"]; ok && json.Unmarshal(raw, &many) == nil {
		for _, m := range many {
			if m.Subject.Digest != "" {
				return m.Subject.Digest
			}
		}
	}
	return ""
}

// Attestation is an attestation document a record's trust manifest points
// to with a digest to check.
type Attestation struct {
	URI    string
	Digest string
	Size   int64  // the declared size in bytes; 0 when not given
	Path   string // JSON path of its digest, for problems
}

// Check compares a fetched attestation document with its declared size and
// digest; nil when both hold.
func (a Attestation) Check(body []byte) *normalize.Problem {
	if a.Size > 0 && int64(len(body)) > a.Size {
		return problem(a.Path, normalize.CodeDigestMismatch, "the attestation at %s is %d bytes, larger than its declared size %d", a.URI, len(body), a.Size)
	}
	return CheckDigest(a.Digest, body, a.Path, "the attestation at "+a.URI)
}

// Attestations returns the attestations of rec that carry a digest (every
// trust manifest, either shape), at most limit of them.
func Attestations(rec *normalize.Record, limit int) []Attestation {
	type att struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int64  `json:"size"`
	}
	type manifest struct {
		Attestations []att `json:"attestations"`
	}
	many := rec.Extra["trustManifests"]
	if !mayHoldDigest(rec.TrustManifest) && !mayHoldDigest(many) {
		return nil // the common case: no trust manifest, or none with a digest
	}
	base := fmt.Sprintf("entries[identifier=%s]", rec.Identifier)
	var out []Attestation
	add := func(m manifest, at string) {
		for i, a := range m.Attestations {
			if _, _, bad := parseDigest(a.Digest, ""); bad != nil {
				continue // refused when the catalog was checked: nothing to fetch for
			}
			if a.URI != "" && len(out) < limit {
				out = append(out, Attestation{URI: a.URI, Digest: a.Digest, Size: a.Size, Path: fmt.Sprintf("%s.attestations[%d].digest", at, i)})
			}
		}
	}
	var one manifest
	if len(rec.TrustManifest) > 0 && json.Unmarshal(rec.TrustManifest, &one) == nil {
		add(one, base+".trustManifest")
	}
	var list []manifest
	if len(many) > 0 && json.Unmarshal(many, &list) == nil {
		for i, m := range list {
			add(m, fmt.Sprintf("%s.trustManifests[%d]", base, i))
		}
	}
	return out
}

// mayHoldDigest reports whether the JSON raw may hold a member that
// encoding/json reads into a field "digest" (names match case-insensitively
// and may be escaped), so that decoding the trust manifests can be skipped
// when none has one: no letters "dige" in any case and no escape means no
// such member.
func mayHoldDigest(raw []byte) bool {
	if bytes.IndexByte(raw, '\\') >= 0 {
		return true
	}
	for i := 0; i+4 <= len(raw); i++ {
		if raw[i]|0x20 == 'd' && raw[i+1]|0x20 == 'i' && raw[i+2]|0x20 == 'g' && raw[i+3]|0x20 == 'e' {
			return true
		}
	}
	return false
}

// problem is a trust problem: a warning, since the entry is kept (with
// trust none), not dropped.
func problem(path, code, format string, args ...any) *normalize.Problem {
	return &normalize.Problem{Path: path, Code: code, Severity: normalize.SeverityWarning, Message: fmt.Sprintf(format, args...)}
}

// short cuts a value for a message.
func short(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
