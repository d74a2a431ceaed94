package normalize

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/agentfinder/agentfinder/normalize/rawjson"
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
	c := canonPool.Get().(*canonicalizer)
	sum := sha256.Sum256(c.canonical(doc))
	c.release()
	return hex.EncodeToString(sum[:])
}

// canonicalJSON re-encodes doc with sorted keys and no insignificant
// whitespace, or returns doc unchanged when it is not JSON. It is the
// reference for canonicalizer, which produces the same bytes faster.
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

var canonPool = sync.Pool{New: func() any { return new(canonicalizer) }}

// maxCanonDepth bounds the canonicalizer's recursion; deeper documents take
// the reference path (canonicalJSON), which has its own limit.
const maxCanonDepth = 512

// canonicalizer writes the canonical form of a JSON document in one pass over
// its bytes, without decoding it into Go values (strings that need escaping
// are re-encoded one at a time as encoding/json does). It leaves a document
// that is not plain valid JSON (a syntax error, trailing data, deep nesting)
// to canonicalJSON, so its output is always canonicalJSON's.
type canonicalizer struct {
	src     []byte
	pos     int
	depth   int
	out     []byte
	tmp     []byte
	members []member
	esc     bytes.Buffer  // scratch for strings the encoder must escape
	enc     *json.Encoder // writes to esc
}

// member is one object member written to out: its decoded key and the span
// of `"key":value` in out.
type member struct {
	key        []byte
	start, end int
}

// canonical returns the canonical form of doc; the result is valid until
// release.
func (c *canonicalizer) canonical(doc []byte) []byte {
	c.src, c.pos, c.depth = doc, 0, 0
	c.out = c.out[:0]
	c.members = c.members[:0]
	c.space()
	if !c.value() {
		return canonicalJSON(doc)
	}
	c.space()
	if c.pos != len(c.src) {
		return canonicalJSON(doc) // trailing data: the reference decides
	}
	return c.out
}

// release returns c to the pool unless it grew too large to keep.
func (c *canonicalizer) release() {
	c.src = nil
	clear(c.members)
	if cap(c.out) <= 1<<20 && cap(c.tmp) <= 1<<20 {
		canonPool.Put(c)
	}
}

func (c *canonicalizer) space() { c.pos = rawjson.SkipSpace(c.src, c.pos) }

// value writes the canonical form of the value at pos; false means "not
// handled here".
func (c *canonicalizer) value() bool {
	if c.pos >= len(c.src) {
		return false
	}
	switch b := c.src[c.pos]; {
	case b == '{':
		return c.object()
	case b == '[':
		return c.array()
	case b == '"':
		_, ok := c.str()
		return ok
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	case b == '-' || b >= '0' && b <= '9':
		return c.number()
	}
	return false
}

func (c *canonicalizer) literal(lit string) bool {
	if !bytes.HasPrefix(c.src[c.pos:], []byte(lit)) {
		return false
	}
	c.pos += len(lit)
	c.out = append(c.out, lit...)
	return true
}

// number copies a JSON number as written (json.Number keeps it so).
func (c *canonicalizer) number() bool {
	s, i := c.src, c.pos
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = skipDigits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		d := i + 1
		if i = skipDigits(s, d); i == d {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := i
		if i = skipDigits(s, d); i == d {
			return false
		}
	}
	c.out = append(c.out, s[c.pos:i]...)
	c.pos = i
	return true
}

