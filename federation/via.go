package federation

import (
	"net/url"
	"strings"
)

// ParseVia returns the registries named in Via header values (RFC 9110
// §7.6.3): each comma-separated element is "protocol received-by [comment]";
// the received-by part is returned, in order. A bare name is accepted too.
func ParseVia(values []string) []string {
	var out []string
	for _, v := range values {
		for _, el := range strings.Split(v, ",") {
			if n := viaName(el); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

// viaName extracts received-by from one Via element.
func viaName(el string) string {
	if i := strings.IndexByte(el, '('); i >= 0 {
		el = el[:i]
	}
	f := strings.Fields(el)
	switch len(f) {
	case 0:
		return ""
	case 1:
		return f[0]
	}
	return f[1]
}

// FormatVia renders registry names as one Via header value, "1.1 name" each.
func FormatVia(names []string) string {
	els := make([]string, len(names))
	for i, n := range names {
		els[i] = "1.1 " + n
	}
	return strings.Join(els, ", ")
}

// EndpointKey identifies a registry independently of scheme, a trailing
// /search or slash: "host:port/path", lower-case. It also accepts bare
// names, as Via carries them.
func EndpointKey(s string) string {
	s = strings.TrimSpace(s)
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return strings.ToLower(strings.TrimSuffix(s, "/"))
	}
	p := strings.TrimSuffix(u.Path, "/")
	p = strings.TrimSuffix(p, "/search")
	return strings.ToLower(u.Host) + p
}

// InChain reports whether via (names from ParseVia) names one of names (a
// registry's Via name or URL): the request already passed through that
// registry, which then answers from its own index and never fans out again.
func InChain(via []string, names ...string) bool {
	for _, v := range via {
		k := EndpointKey(v)
		for _, n := range names {
			if k == EndpointKey(n) {
				return true
			}
		}
	}
	return false
}
