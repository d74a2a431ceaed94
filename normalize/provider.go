package normalize

import (
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// ProviderKey names who runs a record's agent, for telling one provider's
// records from another's, from its publisher and its endpoints' URLs (its
// bindings', in order): the registrable domain (the public suffix list's
// eTLD+1: "hub.lifie.ai" and "api.lifie.ai" give "lifie.ai", while
// "a.onrender.com" and "b.onrender.com" stay apart) of its first endpoint
// with a host name, else its publisher (the identifier's domain; an MCP
// registry server's namespace, RegistryPublisher). A directory that lists
// many businesses from one endpoint host is one provider, however many
// publishers' names its cards carry; an endpoint on a loopback or IP
// address names no one. The provider organisation an artifact states
// (Record.Provider) is not used: it is free text, and a record naming a
// rival's organisation would be counted as the rival's. "" when neither
// gives one.
func ProviderKey(publisher string, endpoints []string) string {
	for _, u := range endpoints {
		if d := endpointDomain(u); d != "" {
			return d
		}
	}
	return strings.ToLower(publisher)
}

// endpointDomain is the registrable domain of an endpoint URL's host, ""
// for a URL without a host name or with an address or a single label.
func endpointDomain(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "" || !strings.Contains(host, ".") {
		return ""
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return ""
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return ""
	}
	return d
}
