package web

import (
	"cmp"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// siteQuery is the search page's state as its URL holds it:
// /?q=...&type=...&publisher=...&compliance=...&tag=...&verified=1&signed=1&live=1&federation=...&page=N.
// Repeated parameters combine as POST /search combines the same filters
// (type, publisher, compliance: any of them; tag: all of them).
type siteQuery struct {
	text       string
	types      []string
	publishers []string
	compliance []string
	tags       []string
	verified   bool
	signed     bool   // trust level signed only
	live       bool   // health up only
	federation string // "" (auto), or a mode federation.ParseMode accepts, as given
	page       int
}

// parseSiteQuery reads the page's URL. Unknown parameters are ignored
// (links carry tracking parameters); bad values of known ones are 400s.
func parseSiteQuery(v url.Values) (*siteQuery, error) {
	sq := &siteQuery{
		text:       strings.TrimSpace(v.Get("q")),
		types:      nonEmpty(v["type"]),
		publishers: nonEmpty(v["publisher"]),
		compliance: nonEmpty(v["compliance"]),
		tags:       nonEmpty(v["tag"]),
		page:       1,
	}
	for _, t := range []struct {
		name string
		on   *bool
	}{{"verified", &sq.verified}, {"signed", &sq.signed}, {"live", &sq.live}} {
		switch strings.ToLower(v.Get(t.name)) {
		case "", "0", "false", "off":
		case "1", "true", "on":
			*t.on = true
		default:
			return nil, door.Invalid("%s must be 1 or 0", t.name)
		}
	}
	if f := v.Get("federation"); f != "" {
		m, err := federation.ParseMode(f)
		if err != nil {
			return nil, door.Invalid("federation must be auto, referrals or none")
		}
		sq.federation = string(m)
	}
	if p := v.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, door.Invalid("page must be a whole number from 1")
		}
		sq.page = n
	}
	return sq, nil
}

