// Package natsnode runs a NATS server with JetStream inside an agentfinder
// process, alone or as one node of a cluster of agentfinder processes, and
// connects to it or to an existing NATS cluster. It owns only the server's
// life and the connection; what is kept in JetStream (leases, state, the
// index write log) belongs to the packages that keep it.
//
// natsnode imports the NATS server and client; it must not import anything
// of ours.
package natsnode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ClusterName is the NATS cluster name agentfinder nodes form.
const ClusterName = "agentfinder"

// Config configures an embedded node.
type Config struct {
	// Name is the server name, unique in the cluster (JetStream needs it).
	Name string
	// StoreDir holds JetStream's files.
	StoreDir string
	// ClientListen is the host:port clients connect to; "" picks a free
	// loopback port.
	ClientListen string
	// ClusterListen is the host:port other nodes route to; "" runs alone.
	ClusterListen string
	// Peers are the other nodes' cluster addresses (host:port or
	// nats://host:port); this node's own address may be among them.
	Peers []string
	// Logger receives the server's notices and errors; nil discards.
	Logger *slog.Logger
	// ReadyTimeout bounds how long Start waits for the server to accept
	// connections. Default 10s.
	ReadyTimeout time.Duration
}

// Node is a running embedded NATS server. Stop it with Shutdown.
type Node struct {
	srv *server.Server
}

// Start runs an embedded NATS server with JetStream and waits until it
// accepts client connections. In a cluster, JetStream answers only once a
// majority of the peers is up; callers retry their first JetStream calls.
func Start(cfg Config) (*Node, error) {
	opts, err := options(cfg)
	if err != nil {
		return nil, err
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("nats server: %w", err)
	}
	if cfg.Logger != nil {
		srv.SetLoggerV2(slogLogger{cfg.Logger.With("component", "nats")}, false, false, false)
	}
	srv.Start()
	timeout := cfg.ReadyTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	if !srv.ReadyForConnections(timeout) {
		srv.Shutdown()
		return nil, fmt.Errorf("nats server %s: not ready after %s", cfg.Name, timeout)
	}
	return &Node{srv: srv}, nil
}

func options(cfg Config) (*server.Options, error) {
	if cfg.Name == "" || cfg.StoreDir == "" {
		return nil, errors.New("nats server: name and store directory are required")
	}
	host, port, err := hostPort(cfg.ClientListen, "127.0.0.1", -1)
	if err != nil {
		return nil, fmt.Errorf("nats client listen %q: %w", cfg.ClientListen, err)
	}
	opts := &server.Options{
		ServerName: cfg.Name,
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   cfg.StoreDir,
		NoSigs:     true,
		NoLog:      cfg.Logger == nil,
		MaxPayload: MaxPayload,
	}
	if cfg.ClusterListen == "" {
		return opts, nil
	}
	ch, cp, err := hostPort(cfg.ClusterListen, "0.0.0.0", 6222)
	if err != nil {
		return nil, fmt.Errorf("nats cluster listen %q: %w", cfg.ClusterListen, err)
	}
	opts.Cluster = server.ClusterOpts{Name: ClusterName, Host: ch, Port: cp}
	var routes []string
	for _, p := range cfg.Peers {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if !strings.Contains(p, "://") {
			p = "nats://" + p
		}
		routes = append(routes, p)
	}
	opts.Routes = server.RoutesFromStr(strings.Join(routes, ","))
	return opts, nil
}

// MaxPayload is the largest message the embedded server accepts: 8 MiB, so
// one index write of a few thousand documents fits in one message. Writers
// split larger writes (see the index write log).
const MaxPayload = 8 << 20

func hostPort(addr, defHost string, defPort int) (string, int, error) {
	if addr == "" {
		return defHost, defPort, nil
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, err
	}
	if h == "" {
		h = defHost
	}
	return h, n, nil
}

// ClientURL is the URL clients connect to.
func (n *Node) ClientURL() string { return n.srv.ClientURL() }

// Connect opens a client connection to this node.
func (n *Node) Connect(name string) (*nats.Conn, error) {
	return Connect(n.ClientURL(), name)
}

// Shutdown stops the server and waits until it is down.
func (n *Node) Shutdown() {
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
}

// Connect opens a client connection to the NATS servers at urls (comma
// separated), reconnecting forever when they go away.
func Connect(urls, name string) (*nats.Conn, error) {
	nc, err := nats.Connect(urls,
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(100*time.Millisecond),
		nats.RetryOnFailedConnect(true),
		nats.PingInterval(2*time.Second),
		nats.MaxPingsOutstanding(2),
	)
	if err != nil {
		return nil, fmt.Errorf("connect to nats %s: %w", urls, err)
	}
	return nc, nil
}

// JetStream returns the JetStream API over nc.
func JetStream(nc *nats.Conn) (jetstream.JetStream, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	return js, nil
}

// slogLogger hands the NATS server's log lines to slog.
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Noticef(f string, v ...any) { s.l.Debug(fmt.Sprintf(f, v...)) }
func (s slogLogger) Warnf(f string, v ...any)   { s.l.Warn(fmt.Sprintf(f, v...)) }
func (s slogLogger) Fatalf(f string, v ...any)  { s.l.Error(fmt.Sprintf(f, v...)) }
func (s slogLogger) Errorf(f string, v ...any)  { s.l.Error(fmt.Sprintf(f, v...)) }
func (s slogLogger) Debugf(f string, v ...any)  { s.l.Debug(fmt.Sprintf(f, v...)) }
func (s slogLogger) Tracef(f string, v ...any)  { s.l.Debug(fmt.Sprintf(f, v...)) }

// AwaitJetStream waits until JetStream answers (a cluster answers once a
// majority of its nodes is up and has elected a meta leader), polling until
// ctx ends.
func AwaitJetStream(ctx context.Context, js jetstream.JetStream) error {
	for {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := js.AccountInfo(actx)
		cancel()
		if err == nil {
			return nil
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("jetstream not ready: %w (last error: %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
}
