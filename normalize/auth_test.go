package normalize

import "testing"

func TestAuthMethod(t *testing.T) {
	for in, want := range map[string]string{
		"API Key": "api-key", "apiKey": "api-key", "api_key": "api-key", "Bearer": "bearer", "http bearer": "bearer",
		"OAuth 2.0": "oauth2", "oauth2": "oauth2", "openIdConnect": "oidc", "mutualTLS": "mtls", "mTLS": "mtls",
		"None": "none", "basic": "basic", "  ": "", "Kerberos": "kerberos",
	} {
		if got := AuthMethod(in); got != want {
			t.Errorf("AuthMethod(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestA2AAuth(t *testing.T) {
	rec := catalogRecord(t, `{"identifier":"urn:ai:acme.com:x","displayName":"X","type":"application/a2a-agent-card+json","url":"https://acme.com/x.json"}`)
	card := `{"name":"X","url":"https://acme.com/a2a","securitySchemes":{"key":{"type":"apiKey","in":"header","name":"X-Key"},
		"jwt":{"type":"http","scheme":"Bearer"},"oauth":{"type":"oauth2","flows":{}},"bad":3}}`
	probs := Enrich(&rec, "application/json", []byte(card))
	eq(t, "problems", problemKeys(probs), []string{"warning invalid_artifact securitySchemes.bad"})
	eq(t, "auth", rec.Auth, []string{"bearer", "api-key", "oauth2"})

	// 0.3 security requirements: an empty one lets callers come without
	// credentials; one naming an undeclared scheme is reported.
	rec = catalogRecord(t, `{"identifier":"urn:ai:acme.com:y","displayName":"Y","type":"application/a2a-agent-card+json","url":"https://acme.com/y.json"}`)
	card = `{"name":"Y","url":"https://acme.com/a2a","securitySchemes":{"key":{"type":"apiKey"}},"security":[{"key":[]},{},{"ghost":[]}]}`
	probs = Enrich(&rec, "application/json", []byte(card))
	eq(t, "problems", problemKeys(probs), []string{"warning invalid_artifact security[2]"})
	eq(t, "auth", rec.Auth, []string{"api-key", "none"})
}
