package normalize

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentfinder/agentfinder/normalize/rawjson"
)

// entryKeys are the catalog entry members normalize reads; others go to
// Record.Extra.
var entryKeys = map[string]bool{
	"identifier": true, "displayName": true, "type": true, "mediaType": true,
	"url": true, "data": true, "inline": true, "description": true, "tags": true,
	"capabilities": true, "representativeQueries": true, "version": true,
	"updatedAt": true, "metadata": true, "trustManifest": true,
}

// entry validates one catalog entry at path and, when it has no error, adds
// its record (and, for an inline catalog, its children's).
func (p *parser) entry(raw json.RawMessage, path string, depth int, chain []string, host *HostInfo) {
	f, _ := rawjson.Members(raw)
	if f == nil {
		p.problem(path, CodeInvalidType, SeverityError, "entry is a JSON %s, want an object", jsonKind(raw))
		return
	}
	e := &entryReader{p: p, f: f, path: path, dataKey: "data"}
	e.identifier()
	e.mediaType()
	e.content()
	e.displayName()
	rec := &e.rec
	if e.bad {
		if rec.Identifier != "" {
			p.res.Rejected = append(p.res.Rejected, rec.Identifier)
		}
		// The entry is dropped, but an inline catalog's children are
		// entries of their own: they are still validated and kept.
		if rec.Type == TypeAICatalog && rec.Data != nil && firstByte(rec.Data) == '{' {
			p.nested(*rec, path, e.dataKey, depth, chain, host)
		}
		return
	}
	e.optional()
	e.derive(raw, chain, host)
	if a, ok := artifactOf(rec); ok {
		p.res.Artifacts = append(p.res.Artifacts, a)
	}
	p.add(*rec, path)

	// nested catalogs
	if rec.Type != TypeAICatalog {
		return
	}
	if rec.URL != "" {
		p.link(rec.URL, ViaNested, path+".url", depth, chain)
		return
	}
	p.nested(*rec, path, e.dataKey, depth, chain, host)
}

// entryReader reads the members of one entry into its record, one step per
// member; an error in a required member drops the entry (bad).
type entryReader struct {
	p       *parser
	f       map[string]json.RawMessage
	path    string
	rec     Record
	ident   Identifier
	dataKey string // "data", or "inline" when only the deprecated spelling holds the data
	bad     bool
}

// fail reports an error at field, which drops the entry.
func (e *entryReader) fail(field, code, format string, args ...any) {
	e.bad = true
	e.p.problem(e.path+field, code, SeverityError, format, args...)
}

// warn reports a warning at field.
func (e *entryReader) warn(field, code, format string, args ...any) {
	e.p.problem(e.path+field, code, SeverityWarning, format, args...)
}

// identifier reads the required identifier.
func (e *entryReader) identifier() {
	f, rec := e.f, &e.rec
	switch s, st := str(f, "identifier"); st {
	case stAbsent:
		e.fail(".identifier", CodeMissingField, "identifier is missing")
	case stWrongType:
		e.fail(".identifier", CodeInvalidType, "identifier is a JSON %s, want a string", jsonKind(f["identifier"]))
	default:
		rec.Identifier = s
		var reason string
		var ok bool
		if e.ident, reason, ok = ParseIdentifier(s); !ok {
			e.fail(".identifier", CodeInvalidIdentifier, "%s: %s", quoteShort(s), reason)
		} else if e.ident.NID == "air" {
			rec.Variants = append(rec.Variants, "urn:air")
		}
	}
}

