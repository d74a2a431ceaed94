package searchapi

import (
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// HTTPConfig is the one configuration of the HTTP server in front of the
// API: header and connection bounds and the connection timeouts. Zero values
// take the defaults below.
type HTTPConfig struct {
	// MaxHeaderKiB bounds the request line and headers of one request, in
	// KiB; larger requests are answered 431. 0 means 64.
	MaxHeaderKiB int
	// MaxConns bounds the open connections; further connections wait in the
	// kernel's accept queue (and are refused once it is full) until one
	// closes. 0 means DefaultMaxConns; negative means no bound.
	MaxConns int
	// ReadHeaderTimeout bounds the wait for a request's headers. 0 means 5s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the reading of a whole request on routes that do
	// not read their body themselves (API routes read theirs under
	// Config.BodyTimeout). 0 means 15s.
	ReadTimeout time.Duration
	// WriteTimeout bounds the writing of a response. 0 means 60s.
	WriteTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle that long. 0 means 2m.
	IdleTimeout time.Duration
}

// Defaults of HTTPConfig.
const (
	DefaultMaxHeaderKiB = 64
	DefaultMaxConns     = 1024
)

func (c HTTPConfig) withDefaults() HTTPConfig {
	if c.MaxHeaderKiB <= 0 {
		c.MaxHeaderKiB = DefaultMaxHeaderKiB
	}
	if c.MaxConns == 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.ReadHeaderTimeout <= 0 {
		c.ReadHeaderTimeout = 5 * time.Second
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = 15 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 60 * time.Second
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 2 * time.Minute
	}
	return c
}

// NewHTTPServer returns the http.Server that serves h under cfg; serve it
// with Serve(cfg.Listener(ln)) so the connection bound holds. logger nil
// discards the server's own error log.
func NewHTTPServer(h http.Handler, cfg HTTPConfig, logger *slog.Logger) *http.Server {
	cfg = cfg.withDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		// net/http allows 4 KiB more than this before answering 431.
		MaxHeaderBytes: cfg.MaxHeaderKiB << 10,
		ErrorLog:       slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// Listener wraps ln so that at most cfg.MaxConns connections are open at
// once: Accept waits while the bound is reached.
func (c HTTPConfig) Listener(ln net.Listener) net.Listener {
	c = c.withDefaults()
	if c.MaxConns < 0 {
		return ln
	}
	return netutil.LimitListener(ln, c.MaxConns)
}
