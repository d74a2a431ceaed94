package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// secretKey returns the key in <data-dir>/<name>, creating it (32 random
// bytes, hex, 0600) on first use, so page tokens survive restarts. Replicas
// behind one load balancer share it through AGENTFINDER_PAGE_TOKEN_KEY.
func secretKey(dataDir, name string) ([]byte, error) {
	path := filepath.Join(dataDir, name)
	if b, err := os.ReadFile(path); err == nil && len(bytes.TrimSpace(b)) >= 32 {
		return bytes.TrimSpace(b), nil
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	key := []byte(hex.EncodeToString(raw))
	if err := os.WriteFile(path, append(key, '\n'), 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return key, nil
}

// deriveKey gives each user of the page-token key its own key.
func deriveKey(key []byte, purpose string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(purpose))
	return m.Sum(nil)
}
