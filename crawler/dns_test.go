package crawler

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// TestResolverReusesSocketsAndSkipsStaleReplies checks the resolver's pool
// of UDP sockets: lookups of several hosts go over reused sockets, and a
// stray reply with another ID (as a late answer to a timed-out query would
// be) is skipped rather than taken for the answer.
func TestResolverReusesSocketsAndSkipsStaleReplies(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	ports := map[string]bool{}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		mu.Lock()
		ports[w.RemoteAddr().String()] = true
		mu.Unlock()
		stale := new(dns.Msg)
		stale.SetReply(q)
		stale.Id = q.Id + 1
		stale.Answer = append(stale.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.IPv4(10, 9, 9, 9)})
		_ = w.WriteMsg(stale)
		m := new(dns.Msg)
		m.SetReply(q)
		if q.Question[0].Qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.IPv4(10, 0, 0, byte(len(q.Question[0].Name)))})
		}
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	<-started

	r := newResolver(pc.LocalAddr().String())
	defer r.close()
	for _, host := range []string{"a.test", "bb.test", "ccc.test"} {
		addrs, err := r.lookupAddrs(context.Background(), host)
		if err != nil {
			t.Fatalf("lookup %s: %v", host, err)
		}
		want := netip.AddrFrom4([4]byte{10, 0, 0, byte(len(host) + 1)})
		if len(addrs) != 1 || addrs[0] != want {
			t.Errorf("lookup %s = %v, want [%v] (a stale reply was taken?)", host, addrs, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// A and AAAA of one host are asked side by side: two sockets at most.
	if len(ports) < 1 || len(ports) > 2 {
		t.Errorf("6 queries came from %d sockets, want 1 or 2 reused ones", len(ports))
	}
	if n := len(r.conns); n != len(ports) {
		t.Errorf("idle sockets = %d, want the %d used", n, len(ports))
	}
}
