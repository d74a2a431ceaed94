package searchapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/hybrid"
	"github.com/agentfinder/agentfinder/searchapi/query"
)

const (
	maxBodyBytes    = 64 << 10
	maxTextRunes    = 1000
	defaultPageSize = 10
	maxPageSize     = 100
)

// stringList accepts a JSON string or an array of strings.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = stringList{s}
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

// searchBody is POST /search as clients send it: the Agent Finder v0.4.2
// shape, the ARD v0.9 shape (federation at the root, query.filter) and the
// xu extensions. Unknown fields are ignored.
type searchBody struct {
	Query           json.RawMessage `json:"query"`
	Federation      *string         `json:"federation"`
	PageSize        json.RawMessage `json:"pageSize"`
	Limit           json.RawMessage `json:"limit"` // xu spelling of pageSize
	PageToken       string          `json:"pageToken"`
	IncludeEvidence bool            `json:"includeEvidence"`
	IncludeStale    bool            `json:"includeStale"`
}

type queryBody struct {
	Text            *string                    `json:"text"`
	Type            stringList                 `json:"type"`
	Compliance      stringList                 `json:"compliance"`
	Publisher       stringList                 `json:"publisher"`
	Federation      *string                    `json:"federation"`
	Filter          map[string]json.RawMessage `json:"filter"`
	Constraints     map[string]json.RawMessage `json:"constraints"`
	Tags            stringList                 `json:"tags"`
	RequiredTags    stringList                 `json:"requiredTags"`
	ExcludedTags    stringList                 `json:"excludedTags"`
	PreferredTags   stringList                 `json:"preferredTags"`
	Skills          stringList                 `json:"skills"`
	Capabilities    stringList                 `json:"capabilities"`
	Protocols       stringList                 `json:"protocols"`
	VerifiedOnly    *bool                      `json:"verifiedOnly"`
	IncludeEvidence bool                       `json:"includeEvidence"`
	IncludeStale    bool                       `json:"includeStale"`

	// xu (draft-xu-efficient-agent-discovery-profile §5.1) spellings.
	RequiredTagsXu    stringList `json:"required_tags"`
	ExcludedTagsXu    stringList `json:"excluded_tags"`
	PreferredTagsXu   stringList `json:"preferred_tags"`
	IncludeEvidenceXu bool       `json:"include_evidence"`
}

// searchQuery is a validated search.
type searchQuery struct {
	Text          string
	Groups        []filterGroup
	PreferredTags []string
	VerifiedOnly  bool
	IncludeStale  bool
	Evidence      bool
	Mode          federation.Mode
	PageSize      int
	PageToken     string
}

// decodeBody reads a JSON request body of at most maxBodyBytes into v and
// returns the raw body.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, invalid("request body exceeds %d bytes", maxBodyBytes)
		}
		return nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, invalid("request body is empty; want a JSON object")
	}
	if err := json.Unmarshal(body, v); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return nil, invalid("field %s has the wrong type", ute.Field)
		}
		return nil, invalid("request body is not valid JSON for this endpoint")
	}
	return body, nil
}

// parseMode reads a federation mode; "" is auto.
func parseMode(s string) (federation.Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return federation.ModeAuto, nil
	case "referrals", "referral":
		return federation.ModeReferrals, nil
	case "none":
		return federation.ModeNone, nil
	}
	return "", invalid("federation must be auto, referrals or none")
}

