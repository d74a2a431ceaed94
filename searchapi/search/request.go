package search

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
)

const (
	// MaxTextRunes is the longest query text, in characters.
	MaxTextRunes    = 1000
	defaultPageSize = 10
	// MaxPageSize is the most results one page may ask for.
	MaxPageSize = 100
)

// StringList accepts a JSON string or an array of strings.
type StringList []string

// UnmarshalJSON reads a string, an array of strings or null.
func (l *StringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = StringList{s}
		return nil
	}
	if bytes.Equal(b, []byte("null")) {
		*l = nil
		return nil
	}
	var ss []string
	if err := json.Unmarshal(b, &ss); err != nil {
		return errors.New("want a string or an array of strings")
	}
	*l = ss
	return nil
}

// Request is POST /search as clients send it: the Agent Finder v0.4.2
// shape, the ARD v0.9 shape (federation at the root, query.filter) and the
// xu extensions. Unknown fields are ignored.
type Request struct {
	Query           json.RawMessage `json:"query"`
	Federation      *string         `json:"federation"`
	PageSize        json.RawMessage `json:"pageSize"`
	Limit           json.RawMessage `json:"limit"` // xu spelling of pageSize
	PageToken       string          `json:"pageToken"`
	IncludeEvidence bool            `json:"includeEvidence"`
	IncludeStale    bool            `json:"includeStale"`
	// MinScore is the lowest score a result may have (0..100); absent
	// means the server's default cut-off, 0 returns every result.
	MinScore json.RawMessage `json:"minScore"`
}

// QueryBody is the query member of a Request: the text, the filters as
// fields (Agent Finder, xu spellings) or as query.filter (ARD), and options.
type QueryBody struct {
	Text            *string                    `json:"text"`
	Type            StringList                 `json:"type"`
	Compliance      StringList                 `json:"compliance"`
	Publisher       StringList                 `json:"publisher"`
	Federation      *string                    `json:"federation"`
	Filter          map[string]json.RawMessage `json:"filter"`
	Constraints     map[string]json.RawMessage `json:"constraints"`
	Tags            StringList                 `json:"tags"`
	RequiredTags    StringList                 `json:"requiredTags"`
	ExcludedTags    StringList                 `json:"excludedTags"`
	PreferredTags   StringList                 `json:"preferredTags"`
	Skills          StringList                 `json:"skills"`
	Capabilities    StringList                 `json:"capabilities"`
	Protocols       StringList                 `json:"protocols"`
	VerifiedOnly    *bool                      `json:"verifiedOnly"`
	SignedOnly      *bool                      `json:"signedOnly"`
	LiveOnly        *bool                      `json:"liveOnly"`
	IncludeEvidence bool                       `json:"includeEvidence"`
	IncludeStale    bool                       `json:"includeStale"`

	// xu (draft-xu-efficient-agent-discovery-profile §5.1) spellings.
	RequiredTagsXu    StringList `json:"required_tags"`
	ExcludedTagsXu    StringList `json:"excluded_tags"`
	PreferredTagsXu   StringList `json:"preferred_tags"`
	IncludeEvidenceXu bool       `json:"include_evidence"`
}

// Query is a validated search.
type Query struct {
	Text          string
	Groups        []Group
	PreferredTags []string
	VerifiedOnly  bool
	IncludeStale  bool
	Evidence      bool
	Mode          federation.Mode
	PageSize      int
	PageToken     string
	// MaxIndexAge and MaxMetadataAge, when positive, are freshness
	// constraints (xu §4.8): only records indexed, or whose metadata was
	// updated, at most that long ago.
	MaxIndexAge    time.Duration
	MaxMetadataAge time.Duration
	// Attributes are record fields a binding needs in its results beyond
	// searchAttributes (they do not change which results match).
	Attributes []string
	// Facets are index fields whose values are counted over the search's
	// candidates (Answer.Facets); the web page sets them, the API
	// does not.
	Facets []string
	// MinScore is the request's own cut-off (0..100); nil leaves the
	// server's.
	MinScore *int
	// Access are the caller's groups, set by the door from the verified
	// credential, never from the request: every filter of the query ANDs
	// filter.Access(Access), so a caller without groups sees public
	// records only.
	Access []string
}

