package probe

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
)

// maxMetadataBytes bounds an OAuth protected resource metadata document.
const maxMetadataBytes = 64 << 10

// challenge reads the first challenge of a WWW-Authenticate header: its
// scheme and parameters (RFC 9110 §11.6.1; RFC 6750 for Bearer, RFC 9728
// for resource_metadata).
func challenge(h string) (scheme string, params map[string]string) {
	h = strings.TrimSpace(h)
	scheme, rest, _ := strings.Cut(h, " ")
	params = map[string]string{}
	for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimSpace(rest) {
		name, after, ok := strings.Cut(rest, "=")
		if !ok {
			break
		}
		name = strings.ToLower(strings.TrimSpace(name))
		if strings.Contains(name, " ") {
			break // the next challenge begins
		}
		after = strings.TrimSpace(after)
		var val string
		if strings.HasPrefix(after, `"`) {
			val, rest = quoted(after[1:])
		} else {
			val, rest, _ = strings.Cut(after, ",")
			val = strings.TrimSpace(val)
		}
		params[name] = val
		rest = strings.TrimPrefix(strings.TrimSpace(rest), ",")
	}
	return scheme, params
}

// quoted reads a quoted-string whose opening quote is consumed, returning
// its value and what follows the closing quote.
func quoted(s string) (string, string) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return b.String(), s[i+1:]
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), ""
}

// protectedResource is the part of an OAuth protected resource metadata
// document the index keeps.
type protectedResource struct {
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// authChallenge builds what a gated endpoint at target asks for from its
// answer's WWW-Authenticate header and its protected resource metadata:
// the document the header points to, else the one at the well-known
// location for target (RFC 9728 §3.1). No credential is ever sent.
func authChallenge(ctx context.Context, v visitor, target string, h http.Header) *normalize.AuthChallenge {
	scheme, params := challenge(h.Get("WWW-Authenticate"))
	ac := &normalize.AuthChallenge{Scheme: scheme, Realm: params["realm"]}
	if sc := strings.Fields(params["scope"]); len(sc) > 0 {
		ac.Scopes = sc
	}
	for _, u := range metadataURLs(target, params["resource_metadata"]) {
		md, ok := fetchMetadata(ctx, v, u)
		if !ok {
			continue
		}
		ac.ResourceMetadata = u
		ac.AuthorizationServers = capStrings(md.AuthorizationServers, 8)
		if len(ac.Scopes) == 0 {
			ac.Scopes = capStrings(md.ScopesSupported, 32)
		}
		break
	}
	if ac.Scheme == "" && ac.ResourceMetadata == "" {
		return nil
	}
	return ac
}

// metadataURLs lists where the protected resource metadata of target may
// be: the URL its challenge named, else the well-known URL with target's
// path, then the one at its origin's root.
func metadataURLs(target, named string) []string {
	if named != "" {
		if httpURL(named) {
			return []string{named}
		}
		return nil
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil
	}
	base := u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource"
	if p := strings.TrimSuffix(u.Path, "/"); p != "" {
		return []string{base + p, base}
	}
	return []string{base}
}

// fetchMetadata reads one protected resource metadata document.
func fetchMetadata(ctx context.Context, v visitor, u string) (protectedResource, bool) {
	h := http.Header{}
	h.Set("Accept", "application/json")
	res, err := v.Exchange(ctx, http.MethodGet, u, h, nil, maxMetadataBytes)
	if err != nil || res.Status != http.StatusOK {
		return protectedResource{}, false
	}
	var md protectedResource
	if err := jsonUnmarshal(res.Body, &md); err != nil {
		return protectedResource{}, false
	}
	return md, true
}

func capStrings(s []string, n int) []string {
	if len(s) > n {
		s = s[:n]
	}
	return s
}
