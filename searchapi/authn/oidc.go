package authn

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/agentfinder/agentfinder/normalize"
)

// OIDC verifies OpenID Connect bearer tokens (JWTs) with go-oidc: the
// signature against the issuer's published keys (fetched and cached by
// go-oidc), the issuer, the audience and the expiry. The caller's groups are
// the token's GroupsClaim (a list of strings or one string).
type OIDC struct {
	verifier    *oidc.IDTokenVerifier
	groupsClaim string
}

// OIDCConfig configures NewOIDC.
type OIDCConfig struct {
	Issuer      string // the issuer URL; its discovery document is fetched
	Audience    string // the token's aud must contain it
	GroupsClaim string // the claim holding groups; "" means "groups"
}

// NewOIDC fetches the issuer's discovery document (ctx bounds that, and
// later key fetches use a client without it) and returns the verifier.
func NewOIDC(ctx context.Context, cfg OIDCConfig) (*OIDC, error) {
	if cfg.Audience == "" {
		return nil, fmt.Errorf("oidc: an audience is required")
	}
	p, err := oidc.NewProvider(ctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oidc issuer %s: %w", cfg.Issuer, err)
	}
	claim := cfg.GroupsClaim
	if claim == "" {
		claim = "groups"
	}
	return &OIDC{verifier: p.Verifier(&oidc.Config{ClientID: cfg.Audience}), groupsClaim: claim}, nil
}

// Verify checks a token and returns its subject and groups, or an error
// wrapping ErrUnknown.
func (o *OIDC) Verify(ctx context.Context, token string) (Identity, error) {
	if strings.Count(token, ".") != 2 {
		return Identity{}, ErrUnknown // not a JWT: do not ask the issuer
	}
	t, err := o.verifier.Verify(ctx, token)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %w", ErrUnknown, err)
	}
	var claims map[string]json.RawMessage
	if err := t.Claims(&claims); err != nil {
		return Identity{}, fmt.Errorf("%w: claims: %w", ErrUnknown, err)
	}
	var groups []string
	if raw, ok := claims[o.groupsClaim]; ok {
		var one string
		if json.Unmarshal(raw, &groups) != nil {
			if json.Unmarshal(raw, &one) != nil {
				return Identity{}, fmt.Errorf("%w: claim %s is neither a string nor a list of strings", ErrUnknown, o.groupsClaim)
			}
			groups = []string{one}
		}
	}
	return Identity{Name: t.Subject, Groups: normalize.Groups(groups)}, nil
}