// DecodeJSON decodes a JSON request body into v; what is wrong with it is
// a KindInvalid error.
func DecodeJSON(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return invalid("request body is empty; want a JSON object")
	}
	if err := json.Unmarshal(body, v); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return invalid("field %s has the wrong type", ute.Field)
		}
		return invalid("request body is not valid JSON for this endpoint")
	}
	return nil
}

// ParseRequest validates a search body (b, decoded from raw). requireText
// is false for /explore.
// Each field is read by a helper of its own, in the order the errors are
// reported.
func ParseRequest(b *Request, raw []byte, requireText bool) (*Query, error) {
	qb, err := decodeQuery(b.Query, raw, requireText)
	if err != nil {
		return nil, err
	}
	q := &Query{
		PageToken:    b.PageToken,
		Evidence:     b.IncludeEvidence || qb.IncludeEvidence || qb.IncludeEvidenceXu,
		IncludeStale: b.IncludeStale || qb.IncludeStale,
	}
	if q.Text, err = ParseText(qb.Text, requireText); err != nil {
		return nil, err
	}
	if q.Mode, err = ParseFederation(b.Federation, qb.Federation); err != nil {
		return nil, err
	}
	if q.PageSize, err = ParsePageSize(b.PageSize, b.Limit); err != nil {
		return nil, err
	}
	if q.MinScore, err = parseMinScore(b.MinScore); err != nil {
		return nil, err
	}
	qb.RequiredTags = append(qb.RequiredTags, qb.RequiredTagsXu...)
	qb.ExcludedTags = append(qb.ExcludedTags, qb.ExcludedTagsXu...)
	preferred := append(qb.PreferredTags, qb.PreferredTagsXu...)
	if err := q.addFields(&qb); err != nil {
		return nil, err
	}
	if qb.VerifiedOnly != nil {
		q.VerifiedOnly = *qb.VerifiedOnly
	}
	if err := q.AddOptions(qb.SignedOnly != nil && *qb.SignedOnly, qb.LiveOnly != nil && *qb.LiveOnly); err != nil {
		return nil, err
	}
	for k := range qb.Constraints {
		return nil, unsupported("constraint %q is not supported", k)
	}
	more, err := q.addFilterObject(qb.Filter)
	if err != nil {
		return nil, err
	}
	q.SetPreferredTags(append(preferred, more...))
	return q, nil
}

// decodeQuery reads the query member: an object (the Agent Finder and ARD
// shapes), a string (the xu shape, whose other fields sit at the root of
// raw) or nothing, which only /explore accepts.
func decodeQuery(query json.RawMessage, raw []byte, requireText bool) (QueryBody, error) {
	var qb QueryBody
	switch t := bytes.TrimSpace(query); {
	case len(t) == 0 || bytes.Equal(t, []byte("null")):
		if requireText {
			return qb, invalid("query.text is required")
		}
	case t[0] == '"': // xu shape: "query": "text", the other fields at the root
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return qb, invalid("query is not valid")
		}
		if err := json.Unmarshal(raw, &qb); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) && ute.Field != "" {
				return qb, invalid("%s has the wrong type", ute.Field)
			}
			return qb, invalid("request body is not valid")
		}
		qb.Text = &s
	default:
		if err := json.Unmarshal(t, &qb); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) && ute.Field != "" {
				return qb, invalid("query.%s has the wrong type", ute.Field)
			}
			return qb, invalid("query must be an object with a text field")
		}
	}
	return qb, nil
}

// ParseText trims and checks query.text: present when required, valid
// UTF-8, at most MaxTextRunes characters.
func ParseText(text *string, requireText bool) (string, error) {
	var t string
	if text != nil {
		t = strings.TrimSpace(*text)
	}
	if requireText && t == "" {
		return "", invalid("query.text is required and must not be empty")
	}
	if !utf8.ValidString(t) {
		return "", invalid("query.text is not valid UTF-8")
	}
	if utf8.RuneCountInString(t) > MaxTextRunes {
		return "", invalid("query.text is longer than %d characters", MaxTextRunes)
	}
	return t, nil
}