// mediaType reads the required type, or mediaType (the base ai-catalog
// spelling).
func (e *entryReader) mediaType() {
	f, rec := e.f, &e.rec
	published := ""
	t, tst := str(f, "type")
	mt, mst := str(f, "mediaType")
	switch {
	case tst == stWrongType:
		e.fail(".type", CodeInvalidType, "type is a JSON %s, want a string", jsonKind(f["type"]))
	case tst == stOK && strings.TrimSpace(t) != "":
		published = t
		if mst == stOK {
			rec.Variants = append(rec.Variants, "type+mediaType")
			if !SameType(t, mt) {
				e.warn(".mediaType", CodeTypeMismatch, "mediaType %s differs from type %s; type is used", quoteShort(mt), quoteShort(t))
			}
		}
	case mst == stWrongType:
		e.fail(".mediaType", CodeInvalidType, "mediaType is a JSON %s, want a string", jsonKind(f["mediaType"]))
	case mst == stOK && strings.TrimSpace(mt) != "":
		published = mt
		rec.Variants = append(rec.Variants, "mediaType")
	default:
		e.fail(".type", CodeMissingField, "type is missing (neither type nor mediaType is given)")
	}
	if published == "" {
		return
	}
	rec.Type = CanonicalType(published)
	if strings.TrimSpace(published) != rec.Type {
		rec.ArtifactType = published
		if b := baseType(published); b != rec.Type {
			rec.Variants = append(rec.Variants, strings.TrimPrefix(b, "application/"))
		}
	}
	if !validMediaType(published) {
		e.warn(typeField(tst), CodeInvalidMediaType, "%s is not a media type (type/subtype)", quoteShort(published))
	}
}

// content reads exactly one of url and data (or the deprecated inline).
func (e *entryReader) content() {
	f, rec := e.f, &e.rec
	data, hasData := present(f, "data")
	if inline, ok := present(f, "inline"); ok {
		e.warn(".inline", CodeDeprecatedField, "inline is deprecated; use data")
		if !hasData {
			data, hasData, e.dataKey = inline, true, "inline"
			rec.Variants = append(rec.Variants, "inline")
		}
	}
	u, ust := str(f, "url")
	switch {
	case ust == stWrongType:
		e.fail(".url", CodeInvalidType, "url is a JSON %s, want a string", jsonKind(f["url"]))
	case ust == stOK && hasData:
		e.fail("", CodeURLAndData, "entry has both url and %s; exactly one is allowed", e.dataKey)
	case ust == stOK:
		if reason, ok := checkURL(u); !ok {
			e.fail(".url", CodeInvalidURL, "url %s: %s", quoteShort(u), reason)
		}
		rec.URL = strings.TrimSpace(u)
	case hasData:
		if firstByte(data) != '{' {
			e.fail("."+e.dataKey, CodeInvalidType, "%s is a JSON %s, want an object", e.dataKey, jsonKind(data))
		}
		rec.Data = data
	default:
		e.fail("", CodeNoContent, "entry has neither url nor data")
	}
}

// displayName reads displayName: required by the spec, but a missing one is
// not worth losing an agent over; derive falls back to the artifact's name
// or the identifier's last segment.
func (e *entryReader) displayName() {
	switch s, st := str(e.f, "displayName"); st {
	case stOK:
		e.rec.DisplayName = s
	case stAbsent:
		e.warn(".displayName", CodeMissingField, "displayName is missing")
	case stWrongType:
		e.warn(".displayName", CodeInvalidType, "displayName is a JSON %s, want a string", jsonKind(e.f["displayName"]))
	}
}

