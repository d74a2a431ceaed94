// Package authn verifies the bearer credentials of the read API: API keys
// kept as SHA-256 hashes in a JSON file (Keys) and OpenID Connect tokens
// checked against the issuer's published keys (OIDC). Each returns the
// caller's name and groups; searchapi decides what those groups may see.
package authn

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/agentfinder/agentfinder/normalize"
)

// ErrUnknown means the credential is not one this verifier accepts.
var ErrUnknown = errors.New("unknown credential")

// Identity is a verified caller.
type Identity struct {
	Name   string   // the key's name or the token's subject
	Groups []string // normalize.Groups form
}

// keyFile is the JSON of an API keys file.
type keyFile struct {
	Keys []struct {
		Name   string   `json:"name"`
		SHA256 string   `json:"sha256"`
		Groups []string `json:"groups"`
	} `json:"keys"`
}

type key struct {
	name   string
	hash   [sha256.Size]byte
	groups []string
}

// Keys verifies API keys against the hashes of a keys file:
// {"keys": [{"name": "hr-bot", "sha256": "<hex SHA-256 of the key>",
// "groups": ["hr"]}]}. Reload re-reads the file (cmd calls it on SIGHUP);
// a bad file keeps the keys loaded before. Safe for concurrent use.
type Keys struct {
	path string
	keys atomic.Pointer[[]key]
}

// LoadKeys reads the keys file at path.
func LoadKeys(path string) (*Keys, error) {
	k := &Keys{path: path}
	if err := k.Reload(); err != nil {
		return nil, err
	}
	return k, nil
}

// Reload re-reads the keys file; on error the loaded keys stay.
func (k *Keys) Reload() error {
	data, err := os.ReadFile(k.path)
	if err != nil {
		return fmt.Errorf("api keys: %w", err)
	}
	list, err := parseKeys(data)
	if err != nil {
		return fmt.Errorf("api keys %s: %w", k.path, err)
	}
	k.keys.Store(&list)
	return nil
}

func parseKeys(data []byte) ([]key, error) {
	var f keyFile
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	out := make([]key, 0, len(f.Keys))
	for i, e := range f.Keys {
		if strings.TrimSpace(e.Name) == "" {
			return nil, fmt.Errorf("keys[%d]: name is required", i)
		}
		h, err := hex.DecodeString(strings.TrimSpace(e.SHA256))
		if err != nil || len(h) != sha256.Size {
			return nil, fmt.Errorf("keys[%d] (%s): sha256 must be 64 hex digits", i, e.Name)
		}
		kk := key{name: e.Name, groups: normalize.Groups(e.Groups)}
		copy(kk.hash[:], h)
		out = append(out, kk)
	}
	return out, nil
}

// Verify returns the identity of an API key, or ErrUnknown. It compares the
// key's hash with every stored hash in constant time.
func (k *Keys) Verify(_ context.Context, token string) (Identity, error) {
	sum := sha256.Sum256([]byte(token))
	var found *key
	list := *k.keys.Load()
	for i := range list {
		if subtle.ConstantTimeCompare(sum[:], list[i].hash[:]) == 1 && found == nil {
			found = &list[i]
		}
	}
	if found == nil {
		return Identity{}, ErrUnknown
	}
	return Identity{Name: found.name, Groups: found.groups}, nil
}

// HashKey returns the hex SHA-256 of an API key, as a keys file stores it.
func HashKey(apiKey string) string {
	sum := sha256.Sum256([]byte(apiKey))
	return hex.EncodeToString(sum[:])
}
