package search

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
)

// Page tokens are opaque to clients: "v1." + base64url(payload) + "." +
// base64url(mac). The payload binds the offset of the next page to a hash of
// the normalized query, so a token cannot be edited (the MAC fails) nor
// replayed against another query (the hash differs). Both are 400s.

const tokenPrefix = "v1."

// pageTokens signs and checks page tokens with one key.
type pageTokens struct {
	key []byte
}

// queryHash returns the first 16 bytes of SHA-256 over the normalized query.
func queryHash(normalized string) [16]byte {
	sum := sha256.Sum256([]byte(normalized))
	var h [16]byte
	copy(h[:], sum[:16])
	return h
}

// encode returns a token for the page that starts at offset.
func (p pageTokens) encode(normalized string, offset int) string {
	h := queryHash(normalized)
	payload := make([]byte, 0, 16+binary.MaxVarintLen64)
	payload = append(payload, h[:]...)
	payload = binary.AppendUvarint(payload, uint64(offset))
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(p.mac(payload))
}

// decode checks token against the normalized query and returns its offset.
func (p pageTokens) decode(normalized, token string) (int, error) {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return 0, invalid("pageToken is not a token issued by this registry")
	}
	body, sig, ok := strings.Cut(rest, ".")
	if !ok {
		return 0, invalid("pageToken is malformed")
	}
	payload, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(payload) < 17 {
		return 0, invalid("pageToken is malformed")
	}
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(mac, p.mac(payload)) {
		return 0, invalid("pageToken is not a token issued by this registry")
	}
	h := queryHash(normalized)
	if !hmac.Equal(payload[:16], h[:]) {
		return 0, invalid("pageToken belongs to a different query")
	}
	off, n := binary.Uvarint(payload[16:])
	if n <= 0 || off > maxOffset {
		return 0, invalid("pageToken is malformed")
	}
	return int(off), nil
}

// maxOffset bounds how deep a token may point: GET /agents pages as deep as
// the index reaches.
const maxOffset = normalize.MaxTotalHits

// MaxOffset bounds how deep POST /search pages: relevance ranks past
// the first thousand results mean nothing (Meilisearch's default
// maxTotalHits).
const MaxOffset = 1000

func (p pageTokens) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, p.key)
	m.Write(payload)
	return m.Sum(nil)[:16]
}

// accessKey is the part of a page token's binding that names the caller's
// access: a token continues only a listing made with the same groups.
func accessKey(groups []string) string {
	return "\x00access=" + strings.Join(groups, "\x02")
}
