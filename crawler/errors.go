package crawler

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"

	"github.com/agentfinder/agentfinder/crawler/netguard"
)

// Errors a fetch can end with. Callers branch on them with errors.Is; each
// maps to one reason code in the report (see Reason).
var (
	// ErrRobotsDisallowed: the host's robots.txt forbids the path to our agent.
	ErrRobotsDisallowed = errors.New("disallowed by robots.txt")
	// ErrRobotsUnavailable: the host's robots.txt answered 429 or 5xx; RFC
	// 9309 says to assume complete disallow until it recovers.
	ErrRobotsUnavailable = errors.New("robots.txt unavailable")
	// ErrSSRFBlocked: the host resolved only to addresses the network guard
	// (package netguard) refuses.
	ErrSSRFBlocked = netguard.ErrBlocked
	// ErrRedirectLoop: a redirect pointed back to a URL already in the chain.
	ErrRedirectLoop = errors.New("redirect loop")
	// ErrTooManyRedirects: the redirect chain was longer than Config.MaxRedirects.
	ErrTooManyRedirects = errors.New("too many redirects")
	// ErrTooLarge: the body was larger than Config.MaxBodySize.
	ErrTooLarge = errors.New("body too large")
	// ErrDNS: the name could not be resolved.
	ErrDNS = errors.New("dns lookup failed")
	// ErrExcluded: the host is outside the configured include/exclude patterns.
	ErrExcluded = errors.New("host excluded by configuration")
	// ErrInvalidURL: the URL is not an absolute http or https URL.
	ErrInvalidURL = errors.New("invalid url")
)

// Reason codes of failed catalogs in the report and in CatalogResult.Reason.
const (
	ReasonTimeout           = "timeout"
	ReasonHTTPStatus        = "http_status"
	ReasonTooLarge          = "too_large"
	ReasonNotJSON           = "not_json"
	ReasonInvalidJSON       = "invalid_json"
	ReasonRobotsDisallowed  = "robots_disallowed"
	ReasonRobotsUnavailable = "robots_unavailable"
	ReasonSSRFBlocked       = "ssrf_blocked"
	ReasonRedirectLoop      = "redirect_loop"
	ReasonTooManyRedirects  = "too_many_redirects"
	ReasonDNSError          = "dns_error"
	ReasonTLSError          = "tls_error"
	ReasonConnection        = "connection_error"
	ReasonExcluded          = "excluded"
	ReasonInvalidURL        = "invalid_url"
	ReasonCanceled          = "canceled"
)

// Reason returns the report's reason code for a fetch error.
func Reason(err error) string {
	var (
		certErr    *tls.CertificateVerificationError
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalidErr x509.CertificateInvalidError
		recErr     tls.RecordHeaderError
		netErr     net.Error
	)
	switch {
	case errors.Is(err, ErrRobotsDisallowed):
		return ReasonRobotsDisallowed
	case errors.Is(err, ErrRobotsUnavailable):
		return ReasonRobotsUnavailable
	case errors.Is(err, ErrSSRFBlocked):
		return ReasonSSRFBlocked
	case errors.Is(err, ErrRedirectLoop):
		return ReasonRedirectLoop
	case errors.Is(err, ErrTooManyRedirects):
		return ReasonTooManyRedirects
	case errors.Is(err, ErrTooLarge):
		return ReasonTooLarge
	case errors.Is(err, ErrDNS):
		return ReasonDNSError
	case errors.Is(err, ErrExcluded):
		return ReasonExcluded
	case errors.Is(err, ErrInvalidURL):
		return ReasonInvalidURL
	case errors.Is(err, context.Canceled):
		return ReasonCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return ReasonTimeout
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr),
		errors.As(err, &invalidErr), errors.As(err, &recErr):
		return ReasonTLSError
	case errors.As(err, &netErr) && netErr.Timeout():
		return ReasonTimeout
	}
	return ReasonConnection
}

// retryable reports whether a transport error is worth another attempt.
func retryable(err error) bool {
	switch Reason(err) {
	case ReasonTimeout, ReasonConnection:
		return !errors.Is(err, context.Canceled)
	}
	return false
}
