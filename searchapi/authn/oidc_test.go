package authn_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/agentfinder/agentfinder/searchapi/authn"
)

// issuer is an OpenID Connect provider on loopback that counts the fetches
// of its key set and can rotate its signing key.
type issuer struct {
	url     string
	fetches atomic.Int64

	mu   sync.Mutex
	keys []jose.JSONWebKey // published
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	iss := &issuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": iss.url, "jwks_uri": iss.url + "/jwks", "authorization_endpoint": iss.url + "/auth",
			"id_token_signing_alg_values_supported": []string{"ES256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		iss.fetches.Add(1)
		iss.mu.Lock()
		defer iss.mu.Unlock()
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: iss.keys})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.url = srv.URL
	return iss
}

// signer makes a key with kid; publish puts it in the key set.
func (iss *issuer) signer(t *testing.T, kid string, publish bool) jose.Signer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	if publish {
		iss.mu.Lock()
		iss.keys = append(iss.keys, jose.JSONWebKey{Key: &key.PublicKey, KeyID: kid, Algorithm: "ES256", Use: "sig"})
		iss.mu.Unlock()
	}
	return s
}

func (iss *issuer) token(t *testing.T, s jose.Signer) string {
	t.Helper()
	claims := map[string]any{"iss": iss.url, "sub": "alice", "aud": "agentfinder", "exp": time.Now().Add(time.Hour).Unix(), "groups": []string{"hr"}}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestOIDCKeySetFetchedOncePerInterval: tokens naming key ids the issuer
// never published make the key set be fetched at most once per refresh
// interval (they are refused meanwhile), however many arrive; a key the
// issuer adds is accepted once the interval has passed.
func TestOIDCKeySetFetchedOncePerInterval(t *testing.T) {
	iss := newIssuer(t)
	good := iss.signer(t, "k1", true)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	o, err := authn.NewOIDC(t.Context(), authn.OIDCConfig{Issuer: iss.url, Audience: "agentfinder", KeyRefresh: time.Minute, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := o.Verify(t.Context(), iss.token(t, good)); err != nil || id.Name != "alice" {
		t.Fatalf("a token of a published key: %v %+v", err, id)
	}
	if n := iss.fetches.Load(); n != 1 {
		t.Fatalf("key set fetched %d times for the first token, want 1", n)
	}

	var wg sync.WaitGroup
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok := iss.token(t, iss.signer(t, fmt.Sprintf("made-up-%d", i), false))
			if _, err := o.Verify(t.Context(), tok); !errors.Is(err, authn.ErrUnknown) {
				t.Errorf("token of an unknown kid: %v, want ErrUnknown", err)
			}
		}()
	}
	wg.Wait()
	if n := iss.fetches.Load(); n != 1 {
		t.Errorf("60 tokens of unknown kids within the interval fetched the key set %d more times, want 0", n-1)
	}

	// Rotation: the issuer publishes k2. Within the interval its tokens are
	// refused; after it, one fetch picks the key up.
	rotated := iss.signer(t, "k2", true)
	if _, err := o.Verify(t.Context(), iss.token(t, rotated)); err == nil {
		t.Error("a new key accepted before the refresh interval passed")
	}
	advance(time.Minute)
	for range 5 {
		if _, err := o.Verify(t.Context(), iss.token(t, rotated)); err != nil {
			t.Fatalf("the rotated key after the interval: %v", err)
		}
	}
	if n := iss.fetches.Load(); n != 2 {
		t.Errorf("key set fetched %d times in all, want 2", n)
	}
	if _, err := o.Verify(t.Context(), iss.token(t, good)); err != nil {
		t.Errorf("the first key after the rotation: %v", err)
	}
}
