package searchapi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/agentfinder/agentfinder/searchapi/authn"
)

// testIssuer is a small OpenID Connect provider on loopback: discovery
// document and JWKS, and a signer for the tokens the tests need.
type testIssuer struct {
	url    string
	signer jose.Signer
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	iss := &testIssuer{signer: signer}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": iss.url, "jwks_uri": iss.url + "/jwks", "authorization_endpoint": iss.url + "/auth",
			"id_token_signing_alg_values_supported": []string{"ES256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.url = srv.URL
	return iss
}

// token signs claims for subject "alice" with the given issuer, audience,
// groups and expiry.
func (iss *testIssuer) token(t *testing.T, issuer, aud string, groups []string, exp time.Time) string {
	t.Helper()
	claims := map[string]any{"iss": issuer, "sub": "alice", "aud": aud, "exp": exp.Unix(), "iat": time.Now().Add(-time.Minute).Unix(), "groups": groups}
	tok, err := jwt.Signed(iss.signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestOIDCTokens(t *testing.T) {
	iss := newTestIssuer(t)
	o, err := authn.NewOIDC(t.Context(), authn.OIDCConfig{Issuer: iss.url, Audience: "agentfinder"})
	if err != nil {
		t.Fatal(err)
	}
	f, _, _ := newAuthFixture(t, AuthRequired, o)
	later := time.Now().Add(time.Hour)
	good := iss.token(t, iss.url, "agentfinder", []string{"Finance"}, later)
	if got := publishersSeen(t, f, good); !slices.Equal(got, []string{"fin.example", "public.example"}) {
		t.Fatalf("finance token sees %v", got)
	}
	for name, tok := range map[string]string{
		"expired":        iss.token(t, iss.url, "agentfinder", []string{"finance"}, time.Now().Add(-time.Minute)),
		"wrong audience": iss.token(t, iss.url, "someone-else", []string{"finance"}, later),
		"wrong issuer":   iss.token(t, "https://evil.example", "agentfinder", []string{"finance"}, later),
		"tampered":       good[:len(good)-4] + "AAAA",
	} {
		if r := f.do("GET", "/agents", nil, bearerHdr(tok), nil); r.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s token: %d, want 401", name, r.StatusCode)
		}
	}
}
