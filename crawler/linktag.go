package crawler

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// catalogRels are the link relations that name a catalog.
var catalogRels = []string{"ai-catalog", "ard"}

func hasCatalogRel(rel string) bool {
	for _, tok := range strings.Fields(strings.ToLower(rel)) {
		for _, r := range catalogRels {
			if tok == r {
				return true
			}
		}
	}
	return false
}

// discoverLinkTag fetches the home page of domain and returns the catalogs
// named by <link rel="ai-catalog"|"ard" href> (rel is a token list; hrefs
// resolve against the final page URL) and by HTTP Link headers with those
// relations.
func (s *session) discoverLinkTag(ctx context.Context, domain string) []string {
	res, err := s.get(ctx, "https://"+domain+"/", kindHome, nil)
	if err != nil {
		s.c.log.Debug("home page", "domain", domain, "err", err)
		return nil
	}
	if res.Status < 200 || res.Status >= 300 {
		s.c.log.Debug("home page", "domain", domain, "status", res.Status)
		return nil
	}
	base, err := url.Parse(res.URL)
	if err != nil {
		return nil
	}
	out := linkHeaderCatalogs(res.Header, base)
	return append(out, linkTagCatalogs(res.Body, base)...)
}

// linkTagCatalogs scans an HTML document for catalog <link> elements.
func linkTagCatalogs(body []byte, base *url.URL) []string {
	var out []string
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "link" || !hasAttr {
				continue
			}
			var rel, href string
			for {
				k, v, more := z.TagAttr()
				switch string(k) {
				case "rel":
					rel = string(v)
				case "href":
					href = string(v)
				}
				if !more {
					break
				}
			}
			if href != "" && hasCatalogRel(rel) {
				if u := resolve(base, href); u != "" {
					out = append(out, u)
				}
			}
		}
	}
}

// linkHeaderCatalogs reads RFC 8288 Link headers with a catalog relation.
func linkHeaderCatalogs(h http.Header, base *url.URL) []string {
	var out []string
	for _, v := range h.Values("Link") {
		for v != "" {
			v = strings.TrimLeft(v, " ,")
			if !strings.HasPrefix(v, "<") {
				break
			}
			end := strings.IndexByte(v, '>')
			if end < 0 {
				break
			}
			target := v[1:end]
			v = v[end+1:]
			params := v
			if i := strings.Index(v, ","); i >= 0 {
				// The next link starts at the first comma outside quotes.
				inQ := false
				for j, c := range v {
					if c == '"' {
						inQ = !inQ
					}
					if c == ',' && !inQ {
						i = j
						break
					}
				}
				params, v = v[:i], v[i:]
			} else {
				v = ""
			}
			for _, p := range strings.Split(params, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "rel") && hasCatalogRel(strings.Trim(strings.TrimSpace(val), `"`)) {
					if u := resolve(base, target); u != "" {
						out = append(out, u)
					}
				}
			}
		}
	}
	return out
}

func resolve(base *url.URL, ref string) string {
	r, err := url.Parse(strings.TrimSpace(ref))
	if err != nil {
		return ""
	}
	u := base.ResolveReference(r)
	if u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	u.Fragment = ""
	return u.String()
}
