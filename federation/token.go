package federation

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// maxSeen bounds the identifiers a page token remembers as already shown.
const maxSeen = 100

// sourceState is where one source stopped: the page token that fetched its
// current page, how many of that page's results were used, and whether it
// is finished.
type sourceState struct {
	Endpoint string `json:"e,omitempty"` // upstream search endpoint; empty for the local index
	Token    string `json:"t,omitempty"`
	Offset   int    `json:"o,omitempty"`
	Done     bool   `json:"d,omitempty"`
	Learned  bool   `json:"l,omitempty"` // learned registry: its publisherVerified claims are not honored
	Depth    int    `json:"h,omitempty"` // hops from this registry (1 = named in the book)
}

// pageState is the composite continuation of a federated search.
type pageState struct {
	Query    string        `json:"q"`           // hash of the query it continues
	Local    sourceState   `json:"l"`           // the local index
	Upstream []sourceState `json:"u,omitempty"` // upstreams, in fan-out order
	Seen     []byte        `json:"s,omitempty"` // 6-byte hashes of identifiers already shown (auto mode)
}

// queryHash binds a token to its query (text, filters, page size).
func queryHash(q Query) string {
	b, _ := json.Marshal(q)
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:9])
}

// encodeToken signs st: base64url(JSON) "." base64url(HMAC-SHA256[:16]).
func encodeToken(key []byte, st pageState) string {
	body, _ := json.Marshal(st)
	p := base64.RawURLEncoding.EncodeToString(body)
	return p + "." + base64.RawURLEncoding.EncodeToString(sign(key, p))
}

// decodeToken verifies and decodes a token issued for q. An empty token is
// the first page.
func decodeToken(key []byte, tok string, q Query) (pageState, error) {
	if tok == "" {
		return pageState{}, nil
	}
	p, sig, ok := strings.Cut(tok, ".")
	if !ok {
		return pageState{}, ErrInvalidPageToken
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, sign(key, p)) {
		return pageState{}, ErrInvalidPageToken
	}
	body, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return pageState{}, ErrInvalidPageToken
	}
	var st pageState
	if json.Unmarshal(body, &st) != nil || st.Query != queryHash(q) {
		return pageState{}, ErrInvalidPageToken
	}
	return st, nil
}

func sign(key []byte, payload string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(payload))
	return m.Sum(nil)[:16]
}

// seenKey is the 6-byte hash of a canonical identifier kept in Seen.
func seenKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return string(sum[:6])
}

// seenSet reads the hashes of a token.
func seenSet(b []byte) map[string]bool {
	m := make(map[string]bool, len(b)/6)
	for i := 0; i+6 <= len(b); i += 6 {
		m[string(b[i:i+6])] = true
	}
	return m
}

// appendSeen adds keys, keeping the most recent maxSeen.
func appendSeen(b []byte, keys []string) []byte {
	out := append([]byte(nil), b...)
	for _, k := range keys {
		out = append(out, k...)
	}
	if n := len(out) / 6; n > maxSeen {
		out = out[(n-maxSeen)*6:]
	}
	return out
}
