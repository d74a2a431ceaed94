package sigcheck

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// maxDIDDocument bounds a DID document; real ones are a few kilobytes.
const maxDIDDocument = 256 << 10

// errNoKey says the DID document lists no usable key under the kid.
var errNoKey = errors.New("no P-256 key with that id under assertionMethod")

// DIDURL maps a did:web DID to the https URL of its DID document:
// did:web:host gives https://host/.well-known/did.json and
// did:web:host:a:b gives https://host/a/b/did.json. A port is written
// %3A in the host part.
func DIDURL(did string) (string, error) {
	rest, ok := strings.CutPrefix(did, "did:web:")
	if !ok || rest == "" {
		return "", fmt.Errorf("%q is not a did:web DID", did)
	}
	parts := strings.Split(rest, ":")
	host, err := url.PathUnescape(parts[0])
	if err != nil || host == "" || strings.ContainsAny(host, "/?#@ ") {
		return "", fmt.Errorf("did:web %q: bad host", did)
	}
	path := "/.well-known/did.json"
	if len(parts) > 1 {
		segs := make([]string, 0, len(parts)-1)
		for _, p := range parts[1:] {
			s, err := url.PathUnescape(p)
			if err != nil || s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/?#") {
				return "", fmt.Errorf("did:web %q: bad path segment %q", did, p)
			}
			segs = append(segs, url.PathEscape(s))
		}
		path = "/" + strings.Join(segs, "/") + "/did.json"
	}
	return "https://" + strings.ToLower(host) + path, nil
}

// didKeys are the ES256 keys a DID document authorizes for assertions, by
// absolute verification method id ("did:web:host#key-1").
type didKeys map[string]*ecdsa.PublicKey

// parseDIDDocument reads the keys of a DID document for did: verification
// methods referenced (or embedded) under assertionMethod whose controller is
// did and whose publicKeyJwk is a public EC P-256 key.
func parseDIDDocument(did string, body []byte) (didKeys, error) {
	if len(body) > maxDIDDocument {
		return nil, fmt.Errorf("DID document of %s is larger than %d bytes", did, maxDIDDocument)
	}
	var doc struct {
		ID                 string            `json:"id"`
		VerificationMethod []json.RawMessage `json:"verificationMethod"`
		AssertionMethod    []json.RawMessage `json:"assertionMethod"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("DID document of %s: %w", did, err)
	}
	if doc.ID != did {
		return nil, fmt.Errorf("DID document id %q is not %s", doc.ID, did)
	}
	abs := func(id string) string {
		if strings.HasPrefix(id, "#") {
			return did + id
		}
		return id
	}
	type method struct {
		ID         string          `json:"id"`
		Controller string          `json:"controller"`
		JWK        json.RawMessage `json:"publicKeyJwk"`
	}
	methods := map[string]method{}
	for _, raw := range doc.VerificationMethod {
		var m method
		if json.Unmarshal(raw, &m) == nil && m.ID != "" {
			methods[abs(m.ID)] = m
		}
	}
	keys := didKeys{}
	for _, raw := range doc.AssertionMethod {
		var m method
		var ref string
		if json.Unmarshal(raw, &ref) == nil {
			var ok bool
			if m, ok = methods[abs(ref)]; !ok {
				continue
			}
		} else if json.Unmarshal(raw, &m) != nil || m.ID == "" {
			continue
		}
		if m.Controller != "" && m.Controller != did {
			continue
		}
		if k, err := ecKey(m.JWK); err == nil {
			keys[abs(m.ID)] = k
		}
	}
	return keys, nil
}

// ecKey reads a public P-256 JWK; private material is refused.
func ecKey(raw json.RawMessage) (*ecdsa.PublicKey, error) {
	var probe struct {
		Kty string `json:"kty"`
		Crv string `json:"crv"`
		D   string `json:"d"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, err
	}
	if probe.Kty != "EC" || probe.Crv != "P-256" || probe.D != "" {
		return nil, errNoKey
	}
	var k jose.JSONWebKey
	if err := k.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	pub, ok := k.Key.(*ecdsa.PublicKey)
	if !ok {
		return nil, errNoKey
	}
	return pub, nil
}

// keys returns the assertion keys of did, from the cache or fetched through
// f; concurrent resolutions of one DID share one fetch.
func (v *Verifier) keys(ctx context.Context, f Fetcher, did string) (didKeys, time.Time, error) {
	now := v.cfg.Clock()
	if e, ok := v.cache.Get(did); ok && now.Before(e.until) {
		return e.keys, e.until, e.err
	}
	ch := v.flight.DoChan(did, func() (any, error) {
		u, err := DIDURL(did)
		if err == nil {
			var body []byte
			if body, err = f.Fetch(ctx, u); err != nil && (ctx.Err() != nil || errors.Is(err, ErrNotFetched)) {
				return nil, err // cancelled or offline: nothing learnt about the DID
			}
			if err == nil {
				var k didKeys
				if k, err = parseDIDDocument(did, body); err == nil {
					v.cache.Add(did, cached{keys: k, until: now.Add(v.cfg.CacheTTL)})
					return k, nil
				}
			}
		}
		v.cache.Add(did, cached{err: err, until: now.Add(v.cfg.FailureTTL)})
		return nil, err
	})
	select {
	case r := <-ch:
		// The cache holds the resolution now (unless it was cancelled);
		// its time is when the keys are due to be fetched again.
		until := now.Add(v.cfg.FailureTTL)
		if e, ok := v.cache.Peek(did); ok {
			until = e.until
		}
		if r.Err != nil {
			return nil, until, r.Err
		}
		return r.Val.(didKeys), until, nil
	case <-ctx.Done():
		return nil, time.Time{}, ctx.Err()
	}
}
