package door

import (
	"net/http"
	"strconv"
	"strings"
)

// PrefersHTML reports whether the request's Accept header ranks text/html
// above application/json, as browsers' do. Without an Accept header, or
// with */* alone (curl), JSON wins: API clients keep their answers.
func PrefersHTML(r *http.Request) bool {
	accept := r.Header.Values("Accept")
	if len(accept) == 0 {
		return false
	}
	return acceptQuality(accept, "text", "html") > acceptQuality(accept, "application", "json")
}

// acceptQuality is the q value the Accept header gives type/sub: that of
// the most specific range matching it (type/sub, then type/*, then */*), 0
// when none does.
func acceptQuality(accept []string, typ, sub string) float64 {
	best, q := -1, 0.0
	for _, h := range accept {
		for part := range strings.SplitSeq(h, ",") {
			mt, params, _ := strings.Cut(part, ";")
			t, st, _ := strings.Cut(strings.ToLower(strings.TrimSpace(mt)), "/")
			spec := -1
			switch {
			case t == typ && st == sub:
				spec = 2
			case t == typ && st == "*":
				spec = 1
			case t == "*" && st == "*":
				spec = 0
			}
			if spec <= best {
				continue
			}
			best, q = spec, 1
			for p := range strings.SplitSeq(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					}
				}
			}
		}
	}
	return q
}