// ParseFederation reads the federation mode, given at the root (ARD), in
// the query (Agent Finder) or both when they agree; none given is auto.
func ParseFederation(root, inQuery *string) (federation.Mode, error) {
	mode := ""
	if inQuery != nil {
		mode = *inQuery
	}
	if root != nil {
		if inQuery != nil && !strings.EqualFold(strings.TrimSpace(*root), strings.TrimSpace(*inQuery)) {
			return "", invalid("federation is given twice with different values")
		}
		mode = *root
	}
	return federation.ParseMode(mode)
}

// parseMinScore reads minScore: a number from 0 to 100 (a fraction is
// rounded up: a result must reach it), nil when absent.
func parseMinScore(raw json.RawMessage) (*int, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	var f float64
	if err := json.Unmarshal(t, &f); err != nil || f < 0 || f > 100 {
		return nil, invalid("minScore must be a number from 0 to 100")
	}
	v := int(math.Ceil(f))
	return &v, nil
}

// ParsePageSize reads pageSize (or its xu spelling limit): an integer from
// 1 to MaxPageSize, defaultPageSize when absent.
func ParsePageSize(pageSize, limit json.RawMessage) (int, error) {
	ps := pageSize
	if len(bytes.TrimSpace(ps)) == 0 {
		ps = limit
	}
	t := bytes.TrimSpace(ps)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return defaultPageSize, nil
	}
	var f float64
	if err := json.Unmarshal(t, &f); err != nil || f != math.Trunc(f) || f < 1 || f > MaxPageSize {
		return 0, invalid("pageSize must be an integer from 1 to %d", MaxPageSize)
	}
	return int(f), nil
}

// maxFilterValues caps the values of one filter.
const maxFilterValues = 64

// AddFilter adds the filter group key with vals; no values (or only empty
// ones) add nothing.
func (q *Query) AddFilter(key string, vals []string) error {
	if len(vals) == 0 {
		return nil
	}
	g, ok, err := newGroup(key, vals)
	if !ok {
		return unsupported("filter %q is not supported", key)
	}
	if err != nil {
		return err
	}
	if len(g.Vals) > 0 {
		if len(g.Vals) > maxFilterValues {
			return invalid("filter %q has more than %d values", key, maxFilterValues)
		}
		q.Groups = append(q.Groups, g)
	}
	return nil
}

// addFields adds the filters given as fields of the query object.
func (q *Query) addFields(qb *QueryBody) error {
	for _, kv := range []struct {
		key  string
		vals []string
	}{
		{"type", qb.Type}, {"compliance", qb.Compliance}, {"publisher", qb.Publisher},
		{"tags", qb.Tags}, {"requiredTags", qb.RequiredTags}, {"excludedTags", qb.ExcludedTags},
		{"skills", qb.Skills}, {"capabilities", qb.Capabilities}, {"protocols", qb.Protocols},
	} {
		if err := q.AddFilter(kv.key, kv.vals); err != nil {
			return err
		}
	}
	return nil
}

// AddOptions adds the filters signedOnly and liveOnly stand for: trust
// level signed, health up.
func (q *Query) AddOptions(signed, live bool) error {
	if signed {
		if err := q.AddFilter("trust.level", signedOnly); err != nil {
			return err
		}
	}
	if live {
		return q.AddFilter("health", liveOnly)
	}
	return nil
}

