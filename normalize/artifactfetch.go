package normalize

import "strings"

// serverCardSuffix is where an MCP server hosts its server card by
// convention: appended to its streamable-HTTP URL.
const serverCardSuffix = "/server-card"

// artifactOf returns the artifact the crawler should fetch to enrich rec:
// the document its url points to, when normalize can map its type; or, for
// an MCP server card given inline (no url), the full card at its first
// streamable-HTTP remote + "/server-card".
func artifactOf(rec *Record) (Artifact, bool) {
	if !mappable(rec.Type) {
		return Artifact{}, false
	}
	a := Artifact{Identifier: rec.Identifier, Type: rec.Type, Accept: publishedType(rec)}
	if rec.URL != "" {
		a.URL = rec.URL
		return a, true
	}
	if rec.Data == nil || a.Accept != TypeMCPServerCard {
		return Artifact{}, false
	}
	for _, b := range rec.Bindings {
		if b.Protocol == "mcp" && strings.EqualFold(b.Transport, "streamable-http") && b.Package == "" && !strings.Contains(b.URL, "{") {
			if _, ok := checkURL(b.URL); ok {
				a.URL, a.Guessed = strings.TrimRight(b.URL, "/")+serverCardSuffix, true
				return a, true
			}
		}
	}
	return Artifact{}, false
}

// sameFetch reports whether a is still the artifact of rec (a duplicate
// identifier may have replaced the record that named it).
func sameFetch(rec Record, a Artifact) bool {
	b, ok := artifactOf(&rec)
	return ok && b.URL == a.URL
}

// publishedType is the media type rec's entry names, without parameters,
// lower-case: its as-published spelling when that was canonicalized.
func publishedType(rec *Record) string {
	if rec.ArtifactType != "" {
		return baseType(rec.ArtifactType)
	}
	return rec.Type
}

// TypeMCPServerCard is the media type of an MCP server card (an entry's
// type and the Accept of its fetch); records keep the canonical TypeMCP.
const TypeMCPServerCard = "application/mcp-server-card+json"
