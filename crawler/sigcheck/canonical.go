package sigcheck

import (
	"bytes"
	"math"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/gowebpki/jcs"

	"github.com/agentfinder/agentfinder/normalize/rawjson"
)

// maxFloat is how jsontext writes a number too large for a double: it
// clamps where JCS refuses, so a document that holds it is left to
// gowebpki/jcs.
var maxFloat = []byte(strconv.FormatFloat(math.MaxFloat64, 'g', -1, 64))

// canonicalOptions are what jsontext.Value.Canonicalize formats with; with
// AppendFormat the result is made without a copy of doc to format in place.
var canonicalOptions = []jsontext.Options{
	jsontext.CanonicalizeRawInts(true),
	jsontext.CanonicalizeRawFloats(true),
	jsontext.ReorderRawObjects(true),
}

// formatOptions are canonicalOptions but the reordering of object members,
// which jsontext does in a second pass over its output, parsing it again.
var formatOptions = canonicalOptions[:2]

// canonicalize returns the JCS (RFC 8785) form of the JSON value doc, which
// it leaves unchanged; a document with duplicate member names, invalid
// UTF-8 (or unpaired surrogates) or a number JCS cannot represent is
// refused. jsontext formats in one pass over the bytes, several times
// faster than gowebpki/jcs's tree (which the tests compare it with), and
// checking a signed catalog in a crawl is mostly this. Most signed
// documents have their members in order already (signers write what they
// canonicalized): sortedNames tells so in a cheaper pass than jsontext's
// reordering, which then runs only on the others.
func canonicalize(doc []byte) ([]byte, error) {
	v, err := jsontext.AppendFormat(nil, doc, formatOptions...)
	if err != nil {
		return nil, err
	}
	if !sortedNames(v) {
		if v, err = jsontext.AppendFormat(v[:0], v, canonicalOptions...); err != nil {
			return nil, err
		}
	}
	if bytes.Contains(v, maxFloat) {
		return jcs.Transform(doc)
	}
	return v, nil
}

// sortedNames reports whether every object in v, compact JSON as jsontext
// writes it, has its member names in increasing order by RFC 8785's rule
// (by UTF-16 code units). It tells so for names of printable ASCII without
// escapes, where that order is the order of the bytes, and answers false
// for any other name (the members are then reordered by jsontext).
func sortedNames(v []byte) bool {
	type level struct {
		object bool
		last   []byte // the object's last member name so far; nil before the first
	}
	var stack []level
	name := false // the next string is a member name
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '{':
			stack = append(stack, level{object: true})
			name = true
		case '[':
			stack = append(stack, level{})
		case '}', ']':
			if len(stack) == 0 {
				return false
			}
			stack = stack[:len(stack)-1]
		case ',':
			name = len(stack) > 0 && stack[len(stack)-1].object
		case '"':
			end := rawjson.SkipString(v, i)
			if name {
				n, top := v[i+1:end-1], &stack[len(stack)-1]
				if !printableASCII(n) || top.last != nil && bytes.Compare(top.last, n) >= 0 {
					return false
				}
				top.last, name = n, false
			}
			i = end - 1
		}
	}
	return true
}

// printableASCII reports a name of printable ASCII characters, none of
// them a backslash.
func printableASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e || c == '\\' {
			return false
		}
	}
	return true
}