// addFilterObject adds the filters of query.filter (ARD), in key order. The
// verified flags and preferredTags are not filters: the first set
// VerifiedOnly, the second are returned; signedOnly and liveOnly add the
// filters they stand for.
func (q *Query) addFilterObject(filter map[string]json.RawMessage) (preferred []string, err error) {
	for _, k := range slices.Sorted(maps.Keys(filter)) {
		raw := filter[k]
		switch k {
		case "verifiedOnly", "publisherVerified", "verified":
			var v bool
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, invalid("query.filter.%s must be a boolean", k)
			}
			q.VerifiedOnly = q.VerifiedOnly || v
			continue
		case "signedOnly", "liveOnly":
			var v bool
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, invalid("query.filter.%s must be a boolean", k)
			}
			if err := q.AddOptions(v && k == "signedOnly", v && k == "liveOnly"); err != nil {
				return nil, err
			}
			continue
		case "preferredTags":
			var l StringList
			if err := json.Unmarshal(raw, &l); err != nil {
				return nil, invalid("query.filter.%s must be a string or an array of strings", k)
			}
			preferred = append(preferred, l...)
			continue
		}
		if _, ok := searchFilters[k]; !ok {
			return nil, unsupported("filter %q is not supported", k)
		}
		var l StringList
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, invalid("query.filter.%s must be a string or an array of strings", k)
		}
		if err := q.AddFilter(k, l); err != nil {
			return nil, err
		}
	}
	return preferred, nil
}

// SetPreferredTags keeps the distinct non-empty tags of tags, trimmed.
func (q *Query) SetPreferredTags(tags []string) {
	for _, t := range tags {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(q.PreferredTags, t) {
			q.PreferredTags = append(q.PreferredTags, t)
		}
	}
}

// normalized returns the canonical form of everything that decides which
// results a query has; page tokens are bound to it.
func (q *Query) normalized(kind string) string {
	var b strings.Builder
	b.WriteString(kind)
	b.WriteByte(0)
	b.WriteString(strings.Join(strings.Fields(strings.ToLower(q.Text)), " "))
	gs := make([]string, 0, len(q.Groups))
	for _, g := range q.Groups {
		vals := slices.Clone(g.Vals)
		for i := range vals {
			vals[i] = strings.ToLower(vals[i])
		}
		slices.Sort(vals)
		gs = append(gs, g.Key+"\x01"+strings.Join(vals, "\x02"))
	}
	slices.Sort(gs)
	for _, g := range gs {
		b.WriteByte(0)
		b.WriteString(g)
	}
	pt := slices.Clone(q.PreferredTags)
	slices.Sort(pt)
	b.WriteString("\x00p=" + strings.ToLower(strings.Join(pt, "\x02")))
	if q.VerifiedOnly {
		b.WriteString("\x00verified")
	}
	if q.IncludeStale {
		b.WriteString("\x00stale")
	}
	if q.MaxIndexAge > 0 || q.MaxMetadataAge > 0 {
		fmt.Fprintf(&b, "\x00age=%d/%d", q.MaxIndexAge/time.Second, q.MaxMetadataAge/time.Second)
	}
	if q.MinScore != nil {
		fmt.Fprintf(&b, "\x00min=%d", *q.MinScore)
	}
	b.WriteString(accessKey(q.Access))
	return b.String()
}

// federationQuery is the query as forwarded upstream.
func (q *Query) federationQuery() federation.Query {
	fq := federation.Query{Text: q.Text, PageSize: q.PageSize}
	var trust, health [][]string
	for _, g := range q.Groups {
		switch g.Field {
		case normalize.FieldTrustLevel:
			trust = append(trust, g.Vals)
			continue
		case normalize.FieldHealthStatus:
			health = append(health, g.Vals)
			continue
		}
		switch g.Key {
		case "type":
			fq.Type = append(fq.Type, g.Vals...)
		case "compliance":
			fq.Compliance = append(fq.Compliance, g.Vals...)
		case "publisher":
			fq.Publisher = append(fq.Publisher, g.Vals...)
		default:
			if fq.Filter == nil {
				fq.Filter = map[string][]string{}
			}
			fq.Filter[g.Key] = append(fq.Filter[g.Key], g.Vals...)
		}
	}
	fq.Trust, fq.Health = intersect(trust), intersect(health)
	fq.Verified = q.VerifiedOnly
	return fq
}
