package sigcheck

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// TestVerifyES256MatchesGoJose holds verifyES256 to go-jose's detached
// verification: both accept what go-jose signs, and both refuse a changed
// payload, header or signature and another key.
func TestVerifyES256MatchesGoJose(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", "did:web:a.example#k"))
	if err != nil {
		t.Fatal(err)
	}
	for _, payload := range []string{`{}`, `{"a":1}`, strings.Repeat(`{"x":"`+strings.Repeat("é", 700)+`"}`, 1), `{"ab":"c"}`} {
		obj, err := signer.Sign([]byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		jws, err := obj.DetachedCompactSerialize()
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(jws, ".")
		rs, _ := base64.RawURLEncoding.DecodeString(parts[2])
		flipped := append([]byte(nil), rs...)
		flipped[5] ^= 1
		cases := []struct {
			name    string
			key     *ecdsa.PublicKey
			header  string
			rs      []byte
			payload string
		}{
			{"as signed", &key.PublicKey, parts[0], rs, payload},
			{"payload changed", &key.PublicKey, parts[0], rs, payload + " "},
			{"header changed", &key.PublicKey, parts[0] + "A", rs, payload},
			{"signature changed", &key.PublicKey, parts[0], flipped, payload},
			{"other key", &other.PublicKey, parts[0], rs, payload},
		}
		for _, c := range cases {
			got := verifyES256(c.key, c.header, c.rs, []byte(c.payload))
			ref, err := jose.ParseDetached(c.header+".."+base64.RawURLEncoding.EncodeToString(c.rs), []byte(c.payload), []jose.SignatureAlgorithm{jose.ES256})
			want := err == nil
			if want {
				_, err = ref.Verify(c.key)
				want = err == nil
			}
			if got != want || (c.name == "as signed") != got {
				t.Errorf("%s (payload %.20q): verifyES256 %v, go-jose %v", c.name, c.payload, got, want)
			}
		}
	}
}