// parseSearch validates a search body. requireText is false for /explore.
func parseSearch(b *searchBody, raw []byte, requireText bool) (*searchQuery, error) {
	q := &searchQuery{PageSize: defaultPageSize, PageToken: b.PageToken, Evidence: b.IncludeEvidence, IncludeStale: b.IncludeStale}
	var qb queryBody
	switch t := bytes.TrimSpace(b.Query); {
	case len(t) == 0 || bytes.Equal(t, []byte("null")):
		if requireText {
			return nil, invalid("query.text is required")
		}
	case t[0] == '"': // xu shape: "query": "text", the other fields at the root
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, invalid("query is not valid")
		}
		if err := json.Unmarshal(raw, &qb); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) && ute.Field != "" {
				return nil, invalid("%s has the wrong type", ute.Field)
			}
			return nil, invalid("request body is not valid")
		}
		qb.Text = &s
	default:
		if err := json.Unmarshal(t, &qb); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) && ute.Field != "" {
				return nil, invalid("query.%s has the wrong type", ute.Field)
			}
			return nil, invalid("query must be an object with a text field")
		}
	}
	if qb.Text != nil {
		q.Text = strings.TrimSpace(*qb.Text)
	}
	if requireText && q.Text == "" {
		return nil, invalid("query.text is required and must not be empty")
	}
	if !utf8.ValidString(q.Text) {
		return nil, invalid("query.text is not valid UTF-8")
	}
	if utf8.RuneCountInString(q.Text) > maxTextRunes {
		return nil, invalid("query.text is longer than %d characters", maxTextRunes)
	}
	q.Evidence = q.Evidence || qb.IncludeEvidence || qb.IncludeEvidenceXu
	qb.RequiredTags = append(qb.RequiredTags, qb.RequiredTagsXu...)
	qb.ExcludedTags = append(qb.ExcludedTags, qb.ExcludedTagsXu...)
	qb.PreferredTags = append(qb.PreferredTags, qb.PreferredTagsXu...)
	q.IncludeStale = q.IncludeStale || qb.IncludeStale

	mode := ""
	if qb.Federation != nil {
		mode = *qb.Federation
	}
	if b.Federation != nil {
		if qb.Federation != nil && !strings.EqualFold(strings.TrimSpace(*b.Federation), strings.TrimSpace(*qb.Federation)) {
			return nil, invalid("federation is given twice with different values")
		}
		mode = *b.Federation
	}
	m, err := parseMode(mode)
	if err != nil {
		return nil, err
	}
	q.Mode = m

	ps := b.PageSize
	if len(bytes.TrimSpace(ps)) == 0 {
		ps = b.Limit
	}
	if t := bytes.TrimSpace(ps); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		var f float64
		if err := json.Unmarshal(t, &f); err != nil || f != math.Trunc(f) || f < 1 || f > maxPageSize {
			return nil, invalid("pageSize must be an integer from 1 to %d", maxPageSize)
		}
		q.PageSize = int(f)
	}

	add := func(key string, vals []string) error {
		if len(vals) == 0 {
			return nil
		}
		g, ok := newGroup(key, vals)
		if !ok {
			return unsupported("filter %q is not supported", key)
		}
		if len(g.Vals) > 0 {
			if len(g.Vals) > 64 {
				return invalid("filter %q has more than 64 values", key)
			}
			q.Groups = append(q.Groups, g)
		}
		return nil
	}
	for _, kv := range []struct {
		key  string
		vals []string
	}{
		{"type", qb.Type}, {"compliance", qb.Compliance}, {"publisher", qb.Publisher},
		{"tags", qb.Tags}, {"requiredTags", qb.RequiredTags}, {"excludedTags", qb.ExcludedTags},
		{"skills", qb.Skills}, {"capabilities", qb.Capabilities}, {"protocols", qb.Protocols},
	} {
		if err := add(kv.key, kv.vals); err != nil {
			return nil, err
		}
	}
	if qb.VerifiedOnly != nil {
		q.VerifiedOnly = *qb.VerifiedOnly
	}
	for k := range qb.Constraints {
		return nil, unsupported("constraint %q is not supported", k)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range qb.Filter {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		raw := qb.Filter[k]
		switch k {
		case "verifiedOnly", "publisherVerified", "verified":
			var v bool
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, invalid("query.filter.%s must be a boolean", k)
			}
			q.VerifiedOnly = q.VerifiedOnly || v
			continue
		case "preferredTags":
			var l stringList
			if err := json.Unmarshal(raw, &l); err != nil {
				return nil, invalid("query.filter.%s must be a string or an array of strings", k)
			}
			qb.PreferredTags = append(qb.PreferredTags, l...)
			continue
		}
		if _, ok := filterKeys[k]; !ok {
			return nil, unsupported("filter %q is not supported", k)
		}
		var l stringList
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, invalid("query.filter.%s must be a string or an array of strings", k)
		}
		if err := add(k, l); err != nil {
			return nil, err
		}
	}
	for _, t := range qb.PreferredTags {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(q.PreferredTags, t) {
			q.PreferredTags = append(q.PreferredTags, t)
		}
	}
	return q, nil
}

