// Package adp is the door of the ANP Agent Description Protocol (ADP §4.3,
// adp.discover, carried over HTTP): POST /adp/discover. Tags and query are
// translated into a searchapi/search Query, with ADP's skill-tag rules
// (exact, prefix "nlp/*" and parent "nlp" matching "nlp/translation") as a
// hard filter, and results come back as {agent_card, score, matched_tags}
// with agent cards in ADP's shape.
//
// The score is this registry's relevance score scaled to 0-1, not ADP's
// five-factor baseline profile (§5): reputation and rating are signals
// this registry does not have, availability (health) is shown and
// filtered (live_only) but never scored, and one ranking serves every
// door. min_score is the search's cut-off on that score; without it the
// registry's default cut-off applies (not ADP's 0.1: the default is chosen
// on this registry's scale). It imports the engine and searchapi/door only.
package adp

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

const defaultADPLimit = 10

// Door serves POST /adp/discover over an engine.
type Door struct{ engine *search.Engine }

// New returns the ADP door over e.
func New(e *search.Engine) *Door { return &Door{engine: e} }

// Routes are the door's one route, answering errors with ADP's status
// names.
func (d *Door) Routes() []door.Route {
	return []door.Route{{Pattern: "POST /adp/discover", Handle: d.handleADPDiscover, Shape: adpError}}
}

// Request is the adp.discover request (§4.3, table 8).
type Request struct {
	Tags       []string        `json:"tags"`
	Query      *string         `json:"query"`
	Limit      json.RawMessage `json:"limit"`
	MinScore   *float64        `json:"min_score"`
	Federation *string         `json:"federation"`
	// SignedOnly and LiveOnly (extensions) are POST /search's signedOnly
	// and liveOnly.
	SignedOnly bool `json:"signed_only"`
	LiveOnly   bool `json:"live_only"`
}

// Response is the adp.discover response (table 9).
type Response struct {
	Results []Result `json:"results"`
}

// Result is one agent of a Response.
type Result struct {
	AgentCard   json.RawMessage `json:"agent_card"`
	Score       float64         `json:"score"`
	MatchedTags []string        `json:"matched_tags"`
	// Trust and Health (extensions) are the record's, beside the score
	// they do not enter.
	Trust  *door.Trust  `json:"trust,omitempty"`
	Health *door.Health `json:"health,omitempty"`
}

// adpError answers errors with ADP's status names (INVALID_REQUEST,
// UNAUTHORIZED, ...), our message and correlation id.
func adpError(ae *door.APIError, cid string) any {
	code := map[string]string{
		door.CodeInvalidRequest: "INVALID_REQUEST", door.CodeUnsupportedFilter: "INVALID_REQUEST", door.CodeUnauthorized: "UNAUTHORIZED",
		door.CodeForbidden: "UNAUTHORIZED", door.CodeNotFound: "NOT_FOUND", door.CodeRateLimited: "BUSY", door.CodeUnavailable: "BUSY",
	}[ae.Code]
	if code == "" {
		code = "INTERNAL_ERROR"
	}
	return map[string]any{"error": map[string]string{"code": code, "message": ae.Message, "correlationId": cid}}
}

// adpAttributes are the record fields an agent card needs beyond
// searchAttributes.
var adpAttributes = []string{"skillNames", "constraints", "seq", "ttl"}

