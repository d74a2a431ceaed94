package crawler

import (
	"fmt"
	"net/netip"
)

// nonPublic lists unicast ranges that are not the public internet. The guard
// refuses them unless Config.AllowPrivate (or an AllowCIDRs entry) opens them.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("10.0.0.0/8"),      // RFC 1918
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback
	netip.MustParsePrefix("169.254.0.0/16"),  // link-local, cloud metadata
	netip.MustParsePrefix("172.16.0.0/12"),   // RFC 1918
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.168.0.0/16"),  // RFC 1918
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("::1/128"),         // loopback
	netip.MustParsePrefix("fc00::/7"),        // unique local
	netip.MustParsePrefix("fe80::/10"),       // link-local
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:10::/28"),    // ORCHID
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
}

// guard is the SSRF check the dialer applies to every resolved address, so
// redirects and DNS rebinding cannot reach what a URL check let through.
type guard struct {
	allowPrivate bool
	allow        []netip.Prefix
}

// check returns an error wrapping ErrSSRFBlocked when ip may not be dialled.
func (g guard) check(ip netip.Addr) error {
	ip = ip.Unmap()
	for _, p := range g.allow {
		if p.Contains(ip) {
			return nil
		}
	}
	if !ip.IsValid() || ip.IsUnspecified() || ip.IsMulticast() {
		return fmt.Errorf("%w: %s", ErrSSRFBlocked, ip)
	}
	if g.allowPrivate {
		return nil
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsInterfaceLocalMulticast() {
		return fmt.Errorf("%w: %s", ErrSSRFBlocked, ip)
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return fmt.Errorf("%w: %s", ErrSSRFBlocked, ip)
		}
	}
	return nil
}