// skipDigits returns the offset after the ASCII digits that start at
// s[i].
func skipDigits(s []byte, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// plainString returns the string token at pos, quotes included, when its
// canonical form is the token itself: no escapes, no control characters,
// valid UTF-8 without U+2028 and U+2029 (which the encoder escapes).
func (c *canonicalizer) plainString() ([]byte, bool) {
	s := c.src
	for i := c.pos + 1; i < len(s); {
		b := s[i]
		switch {
		case b == '"':
			tok := s[c.pos : i+1]
			c.pos = i + 1
			return tok, true
		case b == '\\' || b < 0x20:
			return nil, false
		case b < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 || r == '\u2028' || r == '\u2029' {
				return nil, false
			}
			i += n
		}
	}
	return nil, false
}

// str writes the canonical form of the string token at pos and returns its
// decoded value (which aliases src or out when it can).
func (c *canonicalizer) str() ([]byte, bool) {
	if tok, ok := c.plainString(); ok {
		c.out = append(c.out, tok...)
		return tok[1 : len(tok)-1], true
	}
	// Escapes, control characters or odd UTF-8: decode and re-encode the
	// token as encoding/json does.
	// An unterminated token runs to the end of src and fails to unmarshal.
	end := rawjson.SkipString(c.src, c.pos)
	var s string
	if json.Unmarshal(c.src[c.pos:end], &s) != nil {
		return nil, false
	}
	c.pos = end
	if c.enc == nil {
		c.enc = json.NewEncoder(&c.esc)
		c.enc.SetEscapeHTML(false)
	}
	c.esc.Reset()
	if c.enc.Encode(s) != nil {
		return nil, false
	}
	c.out = append(c.out, bytes.TrimSuffix(c.esc.Bytes(), []byte("\n"))...)
	return []byte(s), true
}

func (c *canonicalizer) array() bool {
	if c.depth++; c.depth > maxCanonDepth {
		return false
	}
	c.pos++ // [
	c.out = append(c.out, '[')
	c.space()
	if c.pos < len(c.src) && c.src[c.pos] == ']' {
		c.pos++
		c.out = append(c.out, ']')
		c.depth--
		return true
	}
	for {
		c.space()
		if !c.value() {
			return false
		}
		c.space()
		if c.pos >= len(c.src) {
			return false
		}
		switch c.src[c.pos] {
		case ',':
			c.pos++
			c.out = append(c.out, ',')
		case ']':
			c.pos++
			c.out = append(c.out, ']')
			c.depth--
			return true
		default:
			return false
		}
	}
}

func (c *canonicalizer) object() bool {
	if c.depth++; c.depth > maxCanonDepth {
		return false
	}
	c.pos++ // {
	c.out = append(c.out, '{')
	c.space()
	if c.pos < len(c.src) && c.src[c.pos] == '}' {
		c.pos++
		c.out = append(c.out, '}')
		c.depth--
		return true
	}
	first := len(c.members)
	for {
		c.space()
		if c.pos >= len(c.src) || c.src[c.pos] != '"' {
			return false
		}
		start := len(c.out)
		key, ok := c.str()
		if !ok {
			return false
		}
		c.space()
		if c.pos >= len(c.src) || c.src[c.pos] != ':' {
			return false
		}
		c.pos++
		c.out = append(c.out, ':')
		c.space()
		if !c.value() {
			return false
		}
		c.members = append(c.members, member{key: key, start: start, end: len(c.out)})
		c.space()
		if c.pos >= len(c.src) {
			return false
		}
		if c.src[c.pos] == '}' {
			c.pos++
			break
		}
		if c.src[c.pos] != ',' {
			return false
		}
		c.pos++
		c.out = append(c.out, ',')
	}
	c.sortMembers(first)
	c.out = append(c.out, '}')
	c.members = c.members[:first]
	c.depth--
	return true
}

// sortMembers puts the members from first on in key order, keeping the last
// of duplicate keys as decoding into a map does.
func (c *canonicalizer) sortMembers(first int) {
	ms := c.members[first:]
	sorted := true
	for i := 1; i < len(ms); i++ {
		if bytes.Compare(ms[i-1].key, ms[i].key) >= 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	base := ms[0].start
	c.tmp = append(c.tmp[:0], c.out[base:]...)
	c.out = c.out[:base]
	slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	for i, m := range ms {
		if i+1 < len(ms) && bytes.Equal(m.key, ms[i+1].key) {
			continue // a later duplicate wins
		}
		if len(c.out) > base {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, c.tmp[m.start-base:m.end-base]...)
	}
}