func nonEmpty(vals []string) []string {
	var out []string
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// searchQuery translates the page's state into the POST /search request
// it stands for (with evidence, for the matched example) and validates it
// with the same parser.
func (sq *siteQuery) searchQuery() (*search.Query, error) {
	text := sq.text
	qb := search.QueryBody{
		Text: &text, Type: sq.types, Publisher: sq.publishers, Compliance: sq.compliance,
		RequiredTags: sq.tags, IncludeEvidence: true,
	}
	if sq.verified {
		qb.VerifiedOnly = &sq.verified
	}
	if sq.signed {
		qb.SignedOnly = &sq.signed
	}
	if sq.live {
		qb.LiveOnly = &sq.live
	}
	if sq.federation != "" {
		qb.Federation = &sq.federation
	}
	raw, err := json.Marshal(qb)
	if err != nil {
		return nil, err
	}
	return search.ParseRequest(&search.Request{Query: raw, PageSize: json.RawMessage(strconv.Itoa(PageSize))}, nil, true)
}

// page0 is the layout's part of every search page.
func (sq *siteQuery) page0() Page {
	p := Page{Title: sq.text, Query: sq.text, Federation: sq.federation, Section: "search"}
	for _, f := range sq.filters() {
		for _, v := range f.vals {
			p.Hidden = append(p.Hidden, Param{Name: f.param, Value: v})
		}
	}
	for _, t := range sq.toggles() {
		if t.on {
			p.Hidden = append(p.Hidden, Param{Name: t.param, Value: "1"})
		}
	}
	return p
}

// siteFacet is one facet of the page: its URL parameter, index field,
// heading and how a value is labelled.
type siteFacet struct {
	param, field, name string
	limit              int
	label              func(string) string
	vals               []string // selected, as the URL spells them
}

func (sq *siteQuery) filters() []siteFacet {
	typeLabel := func(v string) string { l, _ := TypeLabel(v); return l }
	same := func(s string) string { return s }
	return []siteFacet{
		{"type", normalize.FieldType, "Type", 8, typeLabel, sq.types},
		{"publisher", normalize.FieldPublisher, "Publisher", 10, same, sq.publishers},
		{"compliance", normalize.FieldCompliance, "Compliance", 10, strings.ToUpper, sq.compliance},
		{"tag", normalize.FieldTags, "Tags", 15, same, sq.tags},
	}
}

// matches reports whether a facet value is one the URL selected.
func (f siteFacet) matches(urlValue, facetValue string) bool {
	if f.param == "type" {
		return normalize.SameType(urlValue, facetValue)
	}
	return strings.EqualFold(strings.TrimSpace(urlValue), facetValue)
}

// siteFacetFields are the index fields the page counts over the search's
// candidates.
var siteFacetFields = []string{normalize.FieldType, normalize.FieldPublisher, normalize.FieldCompliance, normalize.FieldTags,
	normalize.FieldPublisherVerified, normalize.FieldTrustLevel, normalize.FieldHealthStatus}

// siteToggle is one on/off filter of the page: its URL parameter, label,
// whether it is on, and the facet count of the value it keeps.
type siteToggle struct {
	param, label string
	on           bool
	field, value string
}

// toggles are the page's on/off filters, in display order.
func (sq *siteQuery) toggles() []siteToggle {
	return []siteToggle{
		{"verified", "Verified publishers only", sq.verified, normalize.FieldPublisherVerified, "true"},
		{"signed", "Signed by the publisher", sq.signed, normalize.FieldTrustLevel, normalize.TrustSigned},
		{"live", "Endpoint up at the last check", sq.live, normalize.FieldHealthStatus, normalize.HealthUp},
	}
}

// facetCount is one value of a facet and how many entries have it.
type facetCount struct {
	value string
	count int
}

// sortedCounts orders m by count (then value), keeps the first limit (0:
// all) and any further value keep accepts.
func sortedCounts(m map[string]int, keep func(string) bool, limit int) []facetCount {
	all := make([]facetCount, 0, len(m))
	for v, n := range m {
		all = append(all, facetCount{v, n})
	}
	slices.SortFunc(all, func(a, b facetCount) int {
		if c := cmp.Compare(b.count, a.count); c != 0 {
			return c
		}
		return cmp.Compare(a.value, b.value)
	})
	if limit <= 0 || len(all) <= limit {
		return all
	}
	out := all[:limit:limit]
	for _, c := range all[limit:] {
		if keep != nil && keep(c.value) {
			out = append(out, c)
		}
	}
	return out
}

// facetGroups builds the facets and the toggles of a results page.
func (sq *siteQuery) facetGroups(vals url.Values, counts map[string]map[string]int) ([]FacetGroup, []FacetValue) {
	var groups []FacetGroup
	for _, f := range sq.filters() {
		selected := func(v string) (string, bool) {
			for _, u := range f.vals {
				if f.matches(u, v) {
					return u, true
				}
			}
			return "", false
		}
		g := FacetGroup{Name: f.name, Param: f.param}
		seen := map[string]bool{}
		for _, c := range sortedCounts(counts[f.field], func(v string) bool { _, ok := selected(v); return ok }, f.limit) {
			fv := FacetValue{Label: f.label(c.value), Count: c.count, URL: ToggleParam(vals, f.param, c.value)}
			if u, ok := selected(c.value); ok {
				fv.Selected, fv.URL = true, ToggleParam(vals, f.param, u)
				seen[u] = true
			}
			g.Values = append(g.Values, fv)
		}
		for _, u := range f.vals { // selected but counted nowhere: still removable
			if !seen[u] {
				g.Values = append(g.Values, FacetValue{Label: f.label(u), Selected: true, URL: ToggleParam(vals, f.param, u)})
			}
		}
		groups = append(groups, g)
	}
	var toggles []FacetValue
	for _, t := range sq.toggles() {
		fv := FacetValue{Label: t.label, Selected: t.on, Count: counts[t.field][t.value], URL: SetParam(vals, t.param, "1")}
		if t.on {
			fv.URL = SetParam(vals, t.param, "")
		}
		toggles = append(toggles, fv)
	}
	return groups, toggles
}

// active lists the filters in force, each with the link that removes it.
func (sq *siteQuery) active(vals url.Values) []FacetValue {
	var out []FacetValue
	for _, f := range sq.filters() {
		for _, u := range f.vals {
			out = append(out, FacetValue{Label: f.name + ": " + f.label(u), Selected: true, URL: ToggleParam(vals, f.param, u)})
		}
	}
	for _, t := range sq.toggles() {
		if t.on {
			out = append(out, FacetValue{Label: t.label, Selected: true, URL: SetParam(vals, t.param, "")})
		}
	}
	return out
}
