package crawler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/agentfinder/agentfinder/crawler/netguard"
)

// resolver answers every lookup of the crawler: A/AAAA for the dialer and
// SVCB/TXT for discovery. With a configured server it speaks DNS to it with
// miekg/dns; otherwise it uses the system resolver for addresses and the
// first nameserver of /etc/resolv.conf for SVCB and TXT.
type resolver struct {
	server  string // host:port; empty means system
	timeout time.Duration

	mu    sync.Mutex
	cache map[string]addrEntry // host -> addresses, for server mode

	// conns keeps idle UDP sockets to server for reuse: a socket per query
	// costs a dial and a close each time. A reply to an earlier query that
	// timed out is skipped by its ID (miekg/dns does so on packet conns).
	conns chan *dns.Conn
}

// maxIdleDNSConns bounds the idle UDP sockets a resolver keeps.
const maxIdleDNSConns = 64

type addrEntry struct {
	addrs   []netip.Addr
	err     error
	expires time.Time
}

const maxAddrTTL = time.Minute

func newResolver(server string) *resolver {
	return &resolver{server: server, timeout: 5 * time.Second, cache: map[string]addrEntry{},
		conns: make(chan *dns.Conn, maxIdleDNSConns)}
}

// close releases the idle sockets.
func (r *resolver) close() {
	for {
		select {
		case co := <-r.conns:
			co.Close()
		default:
			return
		}
	}
}

// lookupAddrs returns the addresses of host; errors wrap ErrDNS.
func (r *resolver) lookupAddrs(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if r.server == "" {
		ips, err := (&net.Resolver{}).LookupNetIP(ctx, "ip", host)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w: %s: %w", ErrDNS, host, err)
		}
		return ips, nil
	}
	now := time.Now()
	r.mu.Lock()
	e, ok := r.cache[host]
	r.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.addrs, e.err
	}
	var (
		addrs []netip.Addr
		ttl   = maxAddrTTL
		errs  []error
	)
	// A and AAAA are asked side by side (one round trip, not two) and
	// read in that order.
	var (
		msgs [2]*dns.Msg
		qerr [2]error
		wg   sync.WaitGroup
	)
	wg.Go(func() { msgs[1], qerr[1] = r.exchange(ctx, host, dns.TypeAAAA) })
	msgs[0], qerr[0] = r.exchange(ctx, host, dns.TypeA)
	wg.Wait()
	for i := range msgs {
		msg, err := msgs[i], qerr[i]
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, rr := range msg.Answer {
			if t := time.Duration(rr.Header().Ttl) * time.Second; t < ttl {
				ttl = t
			}
			switch a := rr.(type) {
			case *dns.A:
				if ip, ok := netip.AddrFromSlice(a.A); ok {
					addrs = append(addrs, ip.Unmap())
				}
			case *dns.AAAA:
				if ip, ok := netip.AddrFromSlice(a.AAAA); ok {
					addrs = append(addrs, ip)
				}
			}
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var err error
	if len(addrs) == 0 {
		err = fmt.Errorf("%w: %s: no addresses", ErrDNS, host)
		if len(errs) > 0 {
			err = fmt.Errorf("%w: %s: %w", ErrDNS, host, errors.Join(errs...))
		}
		ttl = 5 * time.Second
	}
	r.mu.Lock()
	r.cache[host] = addrEntry{addrs: addrs, err: err, expires: now.Add(ttl)}
	r.mu.Unlock()
	return addrs, err
}

// query returns the answer records of one question; an NXDOMAIN or empty
// answer is not an error.
func (r *resolver) query(ctx context.Context, name string, qtype uint16) ([]dns.RR, error) {
	msg, err := r.exchange(ctx, name, qtype)
	if err != nil {
		return nil, err
	}
	return msg.Answer, nil
}

func (r *resolver) exchange(ctx context.Context, name string, qtype uint16) (*dns.Msg, error) {
	server := r.server
	if server == "" {
		cfg, err := dns.ClientConfigFromFile("/etc/resolv.conf")
		if err != nil || len(cfg.Servers) == 0 {
			return nil, fmt.Errorf("%w: no system nameserver", ErrDNS)
		}
		server = net.JoinHostPort(cfg.Servers[0], cfg.Port)
	}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = true
	m.SetEdns0(4096, false)
	c := &dns.Client{Net: "udp", Timeout: r.timeout}
	var (
		in  *dns.Msg
		err error
	)
	if r.server != "" {
		in, err = r.exchangeUDP(ctx, c, m)
	} else {
		in, _, err = c.ExchangeContext(ctx, m, server)
	}
	if err == nil && in.Truncated {
		c.Net = "tcp"
		in, _, err = c.ExchangeContext(ctx, m, server)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %s %s: %w", ErrDNS, dns.TypeToString[qtype], name, err)
	}
	if in.Rcode != dns.RcodeSuccess && in.Rcode != dns.RcodeNameError {
		return nil, fmt.Errorf("%w: %s %s: %s", ErrDNS, dns.TypeToString[qtype], name, dns.RcodeToString[in.Rcode])
	}
	return in, nil
}

// exchangeUDP is c.ExchangeContext over an idle socket to the configured
// server when there is one. A socket goes back to the pool only after a
// clean exchange, so none is left with a reply in flight but a late one.
func (r *resolver) exchangeUDP(ctx context.Context, c *dns.Client, m *dns.Msg) (*dns.Msg, error) {
	var co *dns.Conn
	select {
	case co = <-r.conns:
	default:
		var err error
		if co, err = c.DialContext(ctx, r.server); err != nil {
			return nil, err
		}
	}
	in, _, err := c.ExchangeWithConnContext(ctx, m, co)
	if err != nil {
		co.Close()
		return nil, err
	}
	select {
	case r.conns <- co:
	default:
		co.Close()
	}
	return in, nil
}

// dialer resolves with the crawler's resolver, applies the port map, checks
// every address with the network guard, then dials.
type dialer struct {
	res     *resolver
	guard   *netguard.Guard
	portMap map[string]string
	net     net.Dialer
}

// DialContext is the transport's dial function.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if p, ok := d.portMap[port]; ok {
		port = p
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else if ips, err = d.res.lookupAddrs(ctx, host); err != nil {
		return nil, err
	}
	var firstErr, dialErr error
	for _, ip := range ips {
		if err := d.guard.Check(ip); err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("dial %s: %w", host, err)
			}
			continue
		}
		conn, err := d.net.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		dialErr = err
	}
	if dialErr != nil {
		return nil, dialErr
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("%w: %s: no addresses", ErrDNS, host)
	}
	return nil, firstErr
}
