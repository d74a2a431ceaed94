package authn

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/agentfinder/agentfinder/normalize"
)

// OIDC verifies OpenID Connect bearer tokens (JWTs) with go-oidc: the
// signature against the issuer's published keys (fetched and cached by
// keySet, at most once per OIDCConfig.KeyRefresh), the issuer, the audience
// and the expiry. The caller's groups are
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
	// KeyRefresh is the least time between two fetches of the issuer's key
	// set (a token signed by a key not in the set waits for the next one,
	// refused meanwhile). 0 means DefaultKeyRefresh.
	KeyRefresh time.Duration
	// Client fetches the key set; nil means a client of its own.
	Client *http.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time
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
	var doc struct {
		JWKSURL    string   `json:"jwks_uri"`
		Algorithms []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := p.Claims(&doc); err != nil || doc.JWKSURL == "" {
		return nil, fmt.Errorf("oidc issuer %s: discovery document has no jwks_uri", cfg.Issuer)
	}
	claim := cfg.GroupsClaim
	if claim == "" {
		claim = "groups"
	}
	keys := &keySet{url: doc.JWKSURL, client: cfg.Client, refresh: cfg.KeyRefresh, now: cfg.Now}
	if keys.client == nil {
		keys.client = &http.Client{Timeout: 10 * time.Second}
	}
	if keys.refresh <= 0 {
		keys.refresh = DefaultKeyRefresh
	}
	if keys.now == nil {
		keys.now = time.Now
	}
	v := oidc.NewVerifier(cfg.Issuer, keys, &oidc.Config{ClientID: cfg.Audience, SupportedSigningAlgs: signingAlgs(doc.Algorithms)})
	return &OIDC{verifier: v, groupsClaim: claim}, nil
}

// signingAlgs are the issuer's advertised algorithms go-oidc verifies (nil:
// go-oidc's default, RS256).
func signingAlgs(advertised []string) []string {
	var out []string
	for _, a := range advertised {
		switch a {
		case oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512, oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA:
			out = append(out, a)
		}
	}
	return out
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
