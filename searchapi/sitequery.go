package searchapi

import (
	"cmp"
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/web"
)

// siteQuery is the search page's state as its URL holds it:
// /?q=...&type=...&publisher=...&compliance=...&tag=...&verified=1&federation=...&page=N.
// Repeated parameters combine as POST /search combines the same filters
// (type, publisher, compliance: any of them; tag: all of them).
type siteQuery struct {
	text       string
	types      []string
	publishers []string
	compliance []string
	tags       []string
	verified   bool
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
	switch strings.ToLower(v.Get("verified")) {
	case "", "0", "false", "off":
	case "1", "true", "on":
		sq.verified = true
	default:
		return nil, invalid("verified must be 1 or 0")
	}
	if f := v.Get("federation"); f != "" {
		m, err := federation.ParseMode(f)
		if err != nil {
			return nil, invalid("federation must be auto, referrals or none")
		}
		sq.federation = string(m)
	}
	if p := v.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, invalid("page must be a whole number from 1")
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
func (sq *siteQuery) searchQuery() (*searchQuery, error) {
	text := sq.text
	qb := queryBody{
		Text: &text, Type: sq.types, Publisher: sq.publishers, Compliance: sq.compliance,
		RequiredTags: sq.tags, IncludeEvidence: true,
	}
	if sq.verified {
		qb.VerifiedOnly = &sq.verified
	}
	if sq.federation != "" {
		qb.Federation = &sq.federation
	}
	raw, err := json.Marshal(qb)
	if err != nil {
		return nil, err
	}
	return parseSearch(&searchBody{Query: raw, PageSize: json.RawMessage(strconv.Itoa(sitePageSize))}, nil, true)
}

// page0 is the layout's part of every search page.
func (sq *siteQuery) page0() web.Page {
	p := web.Page{Title: sq.text, Query: sq.text, Federation: sq.federation, Section: "search"}
	for _, f := range sq.filters() {
		for _, v := range f.vals {
			p.Hidden = append(p.Hidden, web.Param{Name: f.param, Value: v})
		}
	}
	if sq.verified {
		p.Hidden = append(p.Hidden, web.Param{Name: "verified", Value: "1"})
	}
	return p
}

// siteFacet is one facet of the page: its URL parameter, index field,
// heading and how a value is labelled.
type siteFacet struct {
	param, field, name string
	// disjunctive facets combine their values with OR: their counts leave
	// their own selection out, so the other values stay in view.
	disjunctive bool
	limit       int
	label       func(string) string
	vals        []string // selected, as the URL spells them
}

func (sq *siteQuery) filters() []siteFacet {
	typeLabel := func(v string) string { l, _ := web.TypeLabel(v); return l }
	same := func(s string) string { return s }
	return []siteFacet{
		{"type", normalize.FieldType, "Type", true, 8, typeLabel, sq.types},
		{"publisher", normalize.FieldPublisher, "Publisher", true, 10, same, sq.publishers},
		{"compliance", normalize.FieldCompliance, "Compliance", true, 10, strings.ToUpper, sq.compliance},
		{"tag", normalize.FieldTags, "Tags", false, 15, same, sq.tags},
	}
}

// matches reports whether a facet value is one the URL selected.
func (f siteFacet) matches(urlValue, facetValue string) bool {
	if f.param == "type" {
		return normalize.SameType(urlValue, facetValue)
	}
	return strings.EqualFold(strings.TrimSpace(urlValue), facetValue)
}

// facetCounts are the facet distributions of a search: base with every
// filter, without[field] with that field's own filter left out.
type facetCounts struct {
	base    map[string]map[string]int
	without map[string]map[string]int
	err     error
}

// groupKeys maps a facet's index field to the POST /search filter key the
// page sets for it.
var groupKeys = map[string]string{
	normalize.FieldType:       "type",
	normalize.FieldPublisher:  "publisher",
	normalize.FieldCompliance: "compliance",
}

// countFacets counts the facet values of q's keyword matches (what POST
// /explore counts) in one multi-search: all facets under every filter,
// and each selected disjunctive facet and the verified toggle under the
// other filters only.
func (s *Server) countFacets(ctx context.Context, q *searchQuery) facetCounts {
	fields := []string{normalize.FieldType, normalize.FieldPublisher, normalize.FieldCompliance, normalize.FieldTags, normalize.FieldPublisherVerified}
	reqs := []*meilisearch.SearchRequest{s.exploreSearch(q, fields)}
	owners := []string{""}
	for field, key := range groupKeys {
		i := slices.IndexFunc(q.Groups, func(g filterGroup) bool { return g.Key == key })
		if i < 0 {
			continue
		}
		other := *q
		other.Groups = slices.Delete(slices.Clone(q.Groups), i, i+1)
		reqs = append(reqs, s.exploreSearch(&other, []string{field}))
		owners = append(owners, field)
	}
	if q.VerifiedOnly {
		other := *q
		other.VerifiedOnly = false
		reqs = append(reqs, s.exploreSearch(&other, []string{normalize.FieldPublisherVerified}))
		owners = append(owners, normalize.FieldPublisherVerified)
	}
	for _, r := range reqs {
		r.IndexUID = s.cfg.Index
	}
	resp, err := s.cfg.Meili.MultiSearchWithContext(ctx, &meilisearch.MultiSearchRequest{Queries: reqs})
	if err != nil {
		return facetCounts{err: err}
	}
	fc := facetCounts{without: map[string]map[string]int{}}
	for i, res := range resp.Results {
		if i >= len(owners) {
			break
		}
		dist, err := decodeFacets(res.FacetDistribution)
		if err != nil {
			return facetCounts{err: err}
		}
		if owners[i] == "" {
			fc.base = dist
		} else {
			fc.without[owners[i]] = dist[owners[i]]
		}
	}
	return fc
}

// decodeFacets reads a Meilisearch facetDistribution.
func decodeFacets(raw json.RawMessage) (map[string]map[string]int, error) {
	dist := map[string]map[string]int{}
	if len(raw) == 0 {
		return dist, nil
	}
	if err := json.Unmarshal(raw, &dist); err != nil {
		return nil, err
	}
	return dist, nil
}

// counts returns the distribution a facet shows.
func (fc facetCounts) counts(field string, disjunctive bool) map[string]int {
	if m, ok := fc.without[field]; ok && disjunctive {
		return m
	}
	return fc.base[field]
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

// facetGroups builds the facets and the verified toggle of a results page.
func (sq *siteQuery) facetGroups(vals url.Values, fc facetCounts) ([]web.FacetGroup, web.FacetValue) {
	var groups []web.FacetGroup
	for _, f := range sq.filters() {
		selected := func(v string) (string, bool) {
			for _, u := range f.vals {
				if f.matches(u, v) {
					return u, true
				}
			}
			return "", false
		}
		counts := fc.counts(f.field, f.disjunctive)
		g := web.FacetGroup{Name: f.name, Param: f.param}
		seen := map[string]bool{}
		for _, c := range sortedCounts(counts, func(v string) bool { _, ok := selected(v); return ok }, f.limit) {
			fv := web.FacetValue{Label: f.label(c.value), Count: c.count, URL: web.ToggleParam(vals, f.param, c.value)}
			if u, ok := selected(c.value); ok {
				fv.Selected, fv.URL = true, web.ToggleParam(vals, f.param, u)
				seen[u] = true
			}
			g.Values = append(g.Values, fv)
		}
		for _, u := range f.vals { // selected but counted nowhere: still removable
			if !seen[u] {
				g.Values = append(g.Values, web.FacetValue{Label: f.label(u), Selected: true, URL: web.ToggleParam(vals, f.param, u)})
			}
		}
		groups = append(groups, g)
	}
	ver := web.FacetValue{Label: "Verified publishers only", Selected: sq.verified, Count: fc.counts(normalize.FieldPublisherVerified, true)["true"]}
	if sq.verified {
		ver.URL = web.SetParam(vals, "verified", "")
	} else {
		ver.URL = web.SetParam(vals, "verified", "1")
	}
	return groups, ver
}

// active lists the filters in force, each with the link that removes it.
func (sq *siteQuery) active(vals url.Values) []web.FacetValue {
	var out []web.FacetValue
	for _, f := range sq.filters() {
		for _, u := range f.vals {
			out = append(out, web.FacetValue{Label: f.name + ": " + f.label(u), Selected: true, URL: web.ToggleParam(vals, f.param, u)})
		}
	}
	if sq.verified {
		out = append(out, web.FacetValue{Label: "Verified publishers only", Selected: true, URL: web.SetParam(vals, "verified", "")})
	}
	return out
}