// optional reads the optional members: a wrong type drops the member, not
// the entry. Members the spec does not name are kept in Extra.
func (e *entryReader) optional() {
	f, rec, p := e.f, &e.rec, e.p
	optString := func(k string, dst *string) {
		switch s, st := str(f, k); st {
		case stOK:
			*dst = s
		case stWrongType:
			if k == "version" && jsonKind(f[k]) == "number" {
				*dst = string(f[k])
				return
			}
			e.warn("."+k, CodeInvalidType, "%s is a JSON %s, want a string; ignored", k, jsonKind(f[k]))
		}
	}
	optString("description", &rec.Description)
	optString("version", &rec.Version)
	optString("updatedAt", &rec.UpdatedAt)
	if rec.UpdatedAt != "" {
		if _, ok := ParseTime(rec.UpdatedAt); !ok {
			e.warn(".updatedAt", CodeInvalidTimestamp, "updatedAt %s is not an ISO 8601 timestamp", quoteShort(rec.UpdatedAt))
		}
	}
	rec.Tags = NormalizeTags(p.strings(f, "tags", e.path))
	rec.Capabilities = p.strings(f, "capabilities", e.path)
	rec.RepresentativeQueries = p.strings(f, "representativeQueries", e.path)
	if raw, ok := present(f, "metadata"); ok {
		if rec.Metadata, ok = decodeObject(raw); !ok || rec.Metadata == nil {
			rec.Metadata = nil
			e.warn(".metadata", CodeInvalidType, "metadata is a JSON %s, want an object; ignored", jsonKind(raw))
		}
	}
	if raw, ok := present(f, "trustManifest"); ok {
		p.trust(rec, raw, e.path+".trustManifest", e.ident)
	}
	for k, v := range f {
		if !entryKeys[k] {
			if rec.Extra == nil {
				rec.Extra = map[string]json.RawMessage{}
			}
			rec.Extra[k] = v
		}
	}
}

// derive sets what the record says without the entry spelling it out:
// publisher and its verification, host, source, content hash, protocols and
// bindings, what inline data maps to, a display name and status.
func (e *entryReader) derive(raw json.RawMessage, chain []string, host *HostInfo) {
	rec, p := &e.rec, e.p
	rec.Publisher = e.ident.Publisher
	if p.origin != "" {
		if isSubdomain(p.origin, rec.Publisher) {
			rec.PublisherVerified = true
		} else {
			e.warn(".identifier", CodePublisherUnverified, "publisher %s does not match %s, where the catalog was fetched from", rec.Publisher, p.origin)
		}
	}
	if host != nil {
		h := *host
		rec.Host = &h
	}
	rec.Source = Source{Catalog: p.opts.Origin, Via: p.opts.Via, Path: p.sourcePath(chain), FetchedAt: p.opts.Now}
	rec.ContentHash = ContentHash(raw)
	rec.Protocols = appendUnique(rec.Protocols, protocolOf(rec.Type))
	if rec.Type == TypeAIRegistry && rec.URL != "" {
		rec.Bindings = append(rec.Bindings, Binding{Protocol: "agent-finder", URL: rec.URL, Transport: "HTTP+JSON"})
	}

	// the artifact: inline data is mapped now, a url is left to the crawler
	if rec.Data != nil && mappable(rec.Type) {
		for _, pr := range mapArtifact(rec, rec.Type, rec.Data, true) { // a piece of the validated body
			pr.Path = e.path + "." + e.dataKey + pathSuffix(pr.Path)
			p.res.Problems = append(p.res.Problems, pr)
		}
	}
	if rec.DisplayName == "" && len(e.ident.Segments) > 0 {
		rec.DisplayName = e.ident.Segments[len(e.ident.Segments)-1]
	}
	if rec.Status == "" {
		rec.Status = "active"
	}
	rec.Trust = trustFor(rec, e.path, p.opts.Trust)
}

// nested flattens the inline catalog of rec, the entry at path.
func (p *parser) nested(rec Record, path, dataKey string, depth int, chain []string, host *HostInfo) {
	if depth+1 > p.maxDepth {
		p.problem(path+"."+dataKey, CodeDepthExceeded, SeverityError, "inline catalog would be at nesting depth %d, deeper than the limit %d; its entries were dropped", depth+1, p.maxDepth)
		return
	}
	top, _ := rawjson.Members(rec.Data)
	if top == nil {
		return // checked by entry: data is an object
	}
	inner := append(append([]string(nil), chain...), rec.Identifier)
	p.catalog(top, path+"."+dataKey+".", depth+1, inner, host)
}

