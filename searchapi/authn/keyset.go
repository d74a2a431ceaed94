package authn

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
)

// Bounds of the issuer's key set fetches.
const (
	// DefaultKeyRefresh is the least time between two fetches of an
	// issuer's key set (OIDCConfig.KeyRefresh).
	DefaultKeyRefresh = time.Minute
	// keySetMaxAge is how long a fetched key set is used before the next
	// token is checked against a fresh one (a key the issuer withdrew stops
	// working by then).
	keySetMaxAge   = time.Hour
	maxKeySetBytes = 1 << 20
)

// errNoKeySet is a verification refused because no key set could be
// fetched yet.
var errNoKeySet = errors.New("the issuer's key set is not available")

// keySet is the issuer's JSON Web Key Set, fetched from its jwks_uri at
// most once per refresh interval whatever the tokens ask for. go-oidc's
// remote key set fetches again for every token naming a key it does not
// know, so anyone could make this server hammer the issuer with made-up
// key ids; here a token whose signature no cached key verifies triggers a
// fetch only once the interval has passed since the last one, and is
// refused (401) meanwhile. It implements oidc.KeySet.
type keySet struct {
	url     string
	client  *http.Client
	refresh time.Duration
	now     func() time.Time

	mu      sync.Mutex // held through a fetch: one at a time
	keys    []crypto.PublicKey
	fetched time.Time // when the last fetch started (success or not)
	loaded  time.Time // when keys were last fetched successfully
}

var _ oidc.KeySet = (*keySet)(nil)

// VerifySignature implements oidc.KeySet: the token's payload when a key
// of the set verifies its signature.
func (k *keySet) VerifySignature(ctx context.Context, token string) ([]byte, error) {
	keys := k.current(ctx, false)
	if payload, err := (&oidc.StaticKeySet{PublicKeys: keys}).VerifySignature(ctx, token); err == nil {
		return payload, nil
	}
	// A key the issuer added since (rotation): look once more, when the
	// interval allows.
	keys = k.current(ctx, true)
	if len(keys) == 0 {
		return nil, errNoKeySet
	}
	return (&oidc.StaticKeySet{PublicKeys: keys}).VerifySignature(ctx, token)
}

// current returns the keys, fetching them first when there are none yet,
// when they are older than keySetMaxAge, or when miss asks for a fresh set;
// never twice within the refresh interval.
func (k *keySet) current(ctx context.Context, miss bool) []crypto.PublicKey {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	stale := k.keys == nil || now.Sub(k.loaded) >= keySetMaxAge || miss
	if stale && (k.fetched.IsZero() || now.Sub(k.fetched) >= k.refresh) {
		k.fetched = now
		if keys, err := k.fetch(ctx); err == nil {
			k.keys, k.loaded = keys, now
		}
	}
	return k.keys
}

// fetch gets and parses the key set (only signing keys).
func (k *keySet) fetch(ctx context.Context) ([]crypto.PublicKey, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch key set: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch key set: %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxKeySetBytes))
	if err != nil {
		return nil, fmt.Errorf("read key set: %w", err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("parse key set: %w", err)
	}
	var keys []crypto.PublicKey
	for _, jwk := range set.Keys {
		if jwk.Use != "" && jwk.Use != "sig" {
			continue
		}
		switch pub := jwk.Public().Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
			keys = append(keys, pub)
		}
	}
	return keys, nil
}
