package normalize

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// DocID returns the Meilisearch document key for an identifier: a hash of its
// canonical form (CanonicalIdentifier), since Meilisearch keys allow only
// [A-Za-z0-9_-] and urn:air:Acme.com:x and urn:ai:acme.com:x name one agent.
func DocID(identifier string) string {
	sum := sha256.Sum256([]byte(CanonicalIdentifier(identifier)))
	return hex.EncodeToString(sum[:16])
}

// ContentHash hashes a JSON document independently of key order and
// insignificant whitespace: the SHA-256 of its canonical form (object keys
// sorted, numbers as written). A document that is not JSON is hashed as is.
func ContentHash(doc []byte) string {
	sum := sha256.Sum256(canonicalJSON(doc))
	return hex.EncodeToString(sum[:])
}

// canonicalJSON re-encodes doc with sorted keys and no insignificant
// whitespace, or returns doc unchanged when it is not JSON.
func canonicalJSON(doc []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return doc
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return doc
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