// normalized returns the canonical form of everything that decides which
// results a query has; page tokens are bound to it.
func (q *searchQuery) normalized(kind string) string {
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
	return b.String()
}

// filter returns the Meilisearch filter of the query's hard constraints.
func (s *Server) filter(q *searchQuery) string {
	parts := make([]string, 0, len(q.Groups)+2)
	for _, g := range q.Groups {
		parts = append(parts, g.expr())
	}
	if q.VerifiedOnly {
		parts = append(parts, normalize.FieldPublisherVerified+" = true")
	}
	if !q.IncludeStale {
		parts = append(parts, liveExpr(s.now()))
	}
	return andExpr(parts...)
}

// searchAttributes are the document fields a search retrieves: everything a
// result shows plus what evidence needs. Internal fields stay in the index.
var searchAttributes = []string{
	"identifier", "displayName", "type", "url", "data", "description", "tags", "capabilities",
	"representativeQueries", "version", "updatedAt", "metadata", "trustManifest",
	"publisher", "publisherVerified", "compliance", "protocols", "skills", "bindings",
	"status", "expiresAt", "indexedAt",
}

// evidenceAttributes are retrieved in addition when evidence is asked for.
var evidenceAttributes = []string{"examples"}

// matchingStrategy decides which documents match a multi-word query.
// Requests are long and conversational; "last" (Meilisearch's default) drops
// words from the end and always keeps the first one ("Can", "I", ...), while
// "frequency" drops the most frequent, least informative words first.
// Measured on ../shared/relevance dev_queries.jsonl (300 requests, keyword
// only, the interim normalize, no query rewriting): Recall@10 0.023 with
// "last" against 0.047 with "frequency" (0.067 against 0.163 when stop words
// are stripped first); "all" finds nothing. Query understanding (issue 9)
// tunes this further through Config.QueryRewriter.
const matchingStrategy = meilisearch.Frequency

// exploreSearch is /explore's one keyword Meilisearch request over the
// rewritten text: no hits, an exact total and the distribution of facets.
// POST /search ranks with the fused search of localSearch instead.
func (s *Server) exploreSearch(q *searchQuery, facets []string) *meilisearch.SearchRequest {
	text := q.Text
	if s.cfg.QueryRewriter != nil {
		if t := s.cfg.QueryRewriter(text); strings.TrimSpace(t) != "" {
			text = t
		}
	}
	zero := int64(0)
	return &meilisearch.SearchRequest{
		Query:            text,
		Page:             1,
		HitsPerPage:      &zero, // no hits, an exact total
		Filter:           nilIfEmpty(s.filter(q)),
		Facets:           facets,
		MatchingStrategy: matchingStrategy,
	}
}

func nilIfEmpty(f string) any {
	if f == "" {
		return nil
	}
	return f
}

// meiliHit is one hit as Meilisearch returns it: the retrieved fields plus
// _rankingScore and, with evidence, _rankingScoreDetails.
type meiliHit map[string]json.RawMessage

type meiliSearchResponse struct {
	Hits               []meiliHit      `json:"hits"`
	EstimatedTotalHits int64           `json:"estimatedTotalHits"`
	TotalHits          int64           `json:"totalHits"`
	FacetDistribution  json.RawMessage `json:"facetDistribution"`
}

