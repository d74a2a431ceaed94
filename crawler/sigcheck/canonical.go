package sigcheck

import (
	"bytes"
	"math"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/gowebpki/jcs"
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

// canonicalize returns the JCS (RFC 8785) form of the JSON value doc, which
// it leaves unchanged; a document with duplicate member names, invalid
// UTF-8 (or unpaired surrogates) or a number JCS cannot represent is
// refused. jsontext formats in one pass over the bytes, several times
// faster than gowebpki/jcs's tree (which the tests compare it with), and
// checking a signed catalog in a crawl is mostly this.
func canonicalize(doc []byte) ([]byte, error) {
	v, err := jsontext.AppendFormat(nil, doc, canonicalOptions...)
	if err != nil {
		return nil, err
	}
	if bytes.Contains(v, maxFloat) {
		return jcs.Transform(doc)
	}
	return v, nil
}
