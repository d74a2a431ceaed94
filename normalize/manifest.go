package normalize

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentfinder/agentfinder/normalize/rawjson"
)

// DefaultMaxDepth is the nesting limit for inline and linked catalogs when
// Options.MaxDepth is 0: the limit the base ai-catalog specification recommends.
const DefaultMaxDepth = 4

// Catalog parses and validates an ai-catalog.json document. It never fails as
// a whole: a broken document yields problems and no records, a broken entry
// is dropped with its problems while its valid siblings are kept. Nested
// catalogs given inline are flattened into Records; those given by url, and
// collections, become Links. It never panics, whatever body holds.
func Catalog(body []byte, opts Options) Result {
	p := &parser{
		opts:     opts,
		maxDepth: opts.MaxDepth,
		origin:   originHost(opts.Origin),
		byID:     map[string]int{},
	}
	if p.maxDepth <= 0 {
		p.maxDepth = DefaultMaxDepth
	}
	body = TrimBOM(body)
	// One validation pass; the pieces are then split without re-validating
	// and alias one private copy of body (records never share the caller's
	// buffer).
	var top map[string]json.RawMessage
	if json.Valid(body) {
		top, _ = rawjson.Members(bytes.Clone(body))
	}
	if top == nil {
		var probe json.RawMessage
		if err := json.Unmarshal(body, &probe); err != nil {
			p.problem("$", CodeInvalidJSON, SeverityError, "document is not JSON: %s", syntaxError(body, err))
		} else {
			p.problem("$", CodeNotAnObject, SeverityError, "document is a JSON %s, not an object", jsonKind(body))
		}
		return p.res
	}
	chain := append([]string(nil), opts.Path...)
	if opts.Origin != "" {
		chain = append(chain, opts.Origin)
	}
	p.res.Manifest = p.catalog(top, "", len(opts.Path), chain, nil)
	p.compact()
	if len(p.res.Records) == 0 {
		p.res.Records = nil // as when nothing was appended
	}
	return p.res
}

// parser carries one Catalog call's state.
type parser struct {
	opts     Options
	maxDepth int
	origin   string // host of opts.Origin, lower-case; "" skips verification
	res      Result
	byID     map[string]int // canonical identifier -> index in res.Records
	paths    []string       // JSON path of each record's entry, by index
}

func (p *parser) problem(path, code string, sev Severity, format string, args ...any) {
	p.res.Problems = append(p.res.Problems, Problem{Path: path, Code: code, Severity: sev, Message: fmt.Sprintf(format, args...)})
}

// catalog parses one catalog object (the document or an inline bundle's
// data). prefix is its JSON path with a trailing dot ("" at the top), depth
// its nesting depth, chain the catalogs and bundles that led to its entries,
// outer the host of the enclosing catalog.
func (p *parser) catalog(top map[string]json.RawMessage, prefix string, depth int, chain []string, outer *HostInfo) *Manifest {
	m := &Manifest{}
	for k, v := range top {
		switch k {
		case "specVersion", "host", "entries", "collections":
		default:
			if m.Extra == nil {
				m.Extra = map[string]json.RawMessage{}
			}
			m.Extra[k] = v
		}
	}

	switch s, st := str(top, "specVersion"); st {
	case stOK:
		m.SpecVersion = s
	case stAbsent:
		p.problem(prefix+"specVersion", CodeMissingField, SeverityWarning, "specVersion is missing")
	case stWrongType:
		m.SpecVersion = strings.Trim(string(top["specVersion"]), `"`)
		p.problem(prefix+"specVersion", CodeInvalidType, SeverityWarning, "specVersion is a JSON %s, want a string", jsonKind(top["specVersion"]))
	}

	host := outer
	if raw, ok := present(top, "host"); ok {
		if h := p.host(raw, prefix+"host"); h != nil {
			m.Host, host = h, h
		}
	}

	if raw, ok := present(top, "collections"); ok {
		list, ok := rawjson.Items(raw)
		if !ok {
			p.problem(prefix+"collections", CodeInvalidType, SeverityError, "collections is a JSON %s, want an array; ignored", jsonKind(raw))
		}
		m.Collections = list
		for i, c := range list {
			p.collection(c, fmt.Sprintf("%scollections[%d]", prefix, i), depth, chain)
		}
	}

	raw, ok := present(top, "entries")
	if !ok {
		msg := "entries is missing"
		if _, legacy := top["records"]; legacy {
			msg += " (this looks like the pre-release records/cardUrl shape)"
		}
		p.problem(prefix+"entries", CodeMissingField, SeverityError, "%s", msg)
		return m
	}
	if m.Entries, ok = rawjson.Items(raw); !ok {
		p.problem(prefix+"entries", CodeInvalidType, SeverityError, "entries is a JSON %s, want an array", jsonKind(raw))
		return m
	}
	if m.Entries == nil {
		m.Entries = []json.RawMessage{}
	}
	if p.res.Records == nil && len(m.Entries) > 0 {
		// Most entries become records: one allocation instead of doublings.
		p.res.Records = make([]Record, 0, len(m.Entries))
		p.paths = make([]string, 0, len(m.Entries))
	}
	for i, e := range m.Entries {
		p.entry(e, fmt.Sprintf("%sentries[%d]", prefix, i), depth, chain, host)
	}
	return m
}

