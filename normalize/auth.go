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

// a2aSchemeKinds maps the member that holds an A2A 1.0 security scheme
// (the proto's oneof, in its JSON spelling) to the method it declares.
var a2aSchemeKinds = map[string]string{
	"apiKeySecurityScheme":        "apiKey",
	"httpAuthSecurityScheme":      "http",
	"oauth2SecurityScheme":        "oauth2",
	"openIdConnectSecurityScheme": "openIdConnect",
	"mtlsSecurityScheme":          "mutualTLS",
}

// a2aAuth reads an A2A card's securitySchemes, in the 0.2/0.3 shape (an
// OpenAPI-like object with a type: apiKey, http and its scheme, oauth2,
// openIdConnect, mutualTLS) or the 1.0 one (one member naming the kind:
// apiKeySecurityScheme, httpAuthSecurityScheme, ...), and its requirements
// (1.0 securityRequirements, 0.3 security): an empty requirement means a
// caller may come without credentials ("none").
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
			m.problem("securitySchemes."+n, "security scheme is not an object; ignored")
			continue
		}
		m.addAuth(a2aSchemeMethod(sc))
	}
	for _, k := range []string{"securityRequirements", "security"} {
		for i, req := range m.list(card, k) {
			r, ok := req.(map[string]any)
			if !ok {
				m.problem(k+"["+itoa(i)+"]", "security requirement is not an object; ignored")
				continue
			}
			if inner, ok := r["schemes"].(map[string]any); ok {
				r = inner // 1.0: {"schemes": {name: {"list": [scopes]}}}
			}
			if len(r) == 0 {
				m.addAuth("none")
			}
			for n := range r {
				if _, declared := schemes[n]; !declared {
					m.problem(k+"["+itoa(i)+"]", "security requirement names %s, which securitySchemes does not declare", quoteShort(n))
				}
			}
		}
	}
}

// a2aSchemeMethod names the method one security scheme declares, in either
// card shape.
func a2aSchemeMethod(sc map[string]any) string {
	for k, kind := range a2aSchemeKinds {
		inner, ok := sc[k].(map[string]any)
		if !ok {
			continue
		}
		if kind == "http" {
			return firstOf(getStr(inner, "scheme"), kind)
		}
		return kind
	}
	t := getStr(sc, "type")
	if strings.EqualFold(t, "http") {
		t = firstOf(getStr(sc, "scheme"), t)
	}
	return t
}
