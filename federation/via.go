package federation

import "strings"

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
