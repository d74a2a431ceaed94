package normalize

import (
	"net/url"
	"slices"
	"strings"
)

// The kinds of source a record comes from, as ingest's precedence ranks
// them: the publisher's own catalog first, then a card the agent publishes
// on its own at a well-known URI, then a registry's copy.
const (
	SourceCatalog  = "catalog"
	SourceCard     = "card"
	SourceRegistry = "registry"
)

// SourceKind names the kind of source rec came from: SourceRegistry for a
// registry's server list, SourceCard for a bare A2A card at a well-known
// URI, SourceCatalog for anything a catalog listed.
func SourceKind(rec *Record) string {
	switch {
	case rec.Source.Via == ViaRegistry:
		return SourceRegistry
	case slices.Contains(rec.Variants, VariantWellKnownCard):
		return SourceCard
	}
	return SourceCatalog
}

// SourceRank orders source kinds for precedence: the higher wins. An
// unknown kind (a record stored before kinds were kept) ranks as a
// catalog, which is all there was.
func SourceRank(kind string) int {
	switch kind {
	case SourceRegistry:
		return 0
	case SourceCard:
		return 1
	}
	return 2
}

// Match key prefixes, strongest first: the artifact a record was read
// from, an endpoint it can be reached at, the repository it is built from.
const (
	keyArtifact   = "artifact "
	keyEndpoint   = "endpoint "
	keyRepository = "repository "
)

// MatchKeys returns what identifies rec's agent besides its identifier,
// strongest first: its artifact URL, the URLs of its endpoints (never a
// package-only binding or a URL template) and its repository URL (with its
// subfolder), each reduced by SameURLKey so spellings of one URL agree.
// Two records from different kinds of source that share a key are one
// agent (ingest merges them; see SourceKind).
func MatchKeys(rec *Record) []string {
	var keys []string
	add := func(prefix, u string) {
		if k, ok := SameURLKey(u); ok && !slices.Contains(keys, prefix+k) {
			keys = append(keys, prefix+k)
		}
	}
	add(keyArtifact, rec.URL)
	for _, b := range rec.Bindings {
		if !strings.Contains(b.URL, "{") {
			add(keyEndpoint, b.URL)
		}
	}
	if repo := repositoryURL(rec.Metadata["repository"]); repo != "" {
		add(keyRepository, repo)
	}
	return keys
}

// MatchTier is the strength of a match key: 0 for an artifact URL, 1 for
// an endpoint, 2 for a repository.
func MatchTier(key string) int {
	switch {
	case strings.HasPrefix(key, keyArtifact):
		return 0
	case strings.HasPrefix(key, keyEndpoint):
		return 1
	}
	return 2
}

// repositoryURL reads a repository as server.json writes it ({"url",
// "subfolder"}) or as a bare URL string.
func repositoryURL(v any) string {
	switch r := v.(type) {
	case string:
		return r
	case map[string]any:
		u, _ := r["url"].(string)
		if sub, _ := r["subfolder"].(string); u != "" && strings.Trim(sub, "/") != "" {
			u = strings.TrimRight(u, "/") + "/" + strings.Trim(sub, "/")
		}
		return u
	}
	return ""
}

// SameURLKey reduces an http(s) URL to the form two spellings of it share:
// scheme and host lower-case, the default port, a trailing slash, a
// fragment and a ".git" suffix dropped. ok is false for anything else.
func SameURLKey(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "", false
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if p := u.Port(); p != "" && !(u.Scheme == "https" && p == "443") && !(u.Scheme == "http" && p == "80") {
		host += ":" + p
	}
	p := strings.TrimSuffix(strings.TrimRight(u.EscapedPath(), "/"), ".git")
	k := strings.ToLower(u.Scheme) + "://" + host + p
	if u.RawQuery != "" {
		k += "?" + u.RawQuery
	}
	return k, true
}
