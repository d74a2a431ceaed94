package sigcheck

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/normalize/rawjson"
)

// Profile is the one signer profile accepted.
const Profile = "did-web-v1"

// keySourceHeaders would let a signature choose its own key; the key comes
// from the signer's DID document only.
var keySourceHeaders = []string{"jku", "jwk", "x5u", "x5c"}

// clockSkew is how far in the future an issuedAt may be.
const clockSkew = 5 * time.Minute

// signature is one signature to verify, in either shape.
type signature struct {
	jws       string
	object    bool   // the {signer, profile, issuedAt, expiresAt, jws} shape
	signer    string // declared signer (object shape); else the kid's DID
	profile   string
	issuedAt  string
	expiresAt string
	path      string
	payload   func() ([]byte, error) // the canonical signed bytes
}

// readSignature reads a signature member: a detached JWS string or a
// signature object.
func readSignature(raw json.RawMessage, path string) (signature, *normalize.Problem) {
	s := signature{path: path}
	if json.Unmarshal(raw, &s.jws) == nil {
		return s, nil
	}
	var o struct {
		Signer    string `json:"signer"`
		Profile   string `json:"profile"`
		IssuedAt  string `json:"issuedAt"`
		ExpiresAt string `json:"expiresAt"`
		JWS       string `json:"jws"`
	}
	if err := json.Unmarshal(raw, &o); err != nil || o.JWS == "" || o.Signer == "" {
		return s, problem(path, normalize.CodeBadSignature, "signature is neither a detached JWS string nor an object with signer and jws")
	}
	s.object, s.jws, s.signer, s.profile, s.issuedAt, s.expiresAt = true, o.JWS, o.Signer, o.Profile, o.IssuedAt, o.ExpiresAt
	return s, nil
}

// verify checks one signature: its form and header, its signer against
// want (what names the rule for messages), its validity period, then the
// signer's key and the signature over the canonical payload. The cheap
// checks come first; a failed one skips the key fetch.
func (c *check) verify(ctx context.Context, s signature, want, what string) normalize.SignatureVerdict {
	v := normalize.SignatureVerdict{Signer: s.signer}
	fail := func(code, format string, args ...any) normalize.SignatureVerdict {
		v.Problems = append(v.Problems, *problem(s.path, code, format, args...))
		return v
	}
	parts := strings.Split(s.jws, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] != "" || parts[2] == "" {
		return fail(normalize.CodeBadSignature, "not a detached JWS (header..signature)")
	}
	var hdr map[string]json.RawMessage
	if b, err := base64.RawURLEncoding.DecodeString(parts[0]); err != nil || json.Unmarshal(b, &hdr) != nil {
		return fail(normalize.CodeBadSignature, "the JWS header is not base64url JSON")
	}
	for _, h := range keySourceHeaders {
		if _, ok := hdr[h]; ok {
			fail(normalize.CodeForbiddenHeader, "the JWS header carries %q: the key must come from the signer's DID document", h)
		}
	}
	if alg := str(hdr["alg"]); alg != "ES256" {
		fail(normalize.CodeUnsupportedSigAlg, "JWS alg %q: profile %s takes ES256 only", alg, Profile)
	}
	if s.object && s.profile != Profile {
		fail(normalize.CodeUnsupportedSigAlg, "signature profile %q: only %s is supported", s.profile, Profile)
	}
	if _, ok := hdr["crit"]; ok {
		fail(normalize.CodeUnsupportedSigAlg, "the JWS header names critical extensions")
	}
	if _, ok := hdr["b64"]; ok {
		fail(normalize.CodeBadSignature, "the JWS header carries b64: the payload is always encoded")
	}
	kid := str(hdr["kid"])
	did, frag, _ := strings.Cut(kid, "#")
	if v.Signer == "" {
		v.Signer = did
	}
	if kid == "" || did != v.Signer || frag == "" || strings.ContainsAny(frag, "/?") {
		fail(normalize.CodeUnresolvableKey, "JWS kid %q is not a key of signer %q (did#fragment)", kid, v.Signer)
	}
	if v.Signer != want {
		fail(normalize.CodeWrongSigner, "signed by %q, but the signer must be %s (%q)", v.Signer, what, want)
	}
	c.period(s, hdr, fail)
	if len(v.Problems) > 0 {
		return v
	}
	payload, err := s.payload()
	if err != nil {
		return fail(normalize.CodeBadSignature, "the signed JSON cannot be canonicalized: %v", err)
	}
	keys, until, err := c.v.keys(ctx, c.f, v.Signer)
	c.changesAt(until)
	if err != nil && (errors.Is(err, ErrNotFetched) || ctx.Err() != nil) {
		c.unsettled = true
	}
	if errors.Is(err, ErrNotFetched) {
		return fail(normalize.CodeUnresolvableKey, "not checked: the DID document of %s was not fetched (check the catalog by its URL to resolve it)", v.Signer)
	}
	if err != nil {
		return fail(normalize.CodeUnresolvableKey, "resolve %s: %v", v.Signer, err)
	}
	key := keys[kid]
	if key == nil {
		return fail(normalize.CodeUnresolvableKey, "the DID document of %s lists no P-256 key %q under assertionMethod", v.Signer, kid)
	}
	rs, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(rs) != 2*es256Size {
		return fail(normalize.CodeBadSignature, "the JWS signature is not %d bytes of base64url (ES256 R and S)", 2*es256Size)
	}
	if !verifyES256(key, parts[0], rs, payload) {
		return fail(normalize.CodeBadSignature, "the signature does not verify over the signed content with key %s", kid)
	}
	return v
}

