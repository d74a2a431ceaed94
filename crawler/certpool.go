package crawler

import (
	"crypto/x509"
	"fmt"
	"os"
)

// CertPool returns the system roots plus the PEM certificates in caFile
// (none when caFile is ""): the roots the crawler trusts, and those cmd
// gives federation for the same --ca-file. A file without a certificate is
// an error, not an empty addition.
func CertPool(caFile string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if caFile == "" {
		return pool, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("read ca file: %w", err)
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("ca file %s: no PEM certificates", caFile)
	}
	return pool, nil
}
