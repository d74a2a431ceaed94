package registryapi

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
)

// record is the part of an index record the API shows.
type record struct {
	Identifier  string              `json:"identifier"`
	DisplayName string              `json:"displayName"`
	Type        string              `json:"type"`
	Data        json.RawMessage     `json:"data"`
	Description string              `json:"description"`
	Version     string              `json:"version"`
	Publisher   string              `json:"publisher"`
	Bindings    []normalize.Binding `json:"bindings"`
	Versions    []string            `json:"versions"`
	Status      string              `json:"status"`
	UpdatedAt   string              `json:"updatedAt"`
	IndexedAt   string              `json:"indexedAt"`
	Trust       json.RawMessage     `json:"trust"`
	Health      json.RawMessage     `json:"health"`
	Provenance  json.RawMessage     `json:"provenance"`
}

// extraAttributes are the record fields the door reads beyond the
// engine's own.
var extraAttributes = []string{"versions", "source"}

// recordOf reads an engine item (a stored record as the engine returns it).
func recordOf(item map[string]json.RawMessage) record {
	var r record
	field := func(k string, v any) {
		if raw, ok := item[k]; ok {
			_ = json.Unmarshal(raw, v) // a malformed field stays empty
		}
	}
	field("identifier", &r.Identifier)
	field("displayName", &r.DisplayName)
	field("type", &r.Type)
	field("description", &r.Description)
	field("version", &r.Version)
	field("publisher", &r.Publisher)
	field("bindings", &r.Bindings)
	field("versions", &r.Versions)
	field("status", &r.Status)
	field("updatedAt", &r.UpdatedAt)
	field("indexedAt", &r.IndexedAt)
	r.Data, r.Trust, r.Health, r.Provenance = item["data"], item["trust"], item["health"], item["provenance"]
	return r
}

// isMCP reports whether r is an MCP server (whichever spelling of the
// type its publisher used).
func (r record) isMCP() bool {
	return slices.Contains(filter.TypeSpellings(normalize.TypeMCP), r.Type)
}

// heldVersion reports whether v is a version of r this registry has seen.
func (r record) heldVersion(v string) bool { return slices.Contains(r.Versions, v) }

// MetaKey is this registry's namespace in each server's _meta.
const MetaKey = "io.agentfinder/record"

// ServerList is a list answer (the specification's ServerList).
type ServerList struct {
	Servers  []ServerResponse `json:"servers"`
	Metadata ListMetadata     `json:"metadata"`
}

// ListMetadata is a list answer's metadata: the cursor of the next page
// (absent on the last) and how many servers this page holds.
type ListMetadata struct {
	NextCursor string `json:"nextCursor,omitempty"`
	Count      int    `json:"count"`
}

// ServerResponse is one server: its server.json and this registry's _meta.
type ServerResponse struct {
	Server json.RawMessage            `json:"server"`
	Meta   map[string]json.RawMessage `json:"_meta"`
}

// Meta is what this registry says of a server under MetaKey.
type Meta struct {
	// Identifier is the record's identifier (a catalog entry's URN when the
	// server name was built from it).
	Identifier string `json:"identifier"`
	// Status is active, deprecated or stale (its catalog was not confirmed
	// by the latest crawl).
	Status string `json:"status"`
	// IsLatest is true: this registry keeps each server's latest version.
	IsLatest bool `json:"isLatest"`
	// UpdatedAt is when the publisher last changed it, IndexedAt when this
	// registry last wrote it.
	UpdatedAt string `json:"updatedAt,omitempty"`
	IndexedAt string `json:"indexedAt,omitempty"`
	// Versions are the versions seen (an MCP registry's record).
	Versions []string `json:"versions,omitempty"`
	// Trust is the crawl's verdict (level, signer); Health the prober's
	// last look at its endpoint (status, checkedAt).
	Trust  json.RawMessage `json:"trust,omitempty"`
	Health json.RawMessage `json:"health,omitempty"`
	// Sources are where the record came from: the catalog or registry that
	// listed it and how it was found.
	Sources []json.RawMessage `json:"sources,omitempty"`
	// URL is the record's page on this registry.
	URL string `json:"url"`
}

// response is r as the API answers it.
func (d *Door) response(r record) ServerResponse {
	m := Meta{Identifier: r.Identifier, Status: firstNonEmpty(r.Status, "active"), IsLatest: true,
		UpdatedAt: r.UpdatedAt, IndexedAt: r.IndexedAt, Versions: r.Versions, Trust: r.Trust, Health: r.Health,
		URL: d.publicURL + "/agents/" + url.PathEscape(r.Identifier)}
	if len(r.Provenance) > 0 && string(r.Provenance) != "null" {
		m.Sources = []json.RawMessage{r.Provenance}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		raw = json.RawMessage(`{}`)
	}
	return ServerResponse{Server: r.ServerJSON(), Meta: map[string]json.RawMessage{MetaKey: raw}}
}

// namespaceDomain turns a server name's namespace back into the publisher
// domain a built name came from ("test.acme/x" -> "acme.test").
func namespaceDomain(name string) string {
	ns, _, _ := strings.Cut(name, "/")
	labels := strings.Split(strings.ToLower(ns), ".")
	slices.Reverse(labels)
	return strings.Join(labels, ".")
}
