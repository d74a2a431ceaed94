package normalize

import "strings"

// Identifier is a parsed Agent Finder identifier (§4.2.1):
// urn:ai:<publisher>[:<namespace>...]:<name>.
type Identifier struct {
	NID       string   // "ai" or "air", lower-case, as published otherwise
	Publisher string   // the publisher domain, lower-case, without a trailing dot
	Segments  []string // namespace segments followed by the name, as published
}

// ParseIdentifier parses id as a domain-anchored URN. The "urn" prefix and the
// NID are case-insensitive; both urn:ai: and urn:air: (ARD v0.9) are accepted.
// The publisher must be a syntactically valid fully qualified domain name and
// at least one segment (the name) must follow it. The reason says what is
// wrong when ok is false.
func ParseIdentifier(id string) (ident Identifier, reason string, ok bool) {
	if id == "" {
		return ident, "identifier is empty", false
	}
	if strings.TrimSpace(id) != id {
		return ident, "identifier has surrounding whitespace", false
	}
	parts := strings.Split(id, ":")
	if len(parts) < 2 || !strings.EqualFold(parts[0], "urn") {
		return ident, "identifier is not a URN (want urn:ai:<publisher>:<name>)", false
	}
	nid := strings.ToLower(parts[1])
	if nid != "ai" && nid != "air" {
		return ident, "URN namespace " + quoteShort(parts[1]) + " is not ai (want urn:ai:<publisher>:<name>)", false
	}
	if len(parts) < 4 {
		return ident, "identifier needs a publisher domain and a name (urn:ai:<publisher>:<name>)", false
	}
	pub := strings.TrimSuffix(parts[2], ".")
	if !validDomain(pub) {
		return ident, "publisher " + quoteShort(parts[2]) + " is not a valid domain name", false
	}
	for i, s := range parts[3:] {
		if s == "" {
			if i == len(parts)-4 {
				return ident, "identifier has an empty name", false
			}
			return ident, "identifier has an empty namespace segment", false
		}
		if !validNSS(s) {
			return ident, "identifier segment " + quoteShort(s) + " has characters a URN does not allow", false
		}
	}
	return Identifier{NID: nid, Publisher: strings.ToLower(pub), Segments: parts[3:]}, "", true
}

// CanonicalIdentifier returns the form of id used as a key: urn:ai: with the
// publisher lower-cased, so urn:air:Acme.com:x and urn:ai:acme.com:x name one
// agent. An identifier that does not parse is returned unchanged.
func CanonicalIdentifier(id string) string {
	ident, _, ok := ParseIdentifier(id)
	if !ok {
		return id
	}
	return "urn:ai:" + ident.Publisher + ":" + strings.Join(ident.Segments, ":")
}

// SameIdentifier reports whether a and b are spellings of one identifier:
// the same after CanonicalIdentifier (the NID ai or air, the case of "urn",
// the NID and the publisher domain, a trailing dot on the domain). The index
// keeps one document for all of them (DocID), so lookups must accept each.
func SameIdentifier(a, b string) bool {
	return a == b || CanonicalIdentifier(a) == CanonicalIdentifier(b)
}

// validDomain reports whether s is a syntactically valid fully qualified
// domain name: at least two labels of letters, digits and inner hyphens, each
// at most 63 octets, 253 in all, and a top-level label that is not numeric.
func validDomain(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	tld := labels[len(labels)-1]
	for i := 0; i < len(tld); i++ {
		if tld[i] < '0' || tld[i] > '9' {
			return true
		}
	}
	return false // all-numeric: an IPv4 address, not a domain
}

// validNSS reports whether s uses only characters RFC 8141 allows in a
// namespace-specific string (pchar and "/"; percent-encodings well-formed).
func validNSS(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-._~!$&'()*+,;=@/", c) >= 0:
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// quoteShort quotes s for a message, cut to a readable length.
func quoteShort(s string) string {
	const max = 80
	r := []rune(s)
	if len(r) > max {
		s = string(r[:max]) + "…"
	}
	return `"` + s + `"`
}
