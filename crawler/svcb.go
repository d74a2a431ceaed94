package crawler

import (
	"context"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

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
// "url=" fallback) for domain, and registry search endpoints from
// _search._agents. All names are queried at once.
func (s *session) discoverDNS(ctx context.Context, domain string) (catalogs, registries []string) {
	names := append(slices.Clone(catalogSVCBPrefixes), searchSVCBPrefix)
	found := make([][]string, len(names))
	var wg sync.WaitGroup
	for i, p := range names {
		wg.Go(func() {
			defPath := "/.well-known/ai-catalog.json"
			if p == searchSVCBPrefix {
				defPath = "/"
			}
			found[i] = s.svcbURLs(ctx, p+domain, domain, defPath)
		})
	}
	wg.Wait()
	for _, f := range found[:len(found)-1] {
		catalogs = append(catalogs, f...)
	}
	return catalogs, found[len(found)-1]
}

// svcbURLs resolves the SVCB records at name. Service mode gives
// https://<target>[:port]<defPath> or the cap URI; target "." is the seed
// domain for the record at name and, as RFC 9460 says, the owner name for
// a record reached through an alias;
// alias mode is followed up to maxAliasHops; without SVCB answers a TXT
// "url=..." record at the same name is the fallback.
func (s *session) svcbURLs(ctx context.Context, name, seed, defPath string) []string {
	// The TXT fallback is asked at the same time as the SVCB record.
	var (
		txtRRs []dns.RR
		txtErr error
		wg     sync.WaitGroup
	)
	wg.Go(func() { txtRRs, txtErr = s.c.res.query(ctx, name, dns.TypeTXT) })
	defer wg.Wait()
	var out []string
	cur, self := name, seed
	for hop := 0; hop <= maxAliasHops; hop++ {
		rrs, err := s.c.res.query(ctx, cur, dns.TypeSVCB)
		if err != nil {
			s.c.log.Debug("svcb lookup", "name", cur, "err", err)
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
	wg.Wait()
	if txtErr != nil {
		return nil
	}
	for _, rr := range txtRRs {
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
