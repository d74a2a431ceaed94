package normalize

import (
	"encoding/json"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// complianceFamilies are the attestation families a qualified type also
// counts for: SOC2-Type2 is soc2-type2 and soc2, HIPAA-Audit is hipaa-audit
// and hipaa.
var complianceFamilies = map[string]bool{
	"soc1": true, "soc2": true, "soc3": true, "hipaa": true, "gdpr": true,
	"ccpa": true, "fedramp": true, "pci": true, "pci-dss": true, "iso27001": true,
	"iso27017": true, "iso27018": true, "iso27701": true, "iso42001": true,
	"iso9001": true, "hitrust": true, "nist": true, "cmmc": true, "csa": true,
	"fips": true, "dora": true, "nis2": true, "tisax": true, "irap": true,
	"c5": true, "ferpa": true, "coppa": true, "glba": true, "sox": true,
}

// ComplianceValues returns the compliance filter values for attestation
// types, each in its one spelling (ComplianceValue), plus the family of a
// qualified type of a known family ("SOC2-Type2" gives "soc2-type2" and
// "soc2"; "ISO 27001", "ISO-27001" and "ISO27001" all give "iso27001";
// "ISO-27001-2022" gives "iso27001-2022" and "iso27001"). The attestation
// types themselves stay as published in the record's trustManifest.
func ComplianceValues(types []string) []string {
	var out []string
	for _, t := range types {
		v := ComplianceValue(t)
		if v == "" {
			continue
		}
		out = appendUnique(out, v)
		parts := strings.Split(v, "-")
		for i := len(parts) - 1; i >= 1; i-- {
			if prefix := strings.Join(parts[:i], "-"); complianceFamilies[prefix] {
				out = appendUnique(out, prefix)
				break
			}
		}
	}
	return out
}

// ComplianceValue returns the one spelling a compliance value is stored,
// counted and filtered by: lower-case, spaces and underscores as hyphens,
// and a known family written as the family list spells it, alone or
// leading a qualified value ("ISO-27001" and "ISO27001" are "iso27001",
// "PCI DSS" is "pci-dss"; an unknown value is only lower-cased and
// hyphenated). One attestation thus counts once in the compliance facet,
// whatever its spelling.
func ComplianceValue(t string) string {
	v := strings.ToLower(strings.TrimSpace(t))
	v = strings.Join(strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '_' || r == '\t' }), "-")
	parts := strings.Split(v, "-")
	for i := len(parts); i >= 1; i-- {
		head := strings.Join(parts[:i], "-")
		switch {
		case complianceFamilies[head]:
			return v
		case complianceFamilies[strings.ReplaceAll(head, "-", "")]:
			return strings.Join(append([]string{strings.ReplaceAll(head, "-", "")}, parts[i:]...), "-")
		}
	}
	return v
}

// trustManifest is the part of a trustManifest normalize reads.
type trustManifest struct {
	Identity     json.RawMessage `json:"identity"`
	Attestations json.RawMessage `json:"attestations"`
}

// attestationTypes returns the type of each attestation object in raw (a
// JSON array, at most maxItems of them), skipping anything malformed.
func attestationTypes(raw json.RawMessage) []string {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	if len(list) > maxItems {
		list = list[:maxItems]
	}
	var out []string
	for _, a := range list {
		var att struct {
			Type json.RawMessage `json:"type"`
		}
		if json.Unmarshal(a, &att) != nil {
			continue
		}
		var s string
		if json.Unmarshal(att.Type, &s) == nil && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// IdentityDomain returns the DNS trust domain inside a trustManifest identity:
// the host of did:web:<host>[:path], spiffe://<trust-domain>/..., an http(s)
// URL, or a bare domain name. ok is false when the identity names no domain
// (did:key, urn:..., ...).
func IdentityDomain(identity string) (domain string, ok bool) {
	id := strings.TrimSpace(identity)
	lower := strings.ToLower(id)
	switch {
	case strings.HasPrefix(lower, "did:web:"):
		host := id[len("did:web:"):]
		if i := strings.IndexByte(host, ':'); i >= 0 {
			host = host[:i]
		}
		if h, err := url.PathUnescape(host); err == nil {
			host = h
		}
		if i := strings.IndexByte(host, ':'); i >= 0 { // %3A port
			host = host[:i]
		}
		domain = host
	case strings.HasPrefix(lower, "spiffe://"), strings.HasPrefix(lower, "https://"), strings.HasPrefix(lower, "http://"):
		u, err := url.Parse(id)
		if err != nil {
			return "", false
		}
		domain = u.Hostname()
	default:
		domain = id
	}
	domain = strings.ToLower(strings.TrimSuffix(domain, "."))
	if !validDomain(domain) {
		return "", false
	}
	return domain, true
}

// domainsAlign reports whether two domains share an authority root: equal,
// one a subdomain of the other, or the same registrable domain (eTLD+1).
func domainsAlign(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if a == b || isSubdomain(a, b) || isSubdomain(b, a) {
		return true
	}
	ra, errA := publicsuffix.EffectiveTLDPlusOne(a)
	rb, errB := publicsuffix.EffectiveTLDPlusOne(b)
	return errA == nil && errB == nil && ra == rb
}

// isSubdomain reports whether host is domain or a subdomain of it.
func isSubdomain(host, domain string) bool {
	return host == domain || strings.HasSuffix(host, "."+domain)
}

// originHost returns the lower-case host name of an origin URL, or "".
func originHost(origin string) string {
	u, err := url.Parse(strings.TrimSpace(origin))
	if err != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
}