// rawSearch runs req and decodes the answer.
func (s *Server) rawSearch(ctx context.Context, req *meilisearch.SearchRequest) (*meiliSearchResponse, error) {
	raw, err := s.index.SearchRawWithContext(ctx, req.Query, req)
	if err != nil {
		return nil, err
	}
	return decodeSearchResponse(*raw)
}

// preferredWeight is how much an entry carrying a preferred tag is boosted:
// its fused score is multiplied by this for ranking (the score it shows is
// not), so a preferred entry passes others scoring up to a third more, but
// not a much better match (xu §5.1: preferred tags are soft).
const preferredWeight = 1.5

// searchTerms returns the words searched one by one on the keyword side:
// the informative terms of the rewritten request (query.Analyze), or, with
// no rewriter or when none is left, the request's distinct words; at most
// query.MaxTerms.
func (s *Server) searchTerms(text string) []string {
	if s.cfg.QueryRewriter != nil {
		if t := query.Analyze(s.cfg.QueryRewriter(text)).SearchTerms(); len(t) > 0 {
			return t
		}
	}
	var out []string
	for _, w := range query.Words(text) {
		if !slices.Contains(out, w) {
			out = append(out, w)
			if len(out) == query.MaxTerms {
				break
			}
		}
	}
	return out
}

// queryVector embeds the request text as typed (the sentence model reads
// sentences; the rewritten keyword list embeds worse), once per request. It
// returns nil without an embedder or when embedding fails (keyword only).
func (s *Server) queryVector(ctx context.Context, text string) []float32 {
	if s.cfg.Embedder == nil || strings.TrimSpace(text) == "" {
		return nil
	}
	vecs, err := s.cfg.Embedder.Embed(ctx, []string{text})
	switch {
	case err == nil && len(vecs) == 1 && len(vecs[0]) > 0:
		return vecs[0]
	case ctx.Err() == nil:
		s.log.Warn("query embedding failed; keyword search only", "correlationId", correlationID(ctx), "err", err)
	}
	return nil
}

// newPlan prepares the fused search of q: its terms, its filter (applied
// to every sub-query), its preferred tags and its vector (nil: keyword only,
// never a semanticRatio of 0, which the Go client drops).
func (s *Server) newPlan(q *searchQuery, vec []float32) hybrid.Request {
	r := hybrid.Request{
		Index:         s.cfg.Index,
		Text:          q.Text,
		Terms:         s.searchTerms(q.Text),
		Vector:        vec,
		Filter:        nilIfEmpty(s.filter(q)),
		KeywordWeight: s.keywordWeight,
		IDField:       normalize.FieldIdentifier,
	}
	if len(q.PreferredTags) > 0 {
		r.Prefer = &hybrid.Preference{Field: normalize.FieldTags, Values: q.PreferredTags, Weight: preferredWeight}
	}
	return r
}

// shallowDepth is the sub-query depth of the first tier of results: what
// the relevance set was tuned with (query.SubQueryLimit hits per sub-query).
const shallowDepth = query.SubQueryLimit

// ranked returns the first n results of p's ranking (n <= maxSearchOffset+1)
// and whether more may follow. The ranking is two tiers, each fused
// deterministically: every result of the fusion of shallowDepth hits per
// sub-query, then the results of the fusion of maxSearchOffset+1 hits per
// sub-query not already listed. Every page slices the same sequence, so
// pages neither repeat nor skip results while the index does not change;
// the deep tier is fetched only by pages that reach past the first.
func (s *Server) ranked(ctx context.Context, r hybrid.Request, n int) ([]query.Scored, map[string]bool, error) {
	r.Limit = 0 // every fused result of shallowDepth hits per sub-query
	first, err := hybrid.Search(ctx, s.cfg.Meili, r)
	if err != nil {
		return nil, nil, err
	}
	if len(first.Hits) >= n {
		return first.Hits[:n], first.Preferred, nil
	}
	r.Limit = maxSearchOffset + 1
	deep, err := hybrid.Search(ctx, s.cfg.Meili, r)
	if err != nil {
		return nil, nil, err
	}
	seen := make(map[string]bool, len(first.Hits))
	out := slices.Clip(first.Hits)
	for _, h := range first.Hits {
		seen[h.ID] = true
	}
	for _, h := range deep.Hits {
		if len(out) == n {
			break
		}
		if !seen[h.ID] {
			out = append(out, h)
		}
	}
	pref := first.Preferred
	for id := range deep.Preferred {
		if pref == nil {
			pref = map[string]bool{}
		}
		pref[id] = true
	}
	return out, pref, nil
}

