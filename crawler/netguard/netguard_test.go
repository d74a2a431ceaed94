package netguard

import (
	"errors"
	"net"
	"net/netip"
	"testing"
)

// TestCheckSpecialPurposeRanges walks the IANA IPv4 and IPv6 special-purpose
// address registries entry by entry (one address inside each), the other
// non-public ranges (multicast, site-local, IPv4-compatible) and the
// transition mechanisms that embed an IPv4 address, with the default guard.
func TestCheckSpecialPurposeRanges(t *testing.T) {
	blocked := []struct{ name, ip string }{
		// IANA IPv4 Special-Purpose Address Registry.
		{"this network 0.0.0.0/8", "0.1.2.3"},
		{"this host 0.0.0.0/32", "0.0.0.0"},
		{"private 10.0.0.0/8", "10.0.0.1"},
		{"shared address space 100.64.0.0/10", "100.64.0.1"},
		{"shared address space top", "100.127.255.254"},
		{"loopback 127.0.0.0/8", "127.0.0.1"},
		{"loopback other", "127.3.4.5"},
		{"link local 169.254.0.0/16", "169.254.1.1"},
		{"cloud metadata", "169.254.169.254"},
		{"private 172.16.0.0/12", "172.16.0.1"},
		{"private 172.31", "172.31.255.254"},
		{"ietf protocol assignments 192.0.0.0/24", "192.0.0.1"},
		{"ipv4 service continuity 192.0.0.0/29", "192.0.0.5"},
		{"ipv4 dummy address 192.0.0.8/32", "192.0.0.8"},
		{"port control protocol anycast 192.0.0.9/32", "192.0.0.9"},
		{"traversal using relays around nat anycast 192.0.0.10/32", "192.0.0.10"},
		{"nat64/dns64 discovery 192.0.0.170/32", "192.0.0.170"},
		{"nat64/dns64 discovery 192.0.0.171/32", "192.0.0.171"},
		{"documentation test-net-1 192.0.2.0/24", "192.0.2.1"},
		{"as112-v4 192.31.196.0/24", "192.31.196.1"},
		{"amt 192.52.193.0/24", "192.52.193.1"},
		{"deprecated 6to4 relay anycast 192.88.99.0/24", "192.88.99.1"},
		{"private 192.168.0.0/16", "192.168.1.1"},
		{"direct delegation as112 192.175.48.0/24", "192.175.48.1"},
		{"benchmarking 198.18.0.0/15", "198.19.0.1"},
		{"documentation test-net-2 198.51.100.0/24", "198.51.100.1"},
		{"documentation test-net-3 203.0.113.0/24", "203.0.113.1"},
		{"reserved 240.0.0.0/4", "240.0.0.1"},
		{"limited broadcast 255.255.255.255/32", "255.255.255.255"},
		// IPv4 multicast (its own registry).
		{"multicast 224.0.0.0/4", "224.0.0.1"},
		{"multicast admin scoped", "239.255.255.250"},

		// IANA IPv6 Special-Purpose Address Registry.
		{"loopback ::1/128", "::1"},
		{"unspecified ::/128", "::"},
		{"ipv4-mapped ::ffff:0:0/96 loopback", "::ffff:127.0.0.1"},
		{"ipv4-mapped private", "::ffff:10.0.0.1"},
		{"ipv4-mapped metadata", "::ffff:169.254.169.254"},
		{"ipv4-mapped private 192.168", "::ffff:192.168.0.1"},
		{"ipv4-ipv6 translation 64:ff9b::/96 public", "64:ff9b::808:808"},
		{"nat64 loopback", "64:ff9b::7f00:1"},
		{"nat64 private", "64:ff9b::a00:1"},
		{"nat64 metadata", "64:ff9b::a9fe:a9fe"},
		{"local-use ipv4-ipv6 translation 64:ff9b:1::/48", "64:ff9b:1::808:808"},
		{"local-use nat64 loopback", "64:ff9b:1::7f00:1"},
		{"discard-only 100::/64", "100::1"},
		{"dummy ipv6 prefix 100:0:0:1::/64", "100:0:0:1::1"},
		{"ietf protocol assignments 2001::/23", "2001:1ff::1"},
		{"teredo 2001::/32", "2001:0:4136:e378:8000:63bf:3fff:fdd2"},
		{"port control protocol anycast 2001:1::1/128", "2001:1::1"},
		{"traversal using relays around nat anycast 2001:1::2/128", "2001:1::2"},
		{"dns-sd service registration 2001:1::3/128", "2001:1::3"},
		{"benchmarking 2001:2::/48", "2001:2::1"},
		{"amt 2001:3::/32", "2001:3::1"},
		{"as112-v6 2001:4:112::/48", "2001:4:112::1"},
		{"deprecated orchid 2001:10::/28", "2001:10::1"},
		{"orchidv2 2001:20::/28", "2001:20::1"},
		{"drone remote id 2001:30::/28", "2001:30::1"},
		{"documentation 2001:db8::/32", "2001:db8::1"},
		{"6to4 2002::/16 public", "2002:808:808::1"},
		{"6to4 loopback", "2002:7f00:1::1"},
		{"6to4 private", "2002:a00:1::1"},
		{"direct delegation as112 2620:4f:8000::/48", "2620:4f:8000::1"},
		{"documentation 3fff::/20", "3fff::1"},
		{"segment routing sids 5f00::/16", "5f00::1"},
		{"unique local fc00::/7", "fd00::1"},
		{"unique local fc", "fc00::1"},
		{"link local fe80::/10", "fe80::1"},
		{"link local with zone", "fe80::1%lo"},
		// Other non-public IPv6.
		{"deprecated site local fec0::/10", "fec0::1"},
		{"multicast ff00::/8", "ff02::1"},
		{"ipv4-compatible loopback ::7f00:1", "::7f00:1"},
		{"ipv4-compatible private", "::10.0.0.1"},
		{"ipv4-compatible public", "::8.8.8.8"},
		{"ipv4-translated loopback ::ffff:0:7f00:1", "::ffff:0:7f00:1"},
		{"reserved by ietf 4000::/3", "4000::1"},
	}
	g := New(Config{})
	for _, tc := range blocked {
		t.Run(tc.name, func(t *testing.T) {
			err := g.Check(netip.MustParseAddr(tc.ip))
			if !errors.Is(err, ErrBlocked) {
				t.Fatalf("Check(%s) = %v, want ErrBlocked", tc.ip, err)
			}
		})
	}
	for _, ip := range []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "192.0.3.1", "2606:4700:4700::1111", "2a00:1450:4001::200e"} {
		t.Run("public "+ip, func(t *testing.T) {
			if err := g.Check(netip.MustParseAddr(ip)); err != nil {
				t.Fatalf("Check(%s) = %v, want nil", ip, err)
			}
		})
	}
}

