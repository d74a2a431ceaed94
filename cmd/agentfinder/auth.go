package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/agentfinder/agentfinder/searchapi"
	"github.com/agentfinder/agentfinder/searchapi/authn"
)

// authFlags configure who may call the read API.
type authFlags struct {
	mode            string
	apiKeys         string
	oidcIssuer      string
	oidcAudience    string
	oidcGroupsClaim string
}

func (f *authFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mode, "auth", "off", "who may use the read API (search, list, get, explore, bindings, MCP, web pages): off (everyone, public records only), optional (public records to anyone, a valid bearer credential also sees its groups' records) or required (a valid credential only)")
	fs.StringVar(&f.apiKeys, "api-keys", "", "JSON `file` of API keys, stored as hashes: {\"keys\": [{\"name\": \"hr-bot\", \"sha256\": \"<hex SHA-256 of the key>\", \"groups\": [\"hr\"]}]} (re-read on SIGHUP)")
	fs.StringVar(&f.oidcIssuer, "oidc-issuer", "", "OpenID Connect issuer `URL` whose tokens are accepted as bearer credentials")
	fs.StringVar(&f.oidcAudience, "oidc-audience", "", "the `audience` an OIDC token must be issued for (required with --oidc-issuer)")
	fs.StringVar(&f.oidcGroupsClaim, "oidc-groups-claim", "groups", "the OIDC token `claim` holding the caller's groups")
}

// oidcDiscoveryTimeout bounds the fetch of the issuer's discovery document
// at start-up.
const oidcDiscoveryTimeout = 15 * time.Second

// verifiers builds the mode and the credential verifiers the flags name;
// keys is the API keys file (nil without one), reloaded on SIGHUP.
func (f *authFlags) verifiers(ctx context.Context) (mode searchapi.AuthMode, keys *authn.Keys, vs []searchapi.Verifier, err error) {
	if mode, err = searchapi.ParseAuthMode(f.mode); err != nil {
		return "", nil, nil, fmt.Errorf("--auth: %w", err)
	}
	if f.apiKeys != "" {
		if keys, err = authn.LoadKeys(f.apiKeys); err != nil {
			return "", nil, nil, fmt.Errorf("--api-keys: %w", err)
		}
		vs = append(vs, keys)
	}
	if f.oidcIssuer != "" {
		ctx, cancel := context.WithTimeout(ctx, oidcDiscoveryTimeout)
		defer cancel()
		o, err := authn.NewOIDC(ctx, authn.OIDCConfig{Issuer: f.oidcIssuer, Audience: f.oidcAudience, GroupsClaim: f.oidcGroupsClaim})
		if err != nil {
			return "", nil, nil, fmt.Errorf("--oidc-issuer: %w", err)
		}
		vs = append(vs, o)
	}
	if mode != searchapi.AuthOff && len(vs) == 0 {
		return "", nil, nil, fmt.Errorf("--auth %s needs --api-keys or --oidc-issuer", mode)
	}
	return mode, keys, vs, nil
}