// localSearch answers q from the index, starting at offset. It returns the
// hits as federation hits and the offset of the next page (0 when done).
func (s *Server) localSearch(ctx context.Context, q *searchQuery, offset int) ([]federation.Hit, int, error) {
	limit := q.PageSize
	if offset+limit > maxSearchOffset {
		limit = maxSearchOffset - offset
	}
	if limit <= 0 {
		return nil, 0, nil
	}
	vec := s.queryVector(ctx, q.Text)
	p := s.newPlan(q, vec)
	scored, preferred, err := s.ranked(ctx, p, offset+limit+1)
	if err != nil {
		return nil, 0, err
	}
	next := 0
	if len(scored) > offset+limit {
		next = offset + limit
		scored = scored[:offset+limit]
	}
	if offset >= len(scored) {
		return nil, next, nil
	}
	page := scored[offset:]
	ids := make([]string, len(page))
	for i, h := range page {
		ids[i] = h.ID
	}
	attrs := searchAttributes
	if q.Evidence {
		attrs = append(slices.Clip(attrs), evidenceAttributes...)
	}
	docs, err := hybrid.Fetch(ctx, s.cfg.Meili, s.cfg.Index, normalize.FieldIdentifier, ids, attrs, q.Evidence && vec != nil)
	if err != nil {
		return nil, 0, err
	}
	byID := make(map[string]meilisearch.Hit, len(docs))
	for _, d := range docs {
		var id string
		_ = json.Unmarshal(d[normalize.FieldIdentifier], &id)
		byID[id] = d
	}
	var qt []string
	if q.Evidence {
		qt = terms(q.Text)
	}
	hits := make([]federation.Hit, 0, len(page))
	for _, sc := range page {
		d, ok := byID[sc.ID]
		if !ok {
			continue // removed since the search: leave it out, keep the order
		}
		hits = append(hits, s.toHit(meiliHit(d), q, qt, sc, vec, preferred[sc.ID]))
	}
	return hits, next, nil
}

// toHit turns a fetched document and its fused score into a result entry.
func (s *Server) toHit(h meiliHit, q *searchQuery, qterms []string, sc query.Scored, vec []float32, preferred bool) federation.Hit {
	score := scoreOf(sc.Score)
	if q.Evidence {
		examples := h["examples"]
		vectors := h["_vectors"]
		delete(h, "examples")
		delete(h, "_vectors")
		h["evidence"] = mustJSON(buildEvidence(h, examples, vectors, q, qterms, sc, vec, preferred))
	}
	delete(h, "_vectors")
	h["score"] = json.RawMessage(strconv.Itoa(score))
	h["source"] = s.sourceJSON
	var id string
	_ = json.Unmarshal(h["identifier"], &id)
	return federation.Hit{
		Identifier: id,
		Entry:      h,
		Score:      float64(score),
		Source:     s.publicURL,
		Verified:   bytes.Equal(h["publisherVerified"], []byte("true")),
		Local:      true,
	}
}

