package crawler

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

// Owner names of catalog SVCB records (Agent Finder and the ARD spellings)
// and of a registry's search endpoint.
var (
	catalogSVCBPrefixes = []string{"_catalog._agents.", "_entries._agents.", "_index._agents."}
	searchSVCBPrefix    = "_search._agents."
)

// capKey is the DNS-AID "cap" SvcParam (key65400): a URI to the capability
// document, used instead of target and port when present.
const capKey dns.SVCBKey = 65400

// maxAliasHops bounds following of SVCB alias mode records.
const maxAliasHops = 4

// discoverDNS returns catalog URLs published in SVCB records (or a TXT
// "url=" fallback) for domain.
func (s *session) discoverDNS(ctx context.Context, domain string) []string {
	var out []string
	for _, p := range catalogSVCBPrefixes {
		out = append(out, s.svcbURLs(ctx, p+domain, domain, "/.well-known/ai-catalog.json")...)
	}
	return out
}

// discoverSearch returns registry search endpoints from _search._agents.
func (s *session) discoverSearch(ctx context.Context, domain string) []string {
	return s.svcbURLs(ctx, searchSVCBPrefix+domain, domain, "/")
}

// svcbURLs resolves the SVCB records at name. Service mode gives
// https://<target>[:port]<defPath> or the cap URI; target "." is the seed
// domain for the record at name and, as RFC 9460 says, the owner name for
// a record reached through an alias;
// alias mode is followed up to maxAliasHops; without SVCB answers a TXT
// "url=..." record at the same name is the fallback.
func (s *session) svcbURLs(ctx context.Context, name, seed, defPath string) []string {
	var out []string
	cur, self := name, seed
	for hop := 0; hop <= maxAliasHops; hop++ {
		rrs, err := s.res.query(ctx, cur, dns.TypeSVCB)
		if err != nil {
			s.log.Debug("svcb lookup", "name", cur, "err", err)
			break
		}
		var alias string
		for _, rr := range rrs {
			sv, ok := rr.(*dns.SVCB)
			if !ok {
				continue
			}
			if sv.Priority == 0 {
				if sv.Target != "." && alias == "" {
					alias = strings.TrimSuffix(sv.Target, ".")
				}
				continue
			}
			if u := svcbServiceURL(sv, self, defPath); u != "" {
				out = append(out, u)
			}
		}
		if len(out) > 0 || alias == "" {
			break
		}
		cur, self = alias, alias
	}
	if len(out) > 0 {
		return out
	}
	rrs, err := s.res.query(ctx, name, dns.TypeTXT)
	if err != nil {
		return nil
	}
	for _, rr := range rrs {
		txt, ok := rr.(*dns.TXT)
		if !ok {
			continue
		}
		v := strings.Join(txt.Txt, "")
		for _, f := range strings.Fields(v) {
			if k, val, ok := strings.Cut(f, "="); ok && strings.EqualFold(k, "url") {
				if u, err := parseHTTPURL(val); err == nil {
					out = append(out, u.String())
				}
			}
		}
	}
	return out
}

// svcbServiceURL turns one service-mode record into a URL.
func svcbServiceURL(sv *dns.SVCB, seed, defPath string) string {
	port := ""
	for _, kv := range sv.Value {
		switch v := kv.(type) {
		case *dns.SVCBLocal:
			if v.KeyCode == capKey {
				if u, err := parseHTTPURL(string(v.Data)); err == nil {
					return u.String()
				}
			}
		case *dns.SVCBPort:
			port = strconv.Itoa(int(v.Port))
		}
	}
	host := strings.TrimSuffix(sv.Target, ".")
	if host == "" {
		host = seed
	}
	if port != "" && port != "443" {
		host = net.JoinHostPort(host, port)
	}
	u := url.URL{Scheme: "https", Host: host, Path: defPath}
	return u.String()
}
