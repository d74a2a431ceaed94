package web

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/searchapi/door"
)

// NewDetail builds an entry's page from its record as GET
// /agents/{identifier} returns it (provenance under "provenance", this
// registry under "source").
func NewDetail(doc map[string]json.RawMessage, now time.Time) DetailView {
	x := decodeRecord(doc)
	v := DetailView{
		Result:          x.result(true, now, nil),
		FullDescription: x.Description,
		ArtifactURL:     door.SafeURL(x.URL),
		Version:         x.Version,
		UpdatedAt:       dateOf(x.UpdatedAt, now),
		Status:          x.Status,
		Skills:          x.Skills,
		Examples:        without(x.Examples, x.RepresentativeQueries),
		Queries:         x.RepresentativeQueries,
		RecordJSON:      indent(doc),
	}
	v.Bindings = door.ReadBindings(doc)
	v.tools(doc, now)
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
		v.Attestations = append(v.Attestations, Attestation{Type: a.Type, URL: door.SafeURL(a.URI)})
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
	v.Provenance = Provenance{Catalog: p.Catalog, CatalogURL: door.SafeURL(p.Catalog), Via: viaLabel(p.Via), Path: p.Path}
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

// maxToolsShown bounds the tools an entry's page lists.
const maxToolsShown = 100

// tools reads the record's tools for the page.
func (v *DetailView) tools(doc map[string]json.RawMessage, now time.Time) {
	var ts struct {
		Source    string    `json:"source"`
		ReadAt    time.Time `json:"readAt"`
		Listed    int       `json:"listed"`
		Truncated string    `json:"truncated"`
		Items     []struct {
			Name        string   `json:"name"`
			Description string   `json:"description"`
			Params      []string `json:"params"`
			Annotations struct {
				ReadOnlyHint    *bool `json:"readOnlyHint"`
				DestructiveHint *bool `json:"destructiveHint"`
			} `json:"annotations"`
		} `json:"items"`
		Problems []struct {
			Path string `json:"path"`
			Code string `json:"code"`
		} `json:"problems"`
	}
	field(doc, "tools", &ts)
	marked := map[string]bool{}
	for _, p := range ts.Problems {
		if p.Code == "instruction_like" {
			marked[p.Path] = true
		}
	}
	for i, t := range ts.Items {
		if i == maxToolsShown {
			break
		}
		tv := ToolView{Name: t.Name, Description: t.Description, Params: t.Params,
			Marked: marked["tools.items["+strconv.Itoa(i)+"].description"]}
		var hints []string
		if a := t.Annotations.ReadOnlyHint; a != nil && *a {
			hints = append(hints, "read-only")
		}
		if a := t.Annotations.DestructiveHint; a != nil && *a {
			hints = append(hints, "destructive")
		}
		tv.Hints = strings.Join(hints, ", ")
		v.Tools = append(v.Tools, tv)
	}
	switch {
	case len(v.Tools) == 0:
	case ts.Source == "tools/list":
		v.ToolsNote = "Listed by the server's endpoint " + dateOf(ts.ReadAt.Format(time.RFC3339), now) + "."
	default:
		v.ToolsNote = "Declared by its server card."
	}
	if ts.Truncated != "" || len(ts.Items) > maxToolsShown {
		v.ToolsNote += " The list is cut short (" + strconv.Itoa(min(len(ts.Items), maxToolsShown)) + " shown)."
	}
}
