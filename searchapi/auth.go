package searchapi

import (
	"context"
	"fmt"
	"github.com/agentfinder/agentfinder/federation"
	"net/http"
	"strings"

	"github.com/agentfinder/agentfinder/searchapi/authn"
	"github.com/agentfinder/agentfinder/searchapi/door"
)

// AuthMode says who may call the read API (search, list, get, explore, the
// bindings, MCP and the web pages).
type AuthMode string

// Authentication modes.
const (
	// AuthOff ignores credentials: every caller is anonymous and sees the
	// public records only.
	AuthOff AuthMode = "off"
	// AuthOptional serves public records to anonymous callers and, to a
	// caller with a valid credential, also those of its groups. A bad
	// credential is refused.
	AuthOptional AuthMode = "optional"
	// AuthRequired refuses callers without a valid credential.
	AuthRequired AuthMode = "required"
)

// ParseAuthMode reads --auth.
func ParseAuthMode(s string) (AuthMode, error) {
	switch m := AuthMode(strings.ToLower(strings.TrimSpace(s))); m {
	case "", AuthOff:
		return AuthOff, nil
	case AuthOptional, AuthRequired:
		return m, nil
	}
	return "", fmt.Errorf("auth must be off, optional or required, not %q", s)
}

// Verifier checks one bearer credential; authn.Keys and authn.OIDC satisfy
// it. An error means the credential is not valid here.
type Verifier interface {
	Verify(ctx context.Context, token string) (authn.Identity, error)
}

// authRealm names this API in WWW-Authenticate.
const authRealm = "agentfinder"

var (
	errAuthMissing = &door.APIError{Status: http.StatusUnauthorized, Code: door.CodeUnauthorized, Message: "this registry requires a bearer credential (Authorization: Bearer <key or token>)"}
	errAuthInvalid = &door.APIError{Status: http.StatusUnauthorized, Code: door.CodeUnauthorized, Message: "the bearer credential is not valid"}
)

// authenticate checks r's Authorization header under the configured mode
// and returns r carrying the caller (accessOf), or a 401 error with
// WWW-Authenticate set on w.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, error) {
	if s.cfg.Auth == AuthOff || s.cfg.Auth == "" {
		return r, nil
	}
	token, present := bearer(r.Header.Get("Authorization"))
	if !present {
		if s.cfg.Auth == AuthRequired {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+authRealm+`"`)
			return r, errAuthMissing
		}
		return r, nil
	}
	for _, v := range s.cfg.Verifiers {
		id, err := v.Verify(r.Context(), token)
		if err == nil {
			ctx := door.WithCaller(r.Context(), door.Caller{Name: id.Name, Groups: id.Groups})
			// Verified: federation may forward it to upstreams configured for it.
			ctx = federation.WithCredential(ctx, r.Header.Get("Authorization"))
			return r.WithContext(ctx), nil
		}
	}
	s.log.Info("bearer credential refused", "correlationId", door.CorrelationID(r.Context()), "path", r.URL.Path)
	w.Header().Set("WWW-Authenticate", `Bearer realm="`+authRealm+`", error="invalid_token"`)
	return r, errAuthInvalid
}

// bearer returns the credential of an Authorization header; present is
// false when the header is absent. A header of another scheme, or an empty
// credential, is present with an empty token (which no verifier accepts).
func bearer(h string) (token string, present bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return "", false
	}
	scheme, rest, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	return strings.TrimSpace(rest), true
}

// authInfo says how this registry's read API authenticates, for the self
// catalog: {"mode": "off"|"optional"|"required", "scheme": "bearer"}.
func (s *Server) authInfo() map[string]string {
	info := map[string]string{"authentication": string(s.cfg.Auth)}
	if s.cfg.Auth != AuthOff {
		info["authenticationScheme"] = "bearer"
	}
	return info
}

// authNote is what the about page says about authentication.
func (s *Server) authNote() string {
	switch s.cfg.Auth {
	case AuthRequired:
		return "required: every request needs Authorization: Bearer <API key or OIDC token>"
	case AuthOptional:
		return "optional: anonymous callers see public entries; Authorization: Bearer <API key or OIDC token> adds your groups' entries"
	}
	return "off: every caller sees the public entries"
}