// host reads a host info object leniently: members of the wrong type are
// reported and ignored.
func (p *parser) host(raw json.RawMessage, path string) *HostInfo {
	fields, _ := rawjson.Members(raw)
	if fields == nil {
		p.problem(path, CodeInvalidType, SeverityWarning, "host is a JSON %s, want an object", jsonKind(raw))
		return nil
	}
	h := &HostInfo{}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"displayName", &h.DisplayName}, {"identifier", &h.Identifier}, {"documentationUrl", &h.DocumentationURL}} {
		s, st := str(fields, f.name)
		switch st {
		case stOK:
			*f.dst = s
		case stWrongType:
			p.problem(path+"."+f.name, CodeInvalidType, SeverityWarning, "%s is a JSON %s, want a string", f.name, jsonKind(fields[f.name]))
		}
	}
	return h
}

// collection turns collections[i] into a link to follow.
func (p *parser) collection(raw json.RawMessage, path string, depth int, chain []string) {
	var u string
	if !rawjson.String(raw, &u) { // a bare URL string is accepted too
		fields, _ := rawjson.Members(raw)
		if fields == nil {
			p.problem(path, CodeInvalidType, SeverityError, "collection is a JSON %s, want an object; ignored", jsonKind(raw))
			return
		}
		s, st := str(fields, "url")
		switch st {
		case stAbsent:
			p.problem(path+".url", CodeMissingField, SeverityError, "collection has no url; ignored")
			return
		case stWrongType:
			p.problem(path+".url", CodeInvalidType, SeverityError, "url is a JSON %s, want a string; ignored", jsonKind(fields["url"]))
			return
		}
		u = s
		path += ".url"
	}
	p.link(u, ViaCollection, path, depth, chain)
}

// link records a catalog to fetch next, unless its url is not usable or it
// would be deeper than the limit.
func (p *parser) link(u, via, path string, depth int, chain []string) bool {
	if reason, ok := checkURL(u); !ok {
		p.problem(path, CodeInvalidURL, SeverityError, "catalog url %s: %s; not followed", quoteShort(u), reason)
		return false
	}
	if depth+1 > p.maxDepth {
		p.problem(path, CodeDepthExceeded, SeverityError, "catalog %s would be at nesting depth %d, deeper than the limit %d; not followed", quoteShort(u), depth+1, p.maxDepth)
		return false
	}
	p.res.Links = append(p.res.Links, Link{URL: strings.TrimSpace(u), Via: via, Path: append([]string(nil), chain...), From: path})
	return true
}