// es256Size is the size of R and of S in an ES256 signature (RFC 7518 3.4).
const es256Size = 32

// verifyES256 checks the ES256 signature rs (R and S, big-endian) of a
// detached JWS with the protected header header over payload: the signing
// input (RFC 7515 5.2) is the header as sent, a dot and the payload in
// base64url, hashed as it is encoded. The payload is a whole catalog, so
// no encoded copy of it is made (go-jose's ParseDetached makes two, and
// the checks it adds on the header are made above).
func verifyES256(key *ecdsa.PublicKey, header string, rs, payload []byte) bool {
	h := sha256.New()
	_, _ = io.WriteString(h, header)
	_, _ = h.Write([]byte{'.'})
	enc := base64.NewEncoder(base64.RawURLEncoding, h)
	_, _ = enc.Write(payload)
	_ = enc.Close()
	r := new(big.Int).SetBytes(rs[:es256Size])
	s := new(big.Int).SetBytes(rs[es256Size:])
	return ecdsa.Verify(key, h.Sum(nil), r, s)
}

// period checks issuedAt and expiresAt (or the JWS's own exp and nbf)
// against the crawl's clock.
func (c *check) period(s signature, hdr map[string]json.RawMessage, fail func(code, format string, args ...any) normalize.SignatureVerdict) {
	if s.expiresAt != "" {
		t, ok := normalize.ParseTime(s.expiresAt)
		c.changesAt(t)
		if !ok {
			fail(normalize.CodeSignatureExpired, "expiresAt %q is not a timestamp", s.expiresAt)
		} else if !c.now.Before(t) {
			fail(normalize.CodeSignatureExpired, "the signature expired at %s", t.UTC().Format(time.RFC3339))
		}
	}
	if s.issuedAt != "" {
		t, ok := normalize.ParseTime(s.issuedAt)
		c.changesAt(t.Add(-clockSkew))
		if ok && t.After(c.now.Add(clockSkew)) {
			fail(normalize.CodeSignatureExpired, "the signature is not valid before %s", t.UTC().Format(time.RFC3339))
		}
	}
	var exp, nbf float64
	if json.Unmarshal(hdr["exp"], &exp) == nil && exp > 0 {
		c.changesAt(time.Unix(int64(exp), 0))
		if !c.now.Before(time.Unix(int64(exp), 0)) {
			fail(normalize.CodeSignatureExpired, "the JWS expired (exp %d)", int64(exp))
		}
	}
	if json.Unmarshal(hdr["nbf"], &nbf) == nil && nbf > 0 && time.Unix(int64(nbf), 0).After(c.now.Add(clockSkew)) {
		c.changesAt(time.Unix(int64(nbf), 0).Add(-clockSkew))
		fail(normalize.CodeSignatureExpired, "the JWS is not valid before nbf %d", int64(nbf))
	}
}

// SignedPayload returns the bytes a detached JWS over doc signs: the JCS
// (RFC 8785) form of doc without its signature. For a signature object
// (object true) the object stays, without its jws member, and any
// additionalSignatures member goes. A document with duplicate member names
// or numbers JCS cannot represent is refused.
func SignedPayload(doc []byte, object bool) ([]byte, error) { return signedPayload(doc, object) }

func signedPayload(doc []byte, object bool) ([]byte, error) {
	// One canonicalization (it refuses duplicate names), then the members
	// the signature does not cover are cut out of the canonical bytes:
	// removing a member leaves canonical JSON canonical.
	canon, err := canonicalize(doc)
	if err != nil {
		return nil, err
	}
	return payloadOf(canon, object)
}

// payloadOf cuts what a signature does not cover out of canon, the
// canonical form of the signed document, in place (canon is its own copy).
func payloadOf(canon []byte, object bool) ([]byte, error) {
	if len(canon) == 0 || canon[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	if !object {
		return withoutMember(canon, "signature"), nil
	}
	canon = withoutMember(canon, "additionalSignatures")
	_, vs, ve, ok := member(canon, "signature")
	if !ok || canon[vs] != '{' {
		return nil, errors.New("signature is not an object")
	}
	sig := withoutMember(canon[vs:ve], "jws")
	return slices.Delete(canon, vs+len(sig), ve), nil
}

// member finds the top-level member name of a canonical (compact) JSON
// object b: where the member starts (its key), and where its value starts
// and ends.
func member(b []byte, name string) (start, vstart, vend int, ok bool) {
	i := 1
	for i < len(b) && b[i] == '"' {
		start = i
		end := rawjson.SkipString(b, i)
		var key string
		if !rawjson.DecodeString(b[i:end], &key) || end >= len(b) || b[end] != ':' {
			return 0, 0, 0, false
		}
		vstart = end + 1
		vend = rawjson.SkipValue(b, vstart)
		if key == name {
			return start, vstart, vend, true
		}
		i = vend
		if i < len(b) && b[i] == ',' {
			i++
		}
	}
	return 0, 0, 0, false
}

// withoutMember cuts the top-level member name out of the canonical object
// b, in place, and returns what is left (b itself when it has none).
func withoutMember(b []byte, name string) []byte {
	start, _, end, ok := member(b, name)
	switch {
	case !ok:
		return b
	case end < len(b) && b[end] == ',':
		end++ // the comma after it
	case start > 1:
		start-- // the last member: the comma before it
	}
	return slices.Delete(b, start, end)
}
