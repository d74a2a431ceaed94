package normalize

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"
	"strconv"
	"strings"
)

// maxItems bounds how many skills, tools, examples or bindings one artifact
// contributes, so a hostile document cannot blow up a record.
const maxItems = 500

// Enrich maps an artifact document fetched from rec.URL (an A2A agent card,
// MCP server.json, ADP agent card, HAIDIP or xu agent metadata) into rec:
// skills, examples, bindings, tool names. contentType is the response's
// Content-Type (may be empty). The record's catalog fields win over the
// artifact's; list fields gain the artifact's values. It reports problems
// with the artifact (paths relative to the artifact document, "$" for all of
// it) and never clears what the catalog said. Records of types it cannot map
// are left alone.
func Enrich(rec *Record, contentType string, body []byte) []Problem {
	if rec == nil {
		return nil
	}
	var probs []Problem
	t := rec.Type
	ct := CanonicalType(contentType)
	switch {
	case mappable(ct) && ct != t && mappable(t):
		probs = append(probs, Problem{Path: "$", Code: CodeUnexpectedMediaType, Severity: SeverityWarning,
			Message: fmt.Sprintf("artifact served as %s but the catalog says %s; mapped as %s", ct, t, t)})
	case mappable(ct) && !mappable(t):
		t = ct
	}
	if !mappable(t) {
		return probs
	}
	if ct != "" && !mappable(ct) && !strings.Contains(ct, "json") && ct != "text/plain" && ct != "application/octet-stream" {
		probs = append(probs, Problem{Path: "$", Code: CodeUnexpectedMediaType, Severity: SeverityWarning,
			Message: fmt.Sprintf("artifact served as %s, not JSON", ct)})
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	probs = append(probs, mapArtifact(rec, t, body, json.Valid(body))...)
	// The record changes when its artifact does, so ingest must see a new hash.
	sum := sha256.Sum256([]byte(rec.ContentHash + ":" + ContentHash(body)))
	rec.ContentHash = hex.EncodeToString(sum[:])
	return probs
}

// mapArtifact maps an artifact document of canonical type t into rec. Problem
// paths are relative to the document. valid says json.Valid(doc) holds.
func mapArtifact(rec *Record, t string, doc json.RawMessage, valid bool) []Problem {
	var v any
	if valid {
		v = decodeAny(doc) // one validation pass, no copy of doc
	} else {
		// The decoder takes the first value of doc and ignores what follows;
		// its error says what is wrong.
		d := json.NewDecoder(bytes.NewReader(doc))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return []Problem{{Path: "$", Code: CodeInvalidArtifact, Severity: SeverityWarning, Message: "artifact is not JSON: " + err.Error()}}
		}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return []Problem{{Path: "$", Code: CodeInvalidArtifact, Severity: SeverityWarning, Message: "artifact is a JSON " + jsonKind(doc) + ", not an object"}}
	}
	m := &mapper{rec: rec}
	rec.Protocols = appendUnique(rec.Protocols, protocolOf(t))
	switch t {
	case TypeA2A:
		m.a2a(obj)
	case TypeMCP:
		m.mcp(obj)
	case TypeADP:
		m.adp(obj)
	case TypeHAIDIP:
		m.haidip(obj)
	case TypeXu:
		m.xu(obj)
	}
	rec.Tags = NormalizeTags(rec.Tags)
	return m.probs
}

// mapper fills a record from one artifact document.
type mapper struct {
	rec   *Record
	probs []Problem
}

func (m *mapper) problem(path, format string, args ...any) {
	m.probs = append(m.probs, Problem{Path: path, Code: CodeInvalidArtifact, Severity: SeverityWarning, Message: fmt.Sprintf(format, args...)})
}

// fill sets *dst to v unless the catalog already said something.
func fill(dst *string, v string) {
	if *dst == "" {
		*dst = strings.TrimSpace(v)
	}
}

// list returns obj[k] as a list of at most maxItems items, reporting a
// member of another type.
func (m *mapper) list(obj map[string]any, k string) []any {
	v, ok := obj[k]
	if !ok || v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		m.problem(k, "%s is not an array; ignored", k)
		return nil
	}
	if len(l) > maxItems {
		l = l[:maxItems]
	}
	return l
}

// objects yields the objects in obj[k] (see list), reporting any other
// item as "<what> is not an object; ignored".
func (m *mapper) objects(obj map[string]any, k, what string) iter.Seq[map[string]any] {
	return func(yield func(map[string]any) bool) {
		for i, it := range m.list(obj, k) {
			o, ok := it.(map[string]any)
			if !ok {
				m.problem(k+"["+itoa(i)+"]", "%s is not an object; ignored", what)
				continue
			}
			if !yield(o) {
				return
			}
		}
	}
}

// binding adds b to the record unless it holds it already.
func (m *mapper) binding(b Binding) {
	if b.URL == "" && b.Package == "" {
		return
	}
	for _, have := range m.rec.Bindings {
		if sameBinding(have, b) {
			return
		}
	}
	if len(m.rec.Bindings) >= maxItems {
		return
	}
	m.rec.Bindings = append(m.rec.Bindings, b)
	m.rec.Protocols = appendUnique(m.rec.Protocols, strings.ToLower(b.Protocol))
}

// examples adds example texts to the record.
func (m *mapper) examples(texts ...string) {
	if len(m.rec.Examples) >= maxItems {
		return
	}
	m.rec.Examples = appendUnique(m.rec.Examples, texts...)
}

// getStr returns obj[k] when it is a string (or a number, as written).
func getStr(obj map[string]any, k string) string {
	switch v := obj[k].(type) {
	case string:
		return strings.TrimSpace(v)
	case json.Number:
		return v.String()
	}
	return ""
}

// getObj returns obj[k] when it is an object.
func getObj(obj map[string]any, k string) map[string]any {
	o, _ := obj[k].(map[string]any)
	return o
}

// getInt returns obj[k] when it is an integer (or a string holding one).
func getInt(obj map[string]any, k string) (int64, bool) {
	switch v := obj[k].(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, true
		}
		if f, err := v.Float64(); err == nil && f >= -9e18 && f <= 9e18 {
			return int64(f), true
		}
	case string:
		if i, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return i, true
		}
	}
	return 0, false
}

// strs returns the strings of obj[k], an array of strings or one string.
func strs(obj map[string]any, k string) []string {
	switch v := obj[k].(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for i, item := range v {
			if i >= maxItems {
				break
			}
			if s, ok := item.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// skillPaths expands hierarchical skill tags to themselves and their parents
// ("nlp/translation" gives "nlp/translation" and "nlp"), lower-cased.
func skillPaths(tags []string) []string {
	var out []string
	for _, t := range NormalizeTags(tags) {
		t = strings.Trim(t, "/")
		for t != "" {
			out = appendUnique(out, t)
			i := strings.LastIndexByte(t, '/')
			if i < 0 {
				break
			}
			t = strings.TrimRight(t[:i], "/")
		}
	}
	return out
}

// mergeConstraints copies constraint members the record does not hold yet.
func (m *mapper) mergeConstraints(c map[string]any) {
	if len(c) == 0 {
		return
	}
	if m.rec.Constraints == nil {
		m.rec.Constraints = map[string]any{}
	}
	for k, v := range c {
		if _, ok := m.rec.Constraints[k]; !ok {
			m.rec.Constraints[k] = v
		}
	}
}

// variant records a spelling seen in the artifact.
func (m *mapper) variant(v string) {
	m.rec.Variants = appendUnique(m.rec.Variants, v)
}

func itoa(i int) string { return strconv.Itoa(i) }