// sourcePath is the provenance path of a record listed under chain: the
// catalogs that led to the catalog it was fetched from (Options.Path) and the
// inline bundles around it, without the catalog itself.
func (p *parser) sourcePath(chain []string) []string {
	n := len(p.opts.Path)
	skip := 0
	if p.opts.Origin != "" {
		skip = 1
	}
	if len(chain) <= n+skip {
		if n == 0 {
			return nil
		}
		return append([]string(nil), p.opts.Path...)
	}
	out := append([]string(nil), p.opts.Path...)
	if skip == 1 {
		out = append(out, p.opts.Origin)
	}
	return append(out, chain[n+skip:]...)
}

// strings reads an optional array of strings, keeping the strings of a mixed
// array and a lone string given instead of an array.
func (p *parser) strings(f map[string]json.RawMessage, k, path string) []string {
	raw, ok := present(f, k)
	if !ok {
		return nil
	}
	var s string
	if rawjson.String(raw, &s) {
		p.problem(path+"."+k, CodeInvalidType, SeverityWarning, "%s is a string, want an array of strings; used as one item", k)
		return []string{s}
	}
	list, ok := rawjson.Items(raw)
	if !ok {
		p.problem(path+"."+k, CodeInvalidType, SeverityWarning, "%s is a JSON %s, want an array of strings; ignored", k, jsonKind(raw))
		return nil
	}
	var out []string
	badAt := -1
	for i, item := range list {
		if !rawjson.String(item, &s) {
			if badAt < 0 {
				badAt = i
			}
			continue
		}
		out = append(out, s)
	}
	if badAt >= 0 {
		p.problem(path+"."+k+"["+strconv.Itoa(badAt)+"]", CodeInvalidType, SeverityWarning, "%s holds items that are not strings; they were ignored", k)
	}
	return out
}

// trust reads a trustManifest: compliance values from its attestations and
// the §5.1 check that its identity's trust domain aligns with the publisher.
func (p *parser) trust(rec *Record, raw json.RawMessage, path string, ident Identifier) {
	var tm trustManifest
	if firstByte(raw) != '{' || json.Unmarshal(raw, &tm) != nil {
		p.problem(path, CodeInvalidType, SeverityWarning, "trustManifest is a JSON %s, want an object; ignored", jsonKind(raw))
		return
	}
	rec.TrustManifest = raw
	rec.Compliance = ComplianceValues(attestationTypes(tm.Attestations))
	id, st := str(map[string]json.RawMessage{"identity": tm.Identity}, "identity")
	switch st {
	case stAbsent:
		p.problem(path+".identity", CodeMissingField, SeverityWarning, "trustManifest.identity is missing")
	case stWrongType:
		p.problem(path+".identity", CodeInvalidType, SeverityWarning, "trustManifest.identity is a JSON %s, want a string", jsonKind(tm.Identity))
	default:
		if d, ok := IdentityDomain(id); ok && ident.Publisher != "" && !domainsAlign(d, ident.Publisher) {
			p.problem(path+".identity", CodeTrustDomainMismatch, SeverityWarning, "trust domain %s of identity %s does not align with publisher %s", d, quoteShort(id), ident.Publisher)
		}
	}
}

// checkURL reports whether u is an absolute http or https URL with a host.
func checkURL(u string) (reason string, ok bool) {
	u = strings.TrimSpace(u)
	if u == "" {
		return "is empty", false
	}
	pu, err := url.Parse(u)
	if err != nil {
		return "does not parse", false
	}
	if pu.Scheme != "http" && pu.Scheme != "https" {
		if pu.Scheme == "" {
			return "is not absolute", false
		}
		return "scheme " + quoteShort(pu.Scheme) + " is not http or https", false
	}
	if pu.Host == "" || pu.Hostname() == "" {
		return "has no host", false
	}
	return "", true
}

// typeField names the member the type came from.
func typeField(typeState int) string {
	if typeState == stOK {
		return ".type"
	}
	return ".mediaType"
}

// pathSuffix joins a problem path relative to a document to its parent path.
func pathSuffix(rel string) string {
	switch {
	case rel == "" || rel == "$":
		return ""
	case strings.HasPrefix(rel, "["):
		return rel
	}
	return "." + rel
}
