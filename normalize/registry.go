package normalize

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// An MCP registry (the official one at registry.modelcontextprotocol.io, and
// every server of its API) lists servers as server.json documents, one per
// version, with the registry's own metadata beside each. This file reads its
// list pages and turns the versions of one server name into one Record.

// ViaRegistry says a record was read from an MCP registry's server list.
const ViaRegistry = "registry"

// OfficialMeta is the _meta member where the MCP Registry API puts its own
// metadata about a server version (status, isLatest, publishedAt, updatedAt).
const OfficialMeta = "io.modelcontextprotocol.registry/official"

// Registry status values of a server version.
const (
	RegistryActive     = "active"
	RegistryDeprecated = "deprecated"
	RegistryDeleted    = "deleted"
)

// RegistryPage is one page of a registry's server list.
type RegistryPage struct {
	// Servers holds the entries that could be read, in the page's order.
	Servers []RegistryEntry
	// NextCursor is metadata.nextCursor: empty on the last page.
	NextCursor string
	// Problems name the entries that could not be read (path "servers[3]").
	Problems []Problem
}

// RegistryEntry is one server version as a registry lists it.
type RegistryEntry struct {
	Name     string // the server's name, exactly as written ("io.github.owner/repo")
	Version  string // the version's string, as written
	Status   string // RegistryActive, RegistryDeprecated or RegistryDeleted
	IsLatest bool   // the registry marks this version the latest
	// UpdatedAt is when the registry last changed the entry (its updatedAt,
	// else publishedAt, else the old shapes' release date); zero if none.
	UpdatedAt time.Time
	// Server is the server.json as received; Meta the registry's _meta
	// beside it (nil in the shapes that held it inside the server).
	Server json.RawMessage
	Meta   json.RawMessage
	// Path locates the entry in its page ("servers[3]").
	Path string
}

