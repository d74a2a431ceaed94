package normalize

import (
	"sort"
	"strings"
)

// AuthMethod reduces a published authentication method to the one spelling
// records keep and filters compare: "API Key", "apiKey" and "api_key" are
// "api-key"; "Bearer" and "http bearer" are "bearer"; "OAuth 2.0" is
// "oauth2"; "openIdConnect" is "oidc"; "mutualTLS" is "mtls"; "none" is
// "none". Other methods are kept lower-cased.
func AuthMethod(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	key := strings.NewReplacer(" ", "", "_", "", "-", "", ".", "").Replace(s)
	switch key {
	case "":
		return ""
	case "apikey", "key":
		return "api-key"
	case "bearer", "httpbearer", "bearertoken", "token", "jwt":
		return "bearer"
	case "basic", "httpbasic":
		return "basic"
	case "oauth", "oauth2", "oauth20":
		return "oauth2"
	case "openidconnect", "oidc":
		return "oidc"
	case "mtls", "mutualtls", "clientcertificate":
		return "mtls"
	case "none", "anonymous", "public":
		return "none"
	}
	return s
}

// addAuth adds authentication methods to the record, as AuthMethod spells them.
func (m *mapper) addAuth(methods ...string) {
	for _, a := range methods {
		if a = AuthMethod(a); a != "" {
			m.rec.Auth = appendUnique(m.rec.Auth, a)
		}
	}
}

// a2aAuth reads an A2A card's securitySchemes: apiKey, http (its scheme:
// bearer, basic), oauth2, openIdConnect, mutualTLS.
func (m *mapper) a2aAuth(card map[string]any) {
	schemes := getObj(card, "securitySchemes")
	names := make([]string, 0, len(schemes))
	for n := range schemes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sc, ok := schemes[n].(map[string]any)
		if !ok {
			continue
		}
		t := getStr(sc, "type")
		if strings.EqualFold(t, "http") {
			t = firstOf(getStr(sc, "scheme"), t)
		}
		m.addAuth(t)
	}
}