// add stores a valid record, resolving duplicate identifiers: the newer one
// (higher seq, then later updatedAt) is kept, the first on a tie.
func (p *parser) add(rec Record, path string) {
	key := CanonicalIdentifier(rec.Identifier)
	if i, dup := p.byID[key]; dup {
		old := p.res.Records[i]
		// Listing the same artifact again (a bundle repeating an entry) loses
		// nothing: a warning. Two different artifacts under one identifier
		// are an error: one of them is dropped.
		sev, what := SeverityError, "a different artifact"
		if sameArtifact(rec, old) {
			sev, what = SeverityWarning, "the same artifact"
		}
		if newer(rec, old) {
			p.problem(p.paths[i]+".identifier", CodeDuplicateIdentifier, sev,
				"identifier %s is listed again at %s (%s, newer); this entry was dropped", quoteShort(rec.Identifier), path, what)
			p.res.Records[i] = rec
			p.paths[i] = path
			return
		}
		p.problem(path+".identifier", CodeDuplicateIdentifier, sev,
			"identifier %s is already listed at %s (%s); this entry was dropped", quoteShort(rec.Identifier), p.paths[i], what)
		return
	}
	p.byID[key] = len(p.res.Records)
	p.res.Records = append(p.res.Records, rec)
	p.paths = append(p.paths, path)
}

// sameArtifact reports whether two records point to the same artifact: the
// same type and url, or the same inline data.
func sameArtifact(a, b Record) bool {
	if a.Type != b.Type {
		return false
	}
	if a.URL != "" || b.URL != "" {
		return a.URL == b.URL
	}
	return ContentHash(a.Data) == ContentHash(b.Data)
}

// newer reports whether a should replace b: a higher seq, or the same seq and
// a later updatedAt.
func newer(a, b Record) bool {
	if a.Seq != b.Seq {
		return a.Seq > b.Seq
	}
	ta, okA := ParseTime(a.UpdatedAt)
	tb, okB := ParseTime(b.UpdatedAt)
	return okA && (!okB || ta.After(tb))
}

// compact drops artifacts of identifiers whose record was replaced.
func (p *parser) compact() {
	if len(p.res.Artifacts) == 0 {
		return
	}
	kept := p.res.Artifacts[:0]
	for _, a := range p.res.Artifacts {
		i, ok := p.byID[CanonicalIdentifier(a.Identifier)]
		if ok && sameFetch(p.res.Records[i], a) {
			kept = append(kept, a)
		}
	}
	p.res.Artifacts = kept
}

// Field states returned by str and friends.
const (
	stAbsent    = iota // missing or null
	stOK               // present with the wanted JSON type
	stWrongType        // present with another JSON type
)

// present returns the member k of fields unless it is missing or null.
func present(fields map[string]json.RawMessage, k string) (json.RawMessage, bool) {
	v, ok := fields[k]
	if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return nil, false
	}
	return v, true
}

// str reads the string member k of fields.
func str(fields map[string]json.RawMessage, k string) (string, int) {
	v, ok := present(fields, k)
	if !ok {
		return "", stAbsent
	}
	var s string
	if !rawjson.String(v, &s) {
		return "", stWrongType
	}
	return s, stOK
}

// firstByte returns the first non-whitespace byte of b, or 0.
func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// jsonKind names the JSON type of a value for messages.
func jsonKind(v []byte) string {
	switch c := firstByte(v); {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "number"
	}
	return "value"
}

// RegistryRecords returns the records of type application/ai-registry+json
// (Agent Finder registries to federate with), in order.
func RegistryRecords(recs []Record) []Record {
	var out []Record
	for _, r := range recs {
		if r.Type == TypeAIRegistry {
			out = append(out, r)
		}
	}
	return out
}

// syntaxError describes a JSON decoding error of body with the line and
// column (1-based, in bytes) where it was found, so a reader can go there.
func syntaxError(body []byte, err error) string {
	var se *json.SyntaxError
	offset := -1
	switch {
	case errors.As(err, &se):
		offset = int(se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		offset = len(body)
		err = errors.New("unexpected end of input")
	}
	if offset < 0 || offset > len(body) {
		return err.Error()
	}
	// Offset counts the byte that failed; point at it.
	before := body[:max(offset-1, 0)]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}

// TrimBOM returns body without a leading UTF-8 byte order mark: common in
// published catalogs and harmless, it is not part of the JSON document
// (nor of what a signature over it covers).
func TrimBOM(body []byte) []byte { return bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")) }