// scoreOf maps Meilisearch's ranking score (0..1) to 0..100.
func scoreOf(rs float64) int {
	v := int(math.Round(rs * 100))
	return max(0, min(100, v))
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// writeSearch writes POST /search's answer: {"results", "referrals",
// "upstreams" (federating modes only), "pageToken"}. Entries are written key
// by key (sorted, as encoding/json would) from their raw JSON values, which
// come from Meilisearch or from json.Marshal: re-encoding them through
// encoding/json would validate and compact every byte again, a cost the
// latency budget of the endpoint cannot carry. Values of upstream entries
// are checked with json.Valid first and dropped when invalid.
func writeSearch(w http.ResponseWriter, hits []federation.Hit, referrals []json.RawMessage, upstreams []federation.Outcome, withUpstreams bool, pageToken string) {
	buf := bytes.NewBuffer(make([]byte, 0, 1024+len(hits)*1024))
	buf.WriteString(`{"results":[`)
	n := 0
	keys := make([]string, 0, 32)
	for _, h := range hits {
		if h.Entry == nil {
			continue
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		keys = keys[:0]
		for k := range h.Entry {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf.WriteByte('{')
		first := true
		for _, k := range keys {
			v := h.Entry[k]
			if len(v) == 0 || (!h.Local && !json.Valid(v)) {
				continue
			}
			if !first {
				buf.WriteByte(',')
			}
			first = false
			writeJSONString(buf, k)
			buf.WriteByte(':')
			buf.Write(v)
		}
		buf.WriteByte('}')
	}
	buf.WriteString(`],"referrals":`)
	writeMarshal(buf, referrals, "[]")
	if withUpstreams {
		buf.WriteString(`,"upstreams":`)
		writeMarshal(buf, upstreams, "[]")
	}
	if pageToken != "" {
		buf.WriteString(`,"pageToken":`)
		writeJSONString(buf, pageToken)
	}
	buf.WriteString("}\n")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

// writeMarshal writes v as JSON, or empty when v is a nil slice or fails.
func writeMarshal[T any](buf *bytes.Buffer, v []T, empty string) {
	if len(v) == 0 {
		buf.WriteString(empty)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		buf.WriteString(empty)
		return
	}
	buf.Write(b)
}

// writeJSONString writes s as a JSON string.
func writeJSONString(buf *bytes.Buffer, s string) {
	simple := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			simple = false
			break
		}
	}
	if simple {
		buf.WriteByte('"')
		buf.WriteString(s)
		buf.WriteByte('"')
		return
	}
	b, _ := json.Marshal(s)
	buf.Write(b)
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) error {
	var body searchBody
	raw, err := decodeBody(w, r, &body)
	if err != nil {
		return err
	}
	q, err := parseSearch(&body, raw, true)
	if err != nil {
		return err
	}
	norm := q.normalized("search")
	via := federation.ParseVia(r.Header.Values("Via"))
	mode := q.Mode
	for _, v := range via {
		if viaKey(v) == viaKey(s.viaName) || viaKey(v) == viaKey(s.publicURL) {
			mode = federation.ModeNone // we are in the chain already: answer locally, never fan out again
		}
	}
	// local answers one page from the index; the page token is ours.
	local := func(ctx context.Context, _ federation.Query, pageToken string) ([]federation.Hit, string, error) {
		offset := 0
		if pageToken != "" {
			var err error
			if offset, err = s.tokens.decode(norm, pageToken); err != nil {
				return nil, "", err
			}
		}
		hits, next, err := s.localSearch(ctx, q, offset)
		if err != nil {
			return nil, "", err
		}
		tok := ""
		if next > 0 {
			tok = s.tokens.encode(norm, next)
		}
		return hits, tok, nil
	}
	if mode == federation.ModeNone || s.cfg.Federation == nil {
		hits, tok, err := local(r.Context(), federation.Query{}, q.PageToken)
		if err != nil {
			return err
		}
		s.metrics.observeSearch(len(hits), nil)
		writeSearch(w, hits, nil, nil, mode != federation.ModeNone, tok)
		return nil
	}
	fr, err := s.cfg.Federation.Search(r.Context(), mode, q.federationQuery(), q.PageToken, via, local)
	if err != nil {
		return err
	}
	s.metrics.observeSearch(len(fr.Results), fr.Upstreams)
	writeSearch(w, fr.Results, fr.Referrals, fr.Upstreams, true, fr.PageToken)
	return nil
}

// federationQuery is the query as forwarded upstream.
func (q *searchQuery) federationQuery() federation.Query {
	fq := federation.Query{Text: q.Text, PageSize: q.PageSize}
	for _, g := range q.Groups {
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
	return fq
}

// viaKey reduces a Via name (a host, host:port or a URL) to host[:port]
// plus path without "/search", lower-case, for comparison.
func viaKey(v string) string {
	v = strings.TrimSpace(v)
	if u, err := url.Parse(v); err == nil && u.Host != "" {
		return strings.ToLower(u.Host) + strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/search")
	}
	return strings.ToLower(strings.TrimSuffix(v, "/"))
}

// terms splits text into lower-case words for evidence matching.
func terms(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := words[:0]
	for _, w := range words {
		if len(w) > 1 && !stopWords[w] && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// stopWords are left out when deciding which examples and tags matched.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "of": true, "to": true, "in": true, "for": true,
	"on": true, "with": true, "me": true, "my": true, "i": true, "is": true, "it": true, "that": true, "this": true,
	"can": true, "find": true, "need": true, "want": true, "some": true, "something": true, "agent": true, "tool": true,
	"be": true, "are": true, "from": true, "by": true, "at": true, "as": true, "do": true, "please": true, "help": true,
}

// evidence explains one result (xu §8).
type evidence struct {
	MatchedTags     []string           `json:"matchedTags"`
	MatchedExamples []matchedExample   `json:"matchedExamples"`
	MatchedTerms    []string           `json:"matchedTerms"`
	ScoreComponents map[string]float64 `json:"scoreComponents"`
	Freshness       freshness          `json:"freshness"`
}

type matchedExample struct {
	Text   string  `json:"text"`
	Kind   string  `json:"kind"` // representativeQuery or example
	Score  float64 `json:"score"`
	Source string  `json:"-"`
}

type freshness struct {
	MetadataUpdatedAt string `json:"metadataUpdatedAt,omitempty"`
	IndexedAt         string `json:"indexedAt,omitempty"`
}

// buildEvidence explains one fused result: matched tags (requested,
// preferred or named by a query word), the representative queries and
// examples closest to the request (cosine against the query vector when the
// document's vectors are there, else the share of query words they hold),
// and the score components: keyword and semantic (the fused score's two
// parts), with the xu names tag, context (= keyword) and example.
func buildEvidence(h meiliHit, examplesRaw, vectorsRaw json.RawMessage, q *searchQuery, qterms []string, sc query.Scored, vec []float32, preferred bool) evidence {
	ev := evidence{MatchedTags: []string{}, MatchedExamples: []matchedExample{}, ScoreComponents: map[string]float64{}}
	var tags, rq, ex []string
	_ = json.Unmarshal(h["tags"], &tags)
	_ = json.Unmarshal(h["representativeQueries"], &rq)
	_ = json.Unmarshal(examplesRaw, &ex)
	wanted := map[string]bool{}
	for _, g := range q.Groups {
		if g.Field == normalize.FieldTags && g.Op != opNone {
			for _, v := range g.Vals {
				wanted[strings.ToLower(v)] = true
			}
		}
	}
	for _, t := range q.PreferredTags {
		wanted[strings.ToLower(t)] = true
	}
	tagHits := 0.0
	for _, t := range tags {
		if wanted[strings.ToLower(t)] || overlap(terms(t), qterms) > 0 {
			ev.MatchedTags = append(ev.MatchedTags, t)
		}
	}
	if len(tags) > 0 && len(ev.MatchedTags) > 0 {
		tagHits = math.Min(1, float64(len(ev.MatchedTags))/math.Max(1, math.Min(float64(len(tags)), float64(len(qterms)+len(wanted)))))
	}
	if m, ok := semanticExamples(vectorsRaw, vec, rq, ex); ok {
		ev.MatchedExamples = m
	} else {
		ev.MatchedExamples = lexicalExamples(qterms, rq, ex)
	}
	sort.SliceStable(ev.MatchedExamples, func(i, j int) bool { return ev.MatchedExamples[i].Score > ev.MatchedExamples[j].Score })
	if len(ev.MatchedExamples) > 3 {
		ev.MatchedExamples = ev.MatchedExamples[:3]
	}
	ev.ScoreComponents["tag"] = round3(tagHits)
	ev.ScoreComponents["example"] = 0
	if len(ev.MatchedExamples) > 0 {
		ev.ScoreComponents["example"] = max(0, ev.MatchedExamples[0].Score)
	}
	ev.ScoreComponents["keyword"] = round3(sc.Keyword)
	ev.ScoreComponents["context"] = round3(sc.Keyword)
	if vec != nil {
		ev.ScoreComponents["semantic"] = round3(sc.Semantic)
	}
	ev.ScoreComponents["overall"] = round3(sc.Score)
	if preferred {
		ev.ScoreComponents["preferredBoost"] = preferredWeight
	}
	ev.MatchedTerms = sc.Terms
	if ev.MatchedTerms == nil {
		ev.MatchedTerms = []string{}
	}
	_ = json.Unmarshal(h["updatedAt"], &ev.Freshness.MetadataUpdatedAt)
	_ = json.Unmarshal(h["indexedAt"], &ev.Freshness.IndexedAt)
	return ev
}

// Caps on the representative queries and examples ingest embeds per entry
// (ingest/embed.go: the entry text, then up to 32 queries, then up to 16
// examples, empty ones skipped).
const (
	embeddedQueries  = 32
	embeddedExamples = 16
)

// semanticExamples scores each representative query and example by the
// cosine of its stored vector with the query vector. ok is false when there
// is no query vector or the stored vectors do not line up with the texts
// (e.g. indexed before they changed).
func semanticExamples(vectorsRaw json.RawMessage, vec []float32, rq, ex []string) ([]matchedExample, bool) {
	if vec == nil || len(vectorsRaw) == 0 {
		return nil, false
	}
	vs, err := hybrid.Vectors(meilisearch.Hit{"_vectors": vectorsRaw}, "")
	if err != nil || len(vs) == 0 {
		return nil, false
	}
	type text struct{ kind, text string }
	var texts []text
	nonEmpty := func(kind string, in []string, limit int) {
		n := 0
		for _, t := range in {
			if n == limit {
				return
			}
			if t = strings.TrimSpace(t); t != "" {
				texts = append(texts, text{kind, t})
				n++
			}
		}
	}
	nonEmpty("representativeQuery", rq, embeddedQueries)
	nonEmpty("example", ex, embeddedExamples)
	var skip int
	switch len(vs) {
	case len(texts) + 1: // the entry text first
		skip = 1
	case len(texts):
	default:
		return nil, false
	}
	out := make([]matchedExample, 0, len(texts))
	for i, t := range texts {
		_, cos := hybrid.BestMatch(vec, vs[skip+i:skip+i+1])
		out = append(out, matchedExample{Text: t.text, Kind: t.kind, Score: round3(max(0, cos))})
	}
	return out, true
}

// lexicalExamples scores representative queries and examples by the share
// of the query's words they hold, leaving out those that hold none.
func lexicalExamples(qterms, rq, ex []string) []matchedExample {
	out := []matchedExample{}
	if len(qterms) == 0 {
		return out
	}
	add := func(kind string, texts []string) {
		for _, t := range texts {
			if n := overlap(terms(t), qterms); n > 0 {
				out = append(out, matchedExample{Text: t, Kind: kind, Score: round3(float64(n) / float64(len(qterms)))})
			}
		}
	}
	add("representativeQuery", rq)
	add("example", ex)
	return out
}

// overlap counts the words of a that match a word of b.
func overlap(a, b []string) int {
	n := 0
	for _, x := range a {
		for _, y := range b {
			if wordMatch(x, y) {
				n++
				break
			}
		}
	}
	return n
}

// wordMatch reports equal words, or words of at least four letters where
// one is a prefix of the other ("flight" and "flights").
func wordMatch(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 4 && strings.HasPrefix(b, a)
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