// ReadRegistryPage reads one page of a registry's server list: the v0.1
// and v0 shape {"servers": [{"server": {...}, "_meta": {...}}], "metadata":
// {"nextCursor": ...}}, the same with servers written flat (the 2025-07-09
// API, registry metadata inside each server), and a bare array of servers
// (the May 2025 seed file). A body that is none of those is an error; an
// entry that cannot be read is a problem, and its siblings are kept.
func ReadRegistryPage(body []byte) (RegistryPage, error) {
	var page RegistryPage
	body = TrimBOM(bytes.TrimSpace(body))
	var list []json.RawMessage
	switch {
	case len(body) > 0 && body[0] == '[':
		if err := json.Unmarshal(body, &list); err != nil {
			return page, fmt.Errorf("registry page: %w", err)
		}
	default:
		var doc struct {
			Servers  *[]json.RawMessage `json:"servers"`
			Metadata struct {
				NextCursor  any `json:"nextCursor"`
				NextCursor2 any `json:"next_cursor"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			return page, fmt.Errorf("registry page: %w", err)
		}
		if doc.Servers == nil {
			return page, fmt.Errorf("registry page: no servers list")
		}
		list = *doc.Servers
		page.NextCursor = cursorString(doc.Metadata.NextCursor, doc.Metadata.NextCursor2)
	}
	for i, raw := range list {
		path := "servers[" + itoa(i) + "]"
		e, err := readRegistryEntry(raw)
		if err != nil {
			page.Problems = append(page.Problems, Problem{Path: path, Code: CodeInvalidArtifact, Severity: SeverityError, Message: err.Error()})
			continue
		}
		e.Path = path
		page.Servers = append(page.Servers, e)
	}
	return page, nil
}

// cursorString is the first cursor given as a string or a number.
func cursorString(vs ...any) string {
	for _, v := range vs {
		switch c := v.(type) {
		case string:
			if c != "" {
				return c
			}
		case float64:
			return fmt.Sprint(c)
		}
	}
	return ""
}

// readRegistryEntry reads one item of a server list.
func readRegistryEntry(raw json.RawMessage) (RegistryEntry, error) {
	item, ok := decodeObject(raw)
	if !ok {
		return RegistryEntry{}, fmt.Errorf("server entry is not a JSON object")
	}
	var e RegistryEntry
	server := item
	e.Server = raw
	if s, ok := item["server"].(map[string]any); ok {
		var wrapped struct {
			Server json.RawMessage `json:"server"`
			Meta   json.RawMessage `json:"_meta"`
		}
		if err := json.Unmarshal(raw, &wrapped); err != nil {
			return e, fmt.Errorf("server entry: %w", err)
		}
		server, e.Server, e.Meta = s, wrapped.Server, wrapped.Meta
	}
	e.Name = getStr(server, "name")
	if e.Name == "" {
		return e, fmt.Errorf("server has no name")
	}
	e.Version = firstOf(getStr(server, "version"), getStr(getObj(server, "version_detail"), "version"))
	official := getObj(getObj(item, "_meta"), OfficialMeta)
	if official == nil { // before 2025-09-29 the registry wrote it inside the server
		official = getObj(getObj(server, "_meta"), OfficialMeta)
	}
	detail := getObj(server, "version_detail")
	e.Status = strings.ToLower(firstOf(getStr(official, "status"), getStr(server, "status"), RegistryActive))
	e.IsLatest = isTrue(official, "isLatest") || isTrue(official, "is_latest") || isTrue(detail, "is_latest")
	e.UpdatedAt = firstTime(getStr(official, "updatedAt"), getStr(official, "updated_at"), getStr(official, "statusChangedAt"),
		getStr(official, "publishedAt"), getStr(official, "published_at"), getStr(detail, "release_date"))
	return e, nil
}

func isTrue(obj map[string]any, k string) bool {
	v, _ := obj[k].(bool)
	return v
}

// firstTime parses the first RFC 3339 timestamp among ts.
func firstTime(ts ...string) time.Time {
	for _, s := range ts {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// RegistryOptions say which registry listed a server.
type RegistryOptions struct {
	Registry string    // the registry's base URL ("https://registry.modelcontextprotocol.io")
	Now      time.Time // fetch time, stored as Source.FetchedAt
}

// RegistryServerURL is the URL of a server's latest version on a registry:
// the source a registry record is kept under.
func RegistryServerURL(registry, name string) string {
	return strings.TrimSuffix(registry, "/") + "/v0.1/servers/" + url.PathEscape(name) + "/versions/latest"
}

// LatestVersion picks the version a registry record shows among versions
// of one server: leaving deleted ones out, the one the registry marks
// latest, else the highest semantic version, else the most recently
// updated, else the last listed. ok is false when every version is deleted.
func LatestVersion(versions []RegistryEntry) (best RegistryEntry, ok bool) {
	for _, v := range versions {
		if v.Status == RegistryDeleted {
			continue
		}
		if !ok || newerVersion(v, best) {
			best, ok = v, true
		}
	}
	return best, ok
}

// newerVersion reports whether version a should be shown rather than b.
func newerVersion(a, b RegistryEntry) bool {
	if a.IsLatest != b.IsLatest {
		return a.IsLatest
	}
	sa, sb := semverOf(a.Version), semverOf(b.Version)
	if sa != "" && sb != "" && semver.Compare(sa, sb) != 0 {
		return semver.Compare(sa, sb) > 0
	}
	if sa != "" && sb == "" {
		return true
	}
	if sa == "" && sb != "" {
		return false
	}
	return !a.UpdatedAt.Before(b.UpdatedAt)
}

// semverOf returns v as golang.org/x/mod/semver wants it ("v1.2.3"), or ""
// when it is not a semantic version.
func semverOf(v string) string {
	if v == "" {
		return ""
	}
	if v[0] != 'v' {
		v = "v" + v
	}
	if !semver.IsValid(v) {
		return ""
	}
	return v
}

// RegistryRecord builds the one record of a server name from the versions
// of it a registry listed: the latest version's server.json mapped (title,
// description, version, websiteUrl, repository, icons, remotes, packages),
// the server.json kept as received in Data and the registry's _meta in
// Metadata, every version seen listed. The identifier is the server's name
// exactly as written, never a URN of ours; the publisher comes from its
// reverse-DNS namespace, and trust says the registry checked that namespace.
// ok is false when every version is deleted: the record should go.
func RegistryRecord(versions []RegistryEntry, o RegistryOptions) (rec Record, probs []Problem, ok bool) {
	best, ok := LatestVersion(versions)
	if !ok {
		return Record{}, nil, false
	}
	rec = Record{
		Identifier: best.Name,
		Type:       TypeMCP,
		Data:       best.Server,
		Version:    best.Version,
		Status:     RegistryActive,
		Publisher:  RegistryPublisher(best.Name),
		Trust:      &Trust{Level: TrustRegistry},
		Variants:   []string{"mcp-registry"},
		Source: Source{Catalog: RegistryServerURL(o.Registry, best.Name), Via: ViaRegistry,
			Path: []string{strings.TrimSuffix(o.Registry, "/")}, FetchedAt: o.Now},
	}
	if best.Status == RegistryDeprecated {
		rec.Status = RegistryDeprecated
	}
	if !best.UpdatedAt.IsZero() {
		rec.UpdatedAt = best.UpdatedAt.Format(time.RFC3339)
	}
	for _, v := range versions {
		if v.Status != RegistryDeleted && v.Version != "" {
			rec.Versions = appendUnique(rec.Versions, v.Version)
		}
	}
	if meta, ok := decodeObject(best.Meta); ok {
		rec.Metadata = meta
	}
	server := decodeAnyObject(best.Server)
	rec.DisplayName = firstOf(getStr(server, "title"), best.Name[strings.LastIndexByte(best.Name, '/')+1:])
	probs = mapArtifact(&rec, TypeMCP, best.Server, true)
	m := &mapper{rec: &rec}
	m.registryExtras(server)
	probs = append(probs, m.probs...)
	for i := range probs {
		probs[i].Path = best.Path + ".server" + pathSuffix(probs[i].Path)
	}
	// The record changes when its server.json, the registry's metadata
	// (status, isLatest) or the versions seen do.
	sum := sha256.Sum256([]byte(ContentHash(best.Server) + " " + ContentHash(best.Meta) + " " + strings.Join(rec.Versions, ",")))
	rec.ContentHash = hex.EncodeToString(sum[:])
	return rec, probs, true
}

func decodeAnyObject(raw []byte) map[string]any {
	m, _ := decodeObject(raw)
	return m
}

// registryExtras maps what a registry's server.json says beyond the MCP
// mapping: the website, the repository and the icons, into Metadata as
// received.
func (m *mapper) registryExtras(s map[string]any) {
	r := m.rec
	set := func(k string, v any) {
		if v == nil {
			return
		}
		if r.Metadata == nil {
			r.Metadata = map[string]any{}
		}
		r.Metadata[k] = v
	}
	set("websiteUrl", nonEmpty(camelOrSnake(s, "websiteUrl")))
	set("repository", s["repository"])
	set("icons", s["icons"])
}

func nonEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// RegistryPublisher derives a publisher from a server name's reverse-DNS
// namespace (the part before the slash): "com.example" gives "example.com",
// "io.github.owner" gives "github.com/owner" (GitHub accounts own their
// namespace, not a domain). A name without a dotted namespace gives "".
func RegistryPublisher(name string) string {
	ns, _, ok := strings.Cut(name, "/")
	if !ok {
		return ""
	}
	labels := strings.Split(strings.ToLower(ns), ".")
	if len(labels) < 2 {
		return ""
	}
	if len(labels) >= 3 && labels[0] == "io" && labels[1] == "github" {
		return "github.com/" + strings.Join(labels[2:], ".")
	}
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	d := strings.Join(labels, ".")
	if !validDomain(d) {
		return ""
	}
	return d
}
