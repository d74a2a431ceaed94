package web

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/searchapi/door"
)

// entry is the part of a search result or record the pages read. Fields
// that fail to decode stay empty: a malformed upstream value never breaks
// the page.
type entry struct {
	Identifier            string
	DisplayName           string
	Type                  string
	URL                   string
	Description           string
	Tags                  []string
	Capabilities          []string
	RepresentativeQueries []string
	Examples              []string
	Skills                []string
	Version               string
	UpdatedAt             string
	Publisher             string
	PublisherVerified     bool
	Compliance            []string
	Status                string
	IndexedAt             time.Time
	Trust                 struct {
		Level     string    `json:"level"`
		Signer    string    `json:"signer"`
		CheckedAt time.Time `json:"checkedAt"`
		Problems  []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"problems"`
	}
	Health struct {
		Status    string    `json:"status"`
		CheckedAt time.Time `json:"checkedAt"`
		LatencyMs int64     `json:"latencyMs"`
		Detail    string    `json:"detail"`
	}
	Score    float64
	Source   string
	Evidence struct {
		MatchedExamples []struct {
			Text string `json:"text"`
			Kind string `json:"kind"`
		} `json:"matchedExamples"`
	}
}

// field decodes e[name] into v, leaving v as it is when absent or invalid.
func field(e map[string]json.RawMessage, name string, v any) {
	if raw, ok := e[name]; ok && len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		_ = json.Unmarshal(raw, v)
	}
}

// decodeEntry reads what a result shows; decodeRecord adds what only an
// entry's page shows.
func decodeEntry(e map[string]json.RawMessage) entry {
	var x entry
	field(e, "identifier", &x.Identifier)
	field(e, "displayName", &x.DisplayName)
	field(e, "type", &x.Type)
	field(e, "description", &x.Description)
	field(e, "tags", &x.Tags)
	field(e, "capabilities", &x.Capabilities)
	field(e, "publisher", &x.Publisher)
	field(e, "publisherVerified", &x.PublisherVerified)
	field(e, "compliance", &x.Compliance)
	field(e, "indexedAt", &x.IndexedAt)
	field(e, "trust", &x.Trust)
	field(e, "health", &x.Health)
	field(e, "score", &x.Score)
	field(e, "source", &x.Source)
	field(e, "evidence", &x.Evidence)
	return x
}

func decodeRecord(e map[string]json.RawMessage) entry {
	x := decodeEntry(e)
	field(e, "url", &x.URL)
	field(e, "representativeQueries", &x.RepresentativeQueries)
	field(e, "examples", &x.Examples)
	field(e, "skills", &x.Skills)
	field(e, "version", &x.Version)
	field(e, "updatedAt", &x.UpdatedAt)
	field(e, "status", &x.Status)
	return x
}

// descriptionRunes bounds the one-line description of a result.
const descriptionRunes = 220

// NewResult builds a result from a search result entry (the JSON POST
// /search returns). local marks this registry's own entries, which get a
// detail page; match marks the query's words in the matched example.
func NewResult(e map[string]json.RawMessage, local bool, now time.Time, match func(word string) bool) Result {
	x := decodeEntry(e)
	return x.result(local, now, match)
}

func (x entry) result(local bool, now time.Time, match func(string) bool) Result {
	r := Result{
		Identifier:   x.Identifier,
		Name:         x.DisplayName,
		Description:  OneLine(x.Description, descriptionRunes),
		Publisher:    x.Publisher,
		Verified:     x.PublisherVerified,
		Compliance:   specific(x.Compliance),
		Tags:         x.Tags,
		Capabilities: x.Capabilities,
		Source:       x.Source,
		SourceURL:    door.SafeURL(x.Source),
		Relevance:    int(max(0, min(100, x.Score))),
		Local:        local,
	}
	if r.Name == "" {
		r.Name = x.Identifier
	}
	r.TypeLabel, r.TypeClass = TypeLabel(x.Type)
	if local && x.Identifier != "" {
		r.DetailURL = DetailPath(x.Identifier)
	}
	if ex := x.Evidence.MatchedExamples; len(ex) > 0 && ex[0].Text != "" {
		r.Match = Highlight(OneLine(ex[0].Text, descriptionRunes), match)
		r.MatchKind = "example"
		if ex[0].Kind == "representativeQuery" {
			r.MatchKind = "representative query"
		}
	}
	if !x.IndexedAt.IsZero() {
		r.Indexed = Ago(x.IndexedAt, now)
		r.IndexedAt = isoTime(x.IndexedAt)
	}
	r.Trust, r.Health = x.trustView(now), x.healthView(now)
	return r
}

// trustLabels and healthLabels say levels and statuses in words.
var (
	trustLabels = map[string]string{
		"signed":   "signed by the publisher",
		"domain":   "served from the publisher's domain",
		"registry": "namespace checked by an MCP registry",
		"none":     "neither signed nor served from the publisher's domain",
	}
	healthLabels = map[string]string{
		"up":            "endpoint up",
		"down":          "endpoint down",
		"auth_required": "endpoint needs credentials",
		"not_mcp":       "endpoint is not an MCP server",
		"template":      "endpoint URL is a template",
		"unknown":       "endpoint not checked",
	}
)

func (x entry) trustView(now time.Time) TrustView {
	t := x.Trust
	v := TrustView{Level: t.Level, Label: trustLabels[t.Level], Signer: t.Signer}
	if v.Label == "" {
		v.Level, v.Label = "", "" // an upstream's unknown level is not shown as one of ours
	}
	if !t.CheckedAt.IsZero() {
		v.Checked, v.At = Ago(t.CheckedAt, now), isoTime(t.CheckedAt)
	}
	for _, p := range t.Problems {
		v.Problems = append(v.Problems, joinNonEmpty(p.Message, "("+p.Code+")"))
	}
	switch {
	case v.Level == "signed":
		v.Short = v.Label
	case v.Level != "" && len(t.Problems) > 0:
		v.Short = "trust check failed"
		v.Label = v.Level + ": a signature or digest check failed"
	}
	return v
}

func (x entry) healthView(now time.Time) HealthView {
	h := x.Health
	v := HealthView{Status: h.Status, Label: healthLabels[h.Status], Latency: h.LatencyMs, Detail: h.Detail}
	if v.Label == "" {
		v.Status = ""
	}
	if !h.CheckedAt.IsZero() {
		v.Checked, v.At = Ago(h.CheckedAt, now), isoTime(h.CheckedAt)
		if h.Status == "unknown" {
			// Probed, but not up and not yet down (or the probe was not
			// allowed): "not checked" would contradict the check shown.
			v.Label = "endpoint not confirmed"
		}
	}
	return v
}

// DetailPath is the path of an entry's page: /agents/ and the identifier,
// escaped as one path segment.
func DetailPath(identifier string) string {
	return "/agents/" + url.PathEscape(identifier)
}

// specific leaves out compliance families whose specific value is there
// too ("soc2" beside "soc2-type2").
func specific(values []string) []string {
	var out []string
	for _, v := range values {
		family := false
		for _, w := range values {
			if strings.HasPrefix(w, v+"-") {
				family = true
				break
			}
		}
		if !family {
			out = append(out, v)
		}
	}
	return out
}
