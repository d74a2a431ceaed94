// Package netguard is the one address guard of Agent Finder: the crawler,
// federation and the endpoint prober ask it whether an address may be
// dialled before they connect. It refuses every special-purpose range of the
// IANA IPv4 and IPv6 special-purpose address registries (loopback, private,
// shared, link-local, documentation, benchmarking, discard, ORCHID, AS112,
// reserved, ...), multicast, the deprecated site-local fec0::/10, everything
// outside the IPv6 global unicast range 2000::/3, and IPv6 addresses that
// embed an IPv4 address the guard would refuse (IPv4-mapped, IPv4-compatible,
// IPv4-translated, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16 and
// Teredo 2001::/32).
//
// The registries come from code.dny.dev/ssrf, generated from IANA's own
// files; this package adds what it leaves to its callers: unwrapping the IPv4
// embedded in transition addresses (so allowing NAT64 for an IPv6-only
// network still refuses 64:ff9b::7f00:1), IPv6 zones, segment-routing SIDs
// (5f00::/16), and the operator's allow list.
//
// Callers check at dial time, on the address actually connected to, so DNS
// rebinding and redirects cannot reach what a URL check let through: pass
// Guard.Control as net.Dialer.Control, or call Guard.Check on each resolved
// address before dialling it.
//
// netguard imports nothing of ours.
package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"

	"code.dny.dev/ssrf"
)

// ErrBlocked is wrapped by every refusal.
var ErrBlocked = errors.New("address refused by network guard")

// Config opens parts of the non-public address space. The zero value refuses
// everything but the public internet.
type Config struct {
	// AllowPrivate opens every non-public unicast address (loopback, RFC
	// 1918, unique local, link-local, shared, ...): an enterprise crawl of
	// its own network. Unspecified, multicast and broadcast addresses stay
	// refused.
	AllowPrivate bool
	// Allow opens these prefixes whatever their kind (an enterprise's
	// internal registries, 64:ff9b::/96 on an IPv6-only network behind
	// DNS64, a test's own loopback address). An IPv6 address that embeds an
	// IPv4 address is allowed only when that IPv4 address is allowed too.
	Allow []netip.Prefix
}

// Guard decides which addresses may be dialled. It is safe for concurrent
// use and must not be modified after New.
type Guard struct {
	allowPrivate bool
	allow        []netip.Prefix
	iana         *ssrf.Guardian
}

// extraDenied are special-purpose IPv6 ranges inside 2000::/3 that the
// ssrf package's generated list does not carry yet.
var extraDenied = []netip.Prefix{
	netip.MustParsePrefix("5f00::/16"), // Segment Routing (SRv6) SIDs (RFC 9602), not globally reachable
}

// New returns a Guard for cfg.
func New(cfg Config) *Guard {
	allow := make([]netip.Prefix, 0, len(cfg.Allow))
	for _, p := range cfg.Allow {
		if p.IsValid() {
			allow = append(allow, p.Masked())
		}
	}
	return &Guard{
		allowPrivate: cfg.AllowPrivate,
		allow:        allow,
		iana:         ssrf.New(ssrf.WithAnyNetwork(), ssrf.WithAnyPort(), ssrf.WithDeniedV6Prefixes(extraDenied...)),
	}
}

// Control is a net.Dialer Control function: it refuses to connect to an
// address Check refuses.
func (g *Guard) Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q is not an address and port", ErrBlocked, address)
	}
	return g.Check(ap.Addr())
}

// Check returns nil when ip may be dialled, else an error wrapping ErrBlocked
// that names the address and why.
func (g *Guard) Check(ip netip.Addr) error {
	if !ip.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrBlocked)
	}
	// A zone only scopes a link-local address; prefixes never match a zoned
	// address, so the guard judges the address without it.
	ip = ip.WithZone("").Unmap()
	for _, e := range embeddedIPv4(ip) {
		if err := g.check(e); err != nil {
			return fmt.Errorf("%w: %s embeds %s", ErrBlocked, ip, e)
		}
	}
	return g.check(ip)
}

func (g *Guard) check(ip netip.Addr) error {
	for _, p := range g.allow {
		if p.Contains(ip) {
			return nil
		}
	}
	if ip.IsUnspecified() || ip.IsMulticast() || ip == broadcast {
		return fmt.Errorf("%w: %s", ErrBlocked, ip)
	}
	if g.allowPrivate {
		return nil
	}
	if err := g.iana.SafeAddr(ip); err != nil {
		return fmt.Errorf("%w: %w", ErrBlocked, err)
	}
	return nil
}

var broadcast = netip.AddrFrom4([4]byte{255, 255, 255, 255})

// Transition prefixes whose addresses carry an IPv4 address (IPv4-mapped
// ::ffff:0:0/96 is unmapped by Check before it gets here).
var (
	compat    = netip.MustParsePrefix("::/96")           // IPv4-compatible (RFC 4291, deprecated)
	siit      = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (RFC 2765)
	nat64     = netip.MustParsePrefix("64:ff9b::/96")    // NAT64 well-known prefix (RFC 6052)
	nat64Ours = netip.MustParsePrefix("64:ff9b:1::/48")  // NAT64 local-use prefix (RFC 8215)
	sixToFour = netip.MustParsePrefix("2002::/16")       // 6to4 (RFC 3056)
	teredo    = netip.MustParsePrefix("2001::/32")       // Teredo (RFC 4380)
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")       // not an embedded address: ::, ::1 and friends
)

// embeddedIPv4 returns the IPv4 addresses an IPv6 address carries by one of
// the transition mechanisms, nil for others. For the local-use NAT64 prefix,
// whose length the operator picks (/48 to /96), every RFC 6052 position is
// returned.
func embeddedIPv4(ip netip.Addr) []netip.Addr {
	if !ip.Is6() {
		return nil
	}
	b := ip.As16()
	v4 := func(p ...byte) netip.Addr { return netip.AddrFrom4([4]byte{p[0], p[1], p[2], p[3]}) }
	switch {
	case nat64.Contains(ip), siit.Contains(ip):
		return []netip.Addr{v4(b[12:]...)}
	case compat.Contains(ip):
		if e := v4(b[12:]...); !thisNet.Contains(e) {
			return []netip.Addr{e}
		}
	case nat64Ours.Contains(ip):
		// RFC 6052 section 2.2: bits 64-71 (byte 8) are always skipped. The
		// positions a prefix length leaves unused hold zeros, which decode
		// to 0.0.0.0/8 and are not an address.
		var out []netip.Addr
		for _, e := range []netip.Addr{
			v4(b[6], b[7], b[9], b[10]),   // /48
			v4(b[7], b[9], b[10], b[11]),  // /56
			v4(b[9], b[10], b[11], b[12]), // /64
			v4(b[12:]...),                 // /96
		} {
			if !thisNet.Contains(e) {
				out = append(out, e)
			}
		}
		return out
	case sixToFour.Contains(ip):
		return []netip.Addr{v4(b[2:6]...)}
	case teredo.Contains(ip):
		// Server address in clear, client address inverted (RFC 4380 section 4).
		return []netip.Addr{v4(b[4:8]...), v4(^b[12], ^b[13], ^b[14], ^b[15])}
	}
	return nil
}
