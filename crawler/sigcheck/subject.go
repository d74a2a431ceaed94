package sigcheck

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/normalize/rawjson"
)

// entryFields are the members of one catalog entry the checks read.
type entryFields struct {
	identifier string
	typ        string
	url        string
	digest     string
	data       json.RawMessage // nil when absent or null
	version    json.RawMessage // nil when absent or null
	// As written (nil when absent): the manifests, and the inline
	// catalog an ai-catalog entry may nest under data or inline.
	trustManifest, trustManifests json.RawMessage
	rawData, inline               json.RawMessage
	canonical                     bool // read from a document in its JCS form
	index                         int  // its place in the catalog's entries
}

// dataDigest checks the entry's inline data against digest: over the JCS
// form of the data, which in a canonical document the data is already.
func (e *entryFields) dataDigest(digest, path string) *normalize.Problem {
	if e.canonical {
		return CheckDigest(digest, e.data, path, "the inline data")
	}
	return canonicalDigest(digest, e.data, path)
}

// signedManifest is one trust manifest that carries a signature.
type signedManifest struct {
	raw    json.RawMessage
	fields map[string]json.RawMessage
	path   string
}

// manifests returns the entry's trust manifests that carry a signature:
// trustManifest (v0.4.2) and each of trustManifests (ai-catalog).
func (e *entryFields) manifests(path string) []signedManifest {
	var out []signedManifest
	add := func(raw json.RawMessage, at string) {
		f, ok := rawjson.Members(raw)
		if !ok {
			return
		}
		if sig, ok := f["signature"]; ok && !isNull(sig) {
			out = append(out, signedManifest{raw: raw, fields: f, path: at})
		}
	}
	if e.trustManifest != nil {
		add(e.trustManifest, path+".trustManifest")
	}
	if e.trustManifests != nil {
		list, _ := rawjson.Items(e.trustManifests)
		for i, raw := range list {
			add(raw, fmt.Sprintf("%s.trustManifests[%d]", path, i))
		}
	}
	return out
}

// subjectProblems checks that the signed subject names this entry: its
// identifier, type and version, and its content by digest or https URL;
// inline data is checked against the subject's digest here, a url
// artifact when the crawler fetches it.
func (e *entryFields) subjectProblems(m signedManifest) []normalize.Problem {
	at := m.path + ".subject"
	var s struct {
		Identifier string          `json:"identifier"`
		Type       string          `json:"type"`
		Version    json.RawMessage `json:"version"`
		Digest     string          `json:"digest"`
		URL        string          `json:"url"`
	}
	raw, ok := m.fields["subject"]
	if !ok || isNull(raw) || json.Unmarshal(raw, &s) != nil {
		return []normalize.Problem{*problem(at, normalize.CodeSubjectMismatch, "a signed trust manifest must carry a subject object")}
	}
	var out []normalize.Problem
	mismatch := func(field, format string, args ...any) {
		out = append(out, *problem(at+"."+field, normalize.CodeSubjectMismatch, format, args...))
	}
	if s.Identifier != e.identifier {
		mismatch("identifier", "subject.identifier %q is not the entry's identifier %q", s.Identifier, e.identifier)
	}
	if s.Type == "" || !normalize.SameType(s.Type, e.typ) {
		mismatch("type", "subject.type %q is not the entry's type %q", s.Type, e.typ)
	}
	if !sameJSON(s.Version, e.version) {
		mismatch("version", "subject.version %s and the entry's version %s differ (both absent or both equal)", orAbsent(s.Version), orAbsent(e.version))
	}
	switch {
	case s.Digest == "" && s.URL == "":
		mismatch("", "the subject binds no content: it needs a digest or an https url")
	case s.Digest != "" && e.digest != "" && !strings.EqualFold(s.Digest, e.digest):
		mismatch("digest", "subject.digest is not the entry's digest")
	}
	if s.URL != "" && (!strings.HasPrefix(s.URL, "https://") || s.URL != e.url) {
		mismatch("url", "subject.url %q is not the entry's https url %q", s.URL, e.url)
	}
	if s.Digest != "" && len(e.data) > 0 {
		if p := e.dataDigest(s.Digest, at+".digest"); p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// sameJSON compares two optional scalar members: both absent, or equal.
func sameJSON(a, b json.RawMessage) bool {
	if isNull(a) {
		a = nil
	}
	if len(a) == 0 || len(b) == 0 {
		return len(a) == 0 && len(b) == 0
	}
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}

func orAbsent(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "(absent)"
	}
	return string(raw)
}

// attestationDigests refuses the attestation digests of the entry's trust
// manifests (either shape) that use a weak or unknown algorithm; their
// documents are checked against good digests when the crawler fetches them.
func (e *entryFields) attestationDigests(path string) []normalize.Problem {
	type manifest struct {
		Attestations []struct {
			Digest string `json:"digest"`
		} `json:"attestations"`
	}
	if !mayHoldDigest(e.trustManifest) && !mayHoldDigest(e.trustManifests) {
		return nil
	}
	var out []normalize.Problem
	check := func(m manifest, at string) {
		for i, a := range m.Attestations {
			if a.Digest == "" {
				continue
			}
			if _, _, p := parseDigest(a.Digest, fmt.Sprintf("%s.attestations[%d].digest", at, i)); p != nil {
				out = append(out, *p)
			}
		}
	}
	var one manifest
	if e.trustManifest != nil && json.Unmarshal(e.trustManifest, &one) == nil {
		check(one, path+".trustManifest")
	}
	var many []manifest
	if e.trustManifests != nil && json.Unmarshal(e.trustManifests, &many) == nil {
		for i, m := range many {
			check(m, fmt.Sprintf("%s.trustManifests[%d]", path, i))
		}
	}
	return out
}