// adpQuery translates an adp.discover request into the shared query; the
// text is the query, or the words of the tags when there is none.
func adpQuery(req *Request) (q *search.Query, err error) {
	text := ""
	if req.Query != nil {
		text = strings.TrimSpace(*req.Query)
	}
	var tags []string
	for _, t := range req.Tags {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	if text == "" && len(tags) == 0 {
		return nil, door.Invalid("tags or query is required")
	}
	if text == "" {
		text = strings.Join(strings.FieldsFunc(strings.Join(tags, " "), func(r rune) bool { return r == '/' || r == '*' || r == ' ' }), " ")
	}
	q = &search.Query{Attributes: adpAttributes}
	if q.Text, err = search.ParseText(&text, true); err != nil {
		return nil, err
	}
	if q.Mode, err = search.ParseFederation(nil, req.Federation); err != nil {
		return nil, err
	}
	q.PageSize = defaultADPLimit
	if len(req.Limit) > 0 {
		if q.PageSize, err = search.ParsePageSize(req.Limit, nil); err != nil {
			return nil, door.Invalid("limit must be an integer from 1 to %d", search.MaxPageSize)
		}
	}
	if req.MinScore != nil {
		if *req.MinScore < 0 || *req.MinScore > 1 {
			return nil, door.Invalid("min_score must be from 0.0 to 1.0")
		}
		v := int(math.Ceil(*req.MinScore*100 - 1e-9))
		q.MinScore = &v
	}
	if err := q.AddFilter("skill", tags); err != nil {
		return nil, err
	}
	if err := q.AddOptions(req.SignedOnly, req.LiveOnly); err != nil {
		return nil, err
	}
	return q, nil
}

func (d *Door) handleADPDiscover(w http.ResponseWriter, r *http.Request) error {
	var req Request
	if _, err := door.DecodeBody(w, r, &req); err != nil {
		return err
	}
	q, err := adpQuery(&req)
	if err != nil {
		return err
	}
	ans, err := door.Search(r, d.engine, q)
	if err != nil {
		return err
	}
	out := Response{Results: make([]Result, 0, len(ans.Hits))}
	for _, h := range ans.Hits {
		r := Result{AgentCard: agentCard(h), Score: search.Round3(h.Score / 100), MatchedTags: matchedSkills(h.Entry, req.Tags)}
		r.Trust, r.Health = door.TrustHealth(h.Entry)
		out.Results = append(out.Results, r)
	}
	door.WriteJSON(w, http.StatusOK, out)
	return nil
}

// matchedSkills returns the agent's skill tags (or flat tags) that match one
// of the query tags by ADP's rules: exact, prefix ("nlp/*") or parent (the
// agent's "nlp/translation" matches "nlp"). Of a skill and its parent both
// matching, the more specific is kept.
func matchedSkills(e map[string]json.RawMessage, query []string) []string {
	var skills, tags []string
	_ = json.Unmarshal(e["skills"], &skills)
	_ = json.Unmarshal(e["tags"], &tags)
	var out []string
	for _, s := range append(skills, tags...) {
		ls := strings.ToLower(s)
		for _, qt := range query {
			base := search.SkillValue(qt)
			if base != "" && (ls == base || strings.HasPrefix(ls, base+"/")) {
				out = appendDistinct(out, s)
				break
			}
		}
	}
	if out = leafSkills(out); out == nil {
		out = []string{}
	}
	return out
}

func appendDistinct(l []string, s string) []string {
	for _, x := range l {
		if strings.EqualFold(x, s) {
			return l
		}
	}
	return append(l, s)
}

// agentCard returns the result as an ADP Agent Card (§3): the card itself
// when the catalog entry carried it inline, else one built from the record
// (the card fetched from the entry's url was mapped into the record, not
// kept): id, name, description, version, skills (the declared ones, without
// the parents the index adds; the entry's tags when it has no skills),
// tools, endpoints, constraints, seq and metadata.
func agentCard(h federation.Hit) json.RawMessage {
	e := h.Entry
	if normalize.CanonicalType(door.EntryString(e, "type")) == normalize.TypeADP {
		var card map[string]json.RawMessage
		if json.Unmarshal(e["data"], &card) == nil && len(card["name"]) > 0 {
			if _, ok := card["id"]; !ok {
				card["id"] = door.MustJSON(h.Identifier)
			}
			return door.MustJSON(card)
		}
	}
	card := map[string]any{"id": h.Identifier, "name": door.EntryString(e, "displayName")}
	for k, field := range map[string]string{"description": "description", "version": "version"} {
		if v := door.EntryString(e, field); v != "" {
			card[k] = v
		}
	}
	var skills, tags, tools []string
	_ = json.Unmarshal(e["skills"], &skills)
	_ = json.Unmarshal(e["tags"], &tags)
	_ = json.Unmarshal(e["skillNames"], &tools)
	if skills = leafSkills(skills); len(skills) == 0 {
		skills = tags
	}
	if len(skills) > 0 {
		card["skills"] = skills
	}
	if len(tools) > 0 {
		ts := make([]map[string]string, len(tools))
		for i, t := range tools {
			ts[i] = map[string]string{"name": t}
		}
		card["tools"] = ts
	}
	var bs []normalize.Binding
	_ = json.Unmarshal(e["bindings"], &bs)
	var eps []map[string]string
	for _, b := range bs {
		proto := b.Protocol
		if proto == "adp" && b.Transport != "" {
			proto = strings.ToLower(b.Transport) // ADP's own endpoint protocols: aitp, http+json, ...
		}
		if b.URL != "" {
			eps = append(eps, map[string]string{"protocol": proto, "uri": b.URL})
		}
	}
	if len(eps) > 0 {
		card["endpoints"] = eps
	}
	if c := e["constraints"]; len(c) > 0 && c[0] == '{' {
		card["constraints"] = c
	}
	if seq := e["seq"]; len(seq) > 0 && string(seq) != "0" {
		card["seq"] = seq
	}
	md := map[string]any{}
	if u := door.EntryString(e, "updatedAt"); u != "" {
		md["updated_at"] = u
	}
	if ttl := e["ttl"]; len(ttl) > 0 && string(ttl) != "0" {
		md["ttl"] = ttl
	}
	if len(md) > 0 {
		card["metadata"] = md
	}
	return door.MustJSON(card)
}

// leafSkills drops the parents the index adds to hierarchical skills
// ("nlp" next to "nlp/translation"), ignoring case.
func leafSkills(skills []string) []string {
	var out []string
	for _, s := range skills {
		parent := false
		for _, o := range skills {
			if strings.HasPrefix(strings.ToLower(o), strings.ToLower(s)+"/") {
				parent = true
				break
			}
		}
		if !parent {
			out = append(out, s)
		}
	}
	return out
}
