package web

import (
	"encoding/json"
	"slices"
	"time"
)

// NewDetail builds an entry's page from its record as GET
// /agents/{identifier} returns it (provenance under "provenance", this
// registry under "source").
func NewDetail(doc map[string]json.RawMessage, now time.Time) DetailView {
	x := decodeRecord(doc)
	v := DetailView{
		Result:          x.result(true, now, nil),
		FullDescription: x.Description,
		ArtifactURL:     SafeURL(x.URL),
		Version:         x.Version,
		UpdatedAt:       dateOf(x.UpdatedAt, now),
		Status:          x.Status,
		Skills:          x.Skills,
		Examples:        without(x.Examples, x.RepresentativeQueries),
		Queries:         x.RepresentativeQueries,
		RecordJSON:      indent(doc),
	}
	v.Bindings = readBindings(doc)
	v.trust(doc)
	v.provenance(doc, now)
	v.Use = useIt(x, v.Bindings)
	return v
}

// trust reads the trust manifest: its identity, its attestations and the
// whole of it as indented JSON.
func (v *DetailView) trust(doc map[string]json.RawMessage) {
	raw, ok := doc["trustManifest"]
	if !ok || len(raw) == 0 || string(raw) == "null" {
		return
	}
	var tm struct {
		Identity     string `json:"identity"`
		Attestations []struct {
			Type string `json:"type"`
			URI  string `json:"uri"`
		} `json:"attestations"`
	}
	_ = json.Unmarshal(raw, &tm)
	v.TrustIdentity = tm.Identity
	for _, a := range tm.Attestations {
		v.Attestations = append(v.Attestations, Attestation{Type: a.Type, URL: SafeURL(a.URI)})
	}
	v.TrustJSON = indent(raw)
}

// provenance reads where the record came from.
func (v *DetailView) provenance(doc map[string]json.RawMessage, now time.Time) {
	var p struct {
		Catalog   string    `json:"catalog"`
		Via       string    `json:"via"`
		Path      []string  `json:"path"`
		FetchedAt time.Time `json:"fetchedAt"`
	}
	field(doc, "provenance", &p)
	v.Provenance = Provenance{Catalog: p.Catalog, CatalogURL: SafeURL(p.Catalog), Via: viaLabel(p.Via), Path: p.Path}
	if !p.FetchedAt.IsZero() {
		v.Provenance.Fetched = Ago(p.FetchedAt, now)
		v.Provenance.FetchedAt = isoTime(p.FetchedAt)
	}
}

// viaLabel says in words how a catalog was found.
func viaLabel(via string) string {
	switch via {
	case "wellknown":
		return "its /.well-known/ai-catalog.json"
	case "agentmap":
		return "an Agentmap line in robots.txt"
	case "linktag":
		return `a <link rel="ai-catalog"> tag in a web page`
	case "dns":
		return "a DNS SVCB record"
	case "seed":
		return "a configured seed"
	case "collection":
		return "a collection listed by another catalog"
	case "nested":
		return "an entry nested in another catalog"
	case "":
		return "an unrecorded route"
	}
	return via
}

// indent returns v as indented JSON ("" when it cannot be encoded).
func indent(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return ""
	}
	return string(b)
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
}

// dateOf shows an RFC 3339 time as its date and how long ago it was; other
// text is shown as published.
func dateOf(s string, now time.Time) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02") + " (" + Ago(t, now) + ")"
}

// without returns the items of list that are not in drop (the examples a
// page shows apart from the representative queries it shows already).
func without(list, drop []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(drop, s) {
			out = append(out, s)
		}
	}
	return out
}

// readBindings reads a record's bindings as the page shows them: URLs
// that are not safe links (and templates) are text, never links.
func readBindings(doc map[string]json.RawMessage) []Binding {
	var bindings []struct {
		Protocol  string   `json:"protocol"`
		URL       string   `json:"url"`
		Transport string   `json:"transport"`
		Package   string   `json:"package"`
		Template  bool     `json:"template"`
		Runtime   string   `json:"runtime"`
		Args      []string `json:"args"`
		Env       []string `json:"env"`
		Headers   []string `json:"headers"`
	}
	field(doc, "bindings", &bindings)
	var out []Binding
	for _, b := range bindings {
		u := SafeURL(b.URL)
		if b.Template {
			u = b.URL // shown as text to fill in, never as a link
		}
		out = append(out, Binding{Protocol: b.Protocol, URL: u, Transport: b.Transport, Package: b.Package,
			Template: b.Template, Runtime: b.Runtime, Args: b.Args, Env: b.Env, Headers: b.Headers})
		if b.URL != "" && u == "" {
			// Shown as text so nothing is hidden, never as a link.
			out[len(out)-1].Package = joinNonEmpty(b.Package, b.URL)
		}
	}
	return out
}