// TestCheckAllow covers the operator's openings: AllowPrivate and Allow, and
// that an allowed transition prefix never opens the IPv4 it embeds.
func TestCheckAllow(t *testing.T) {
	pfx := func(s ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, p := range s {
			out = append(out, netip.MustParsePrefix(p))
		}
		return out
	}
	cases := []struct {
		name  string
		cfg   Config
		ip    string
		allow bool
	}{
		{"private: loopback", Config{AllowPrivate: true}, "127.0.0.1", true},
		{"private: rfc1918", Config{AllowPrivate: true}, "10.0.0.1", true},
		{"private: ula", Config{AllowPrivate: true}, "fd00::1", true},
		{"private: nat64 of private", Config{AllowPrivate: true}, "64:ff9b::a00:1", true},
		{"private: still no multicast", Config{AllowPrivate: true}, "239.1.1.1", false},
		{"private: still no multicast v6", Config{AllowPrivate: true}, "ff02::1", false},
		{"private: still no unspecified", Config{AllowPrivate: true}, "::", false},
		{"private: still no unspecified v4", Config{AllowPrivate: true}, "0.0.0.0", false},
		{"private: still no broadcast", Config{AllowPrivate: true}, "255.255.255.255", false},
		{"cidr inside", Config{Allow: pfx("10.1.0.0/16")}, "10.1.2.3", true},
		{"cidr outside", Config{Allow: pfx("10.1.0.0/16")}, "10.2.0.1", false},
		{"one loopback address", Config{Allow: pfx("127.0.0.2/32")}, "127.0.0.2", true},
		{"one loopback address, mapped", Config{Allow: pfx("127.0.0.2/32")}, "::ffff:127.0.0.2", true},
		{"one loopback address, not its neighbour", Config{Allow: pfx("127.0.0.2/32")}, "127.0.0.1", false},
		{"allowed v6 loopback", Config{Allow: pfx("::1/128")}, "::1", true},
		{"nat64 allowed: public inside", Config{Allow: pfx("64:ff9b::/96")}, "64:ff9b::808:808", true},
		{"nat64 allowed: loopback inside still refused", Config{Allow: pfx("64:ff9b::/96")}, "64:ff9b::7f00:1", false},
		{"nat64 allowed: metadata inside still refused", Config{Allow: pfx("64:ff9b::/96")}, "64:ff9b::a9fe:a9fe", false},
		{"nat64 allowed with its private v4", Config{Allow: pfx("64:ff9b::/96", "10.0.0.0/8")}, "64:ff9b::a00:1", true},
		{"local nat64 allowed: public at /96", Config{Allow: pfx("64:ff9b:1::/48")}, "64:ff9b:1::808:808", true},
		{"local nat64 allowed: loopback at /96 refused", Config{Allow: pfx("64:ff9b:1::/48")}, "64:ff9b:1::7f00:1", false},
		{"local nat64 allowed: loopback at /48 refused", Config{Allow: pfx("64:ff9b:1::/48")}, "64:ff9b:1:7f00:0:100::", false},
		{"6to4 allowed: private inside refused", Config{Allow: pfx("2002::/16")}, "2002:c0a8:1::1", false},
		{"6to4 allowed: public inside", Config{Allow: pfx("2002::/16")}, "2002:808:808::1", true},
		{"teredo allowed: private client refused", Config{Allow: pfx("2001::/32")}, "2001:0:808:808::f5ff:fffe", false},
		{"ipv4 allow does not open nat64 of it", Config{Allow: pfx("127.0.0.2/32")}, "64:ff9b::7f00:2", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := New(tc.cfg).Check(netip.MustParseAddr(tc.ip))
			if tc.allow && err != nil {
				t.Fatalf("Check(%s) = %v, want nil", tc.ip, err)
			}
			if !tc.allow && !errors.Is(err, ErrBlocked) {
				t.Fatalf("Check(%s) = %v, want ErrBlocked", tc.ip, err)
			}
		})
	}
}

// TestControlRefusesDial dials a real loopback listener through a dialer
// with the guard: refused by default, connected when its address is allowed.
func TestControlRefusesDial(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	d := net.Dialer{Control: New(Config{}).Control}
	if _, err := d.DialContext(t.Context(), "tcp", ln.Addr().String()); !errors.Is(err, ErrBlocked) {
		t.Fatalf("dial %s = %v, want ErrBlocked", ln.Addr(), err)
	}
	d.Control = New(Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}).Control
	c, err := d.DialContext(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial allowed %s: %v", ln.Addr(), err)
	}
	c.Close()
}
