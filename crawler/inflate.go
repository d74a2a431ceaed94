package crawler

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// inflateTransport is the one layer that decompresses response bodies, and
// it bounds what it inflates. Go's transport already decodes a plain
// "Content-Encoding: gzip" it asked for (colly then caps the inflated
// stream); what is left, "x-gzip" or a "gzip" the server sent unasked, is
// decoded here: at most limit compressed bytes in, limit+1 inflated bytes out
// (one more than the limit is how the collector tells "too large"). Every
// response leaves marked Uncompressed, so colly never inflates a body a
// second time: its own gzip decoding (of "x-gzip", of a Content-Type that
// mentions gzip, of a .xml.gz path) runs after its size check and has no
// bound. A body that is a gzip file rather than gzip-encoded (no
// Content-Encoding) is left as it is; it is not a catalog.
type inflateTransport struct {
	rt    http.RoundTripper
	limit int64
}

// RoundTrip sends req and returns the response with a bounded, decoded body.
func (t *inflateTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	res.Uncompressed = true
	switch strings.ToLower(strings.TrimSpace(res.Header.Get("Content-Encoding"))) {
	case "gzip", "x-gzip":
		res.Body = &gunzipBody{raw: res.Body, in: &capReader{r: res.Body, left: t.limit}, limit: t.limit}
		res.Header.Del("Content-Encoding")
		res.Header.Del("Content-Length")
		res.ContentLength = -1
	}
	return res, nil
}

// gunzipBody inflates raw lazily (the gzip header is read on the first Read,
// so a broken stream is a body error, not a transport one) and stops at
// limit+1 inflated bytes.
type gunzipBody struct {
	raw   io.ReadCloser
	in    *capReader
	limit int64
	out   io.Reader
	zr    *gzip.Reader
}

func (b *gunzipBody) Read(p []byte) (int, error) {
	if b.out == nil {
		zr, err := gzip.NewReader(b.in)
		if err != nil {
			return 0, fmt.Errorf("gzip body: %w", err)
		}
		b.zr = zr
		b.out = io.LimitReader(zr, b.limit+1)
	}
	return b.out.Read(p)
}

func (b *gunzipBody) Close() error {
	if b.zr != nil {
		b.zr.Close()
	}
	return b.raw.Close()
}

// capReader fails with ErrTooLarge once more than left bytes were read: a
// compressed body over the limit (empty gzip members inflate to nothing and
// would otherwise be read without end) is refused, not truncated.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, fmt.Errorf("%w: compressed body over the limit", ErrTooLarge)
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, fmt.Errorf("%w: compressed body over the limit", ErrTooLarge)
	}
	return n, err
}
