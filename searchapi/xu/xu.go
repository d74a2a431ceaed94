// Package xu is the door of the Efficient Agent Discovery Profile
// (draft-xu-efficient-agent-discovery-profile): POST /discover. Its
// Discovery Request (§5) is translated into a searchapi/search Query, and
// the engine's answer into its Discovery Response (§6); errors are
// answered in its error model (§12). This registry is a D2
// (evidence-based) discovery service: hard filters applied, hard
// constraints it cannot apply listed in unsupported_filters, evidence,
// score components and freshness when asked. It imports the engine and
// searchapi/door only.
package xu

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// Door serves POST /discover over an engine.
type Door struct {
	engine *search.Engine
	now    func() time.Time
}

// New returns the xu door over e; now is the clock of generated_at (nil:
// time.Now).
func New(e *search.Engine, now func() time.Time) *Door {
	if now == nil {
		now = time.Now
	}
	return &Door{engine: e, now: now}
}

// Routes are the door's one route, answering errors in xu's model.
func (d *Door) Routes() []door.Route {
	return []door.Route{{Pattern: "POST /discover", Handle: d.handleDiscover, Shape: xuError}}
}

// Conformance is the value of the ConformanceHeader on every answer.
const (
	ConformanceHeader = "Discovery-Profile"
	Conformance       = "draft-xu-efficient-agent-discovery-profile-00; level=D2"
)

// Request is the Discovery Request (§5.1), plus federation (Agent
// Finder's mode, auto when absent).
type Request struct {
	Query           *string                    `json:"query"`
	RequiredTags    []string                   `json:"required_tags"`
	PreferredTags   []string                   `json:"preferred_tags"`
	ExcludedTags    []string                   `json:"excluded_tags"`
	Protocols       []string                   `json:"protocols"`
	Constraints     map[string]json.RawMessage `json:"constraints"`
	Limit           json.RawMessage            `json:"limit"`
	IncludeEvidence bool                       `json:"include_evidence"`
	Detail          string                     `json:"detail"`
	ClientContext   map[string]json.RawMessage `json:"client_context"`
	Federation      *string                    `json:"federation"`
}

// Response is the Discovery Response (§6.1).
type Response struct {
	RequestID          string         `json:"request_id"`
	GeneratedAt        string         `json:"generated_at"`
	AppliedFilters     map[string]any `json:"applied_filters"`
	UnsupportedFilters []string       `json:"unsupported_filters"`
	Warnings           []string       `json:"warnings"`
	Candidates         []Candidate    `json:"candidates"`
}

// Candidate is one candidate (§6.1 table 7, §10 provenance). Which
// fields are set depends on detail and include_evidence.
type Candidate struct {
	ID              string             `json:"id"`
	Name            string             `json:"name,omitempty"`
	Description     string             `json:"description,omitempty"`
	URL             string             `json:"url,omitempty"` // the catalog entry's url: where to resolve further
	Bindings        []Binding          `json:"bindings"`
	Score           float64            `json:"score"`
	ScoreComponents map[string]float64 `json:"score_components,omitempty"`
	MatchedTags     []string           `json:"matched_tags,omitempty"`
	MatchedExamples []Example          `json:"matched_examples,omitempty"`
	Status          string             `json:"status"`
	Trust           *door.Trust        `json:"trust,omitempty"`
	Health          *door.Health       `json:"health,omitempty"`
	Freshness       *Freshness         `json:"freshness,omitempty"`
	Redacted        bool               `json:"redacted,omitempty"`
	Tags            []string           `json:"tags,omitempty"`
	Metadata        json.RawMessage    `json:"metadata,omitempty"` // detail=full: the whole record
	OriginService   string             `json:"origin_service,omitempty"`
	OriginAuthority string             `json:"origin_authority,omitempty"`
	ReceivedAt      string             `json:"received_at,omitempty"`
}

// Binding is one way to reach a candidate.
type Binding struct {
	Protocol         string `json:"protocol"`
	Endpoint         string `json:"endpoint"`
	InteractionModel string `json:"interaction_model,omitempty"`
}

// Example is a matched representative query or example and its score.
type Example struct {
	Text  string  `json:"text"`
	Score float64 `json:"score"`
}

// Freshness says when a candidate's metadata changed and when it was indexed.
type Freshness struct {
	MetadataUpdatedAt string `json:"metadata_updated_at,omitempty"`
	IndexedAt         string `json:"indexed_at,omitempty"`
}

// xuError is the §12 error model.
func xuError(ae *door.APIError, cid string) any {
	e := map[string]any{"code": ae.Code, "message": ae.Message, "correlation_id": cid}
	if ae.Status == http.StatusTooManyRequests || ae.Status == http.StatusServiceUnavailable {
		e["retry_after"] = 1
	}
	return e
}

// xuConstraints are the constraints this registry applies, each setting a
// freshness bound of the query.
var xuConstraints = map[string]func(q *search.Query, d time.Duration){
	"max_results_age_seconds":  func(q *search.Query, d time.Duration) { q.MaxIndexAge = d },
	"max_metadata_age_seconds": func(q *search.Query, d time.Duration) { q.MaxMetadataAge = d },
}

// xuFlags are the boolean constraints this registry applies: signed_only
// and live_only, POST /search's signedOnly and liveOnly.
var xuFlags = map[string]func(q *search.Query) error{
	"signed_only": func(q *search.Query) error { return q.AddOptions(true, false) },
	"live_only":   func(q *search.Query) error { return q.AddOptions(false, true) },
}

// xuQuery translates a Discovery Request into the shared query. Constraints
// it cannot apply are returned, not refused (§5.1, §13.3).
func xuQuery(req *Request) (q *search.Query, applied map[string]any, unsupportedFilters []string, err error) {
	if req.Query == nil || strings.TrimSpace(*req.Query) == "" {
		return nil, nil, nil, door.Invalid("query is required and must not be empty")
	}
	q = &search.Query{Evidence: req.IncludeEvidence}
	if q.Text, err = search.ParseText(req.Query, true); err != nil {
		return nil, nil, nil, err
	}
	if q.Mode, err = search.ParseFederation(nil, req.Federation); err != nil {
		return nil, nil, nil, err
	}
	if q.PageSize, err = search.ParsePageSize(nil, req.Limit); err != nil {
		return nil, nil, nil, door.Invalid("limit must be an integer from 1 to %d", search.MaxPageSize)
	}
	switch req.Detail {
	case "", "summary", "minimal", "full":
	default:
		return nil, nil, nil, door.Invalid("detail must be minimal, summary or full")
	}
	applied = map[string]any{}
	for _, f := range []struct {
		name, key string
		vals      []string
	}{
		{"required_tags", "requiredTags", req.RequiredTags},
		{"excluded_tags", "excludedTags", req.ExcludedTags},
		{"protocols", "protocols", req.Protocols},
	} {
		n := len(q.Groups)
		if err := q.AddFilter(f.key, f.vals); err != nil {
			return nil, nil, nil, err
		}
		if len(q.Groups) > n {
			applied[f.name] = q.Groups[n].Vals
		}
	}
	q.SetPreferredTags(req.PreferredTags)
	appliedConstraints := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(req.Constraints)) {
		if flag, ok := xuFlags[k]; ok {
			var on bool
			if err := json.Unmarshal(req.Constraints[k], &on); err != nil {
				return nil, nil, nil, door.Invalid("constraints.%s must be true or false", k)
			}
			if on {
				if err := flag(q); err != nil {
					return nil, nil, nil, err
				}
			}
			appliedConstraints[k] = on
			continue
		}
		set, ok := xuConstraints[k]
		if !ok {
			unsupportedFilters = append(unsupportedFilters, k)
			continue
		}
		var secs float64
		if err := json.Unmarshal(req.Constraints[k], &secs); err != nil || secs <= 0 || secs > 1e9 {
			return nil, nil, nil, door.Invalid("constraints.%s must be a positive number of seconds", k)
		}
		set(q, time.Duration(secs*float64(time.Second)))
		appliedConstraints[k] = secs
	}
	if len(appliedConstraints) > 0 {
		applied["constraints"] = appliedConstraints
	}
	return q, applied, unsupportedFilters, nil
}

func (d *Door) handleDiscover(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set(ConformanceHeader, Conformance)
	var req Request
	if _, err := door.DecodeBody(w, r, &req); err != nil {
		return err
	}
	q, applied, unsup, err := xuQuery(&req)
	if err != nil {
		return err
	}
	ans, err := door.Search(r, d.engine, q)
	if err != nil {
		return err
	}
	out := Response{
		RequestID:          door.CorrelationID(r.Context()),
		GeneratedAt:        d.now().UTC().Format(time.RFC3339),
		AppliedFilters:     applied,
		UnsupportedFilters: unsup,
		Warnings:           []string{},
		Candidates:         make([]Candidate, 0, len(ans.Hits)),
	}
	if out.UnsupportedFilters == nil {
		out.UnsupportedFilters = []string{}
	}
	for _, k := range unsup {
		out.Warnings = append(out.Warnings, "constraint "+k+" is not supported and was not applied: candidates are not filtered by it")
	}
	redacted, federated := 0, 0
	for _, h := range ans.Hits {
		c := xuCandidateOf(h, req.Detail, q.Evidence)
		if c.Redacted {
			redacted++
		}
		if !h.Local {
			federated++
		}
		out.Candidates = append(out.Candidates, c)
	}
	if redacted > 0 {
		out.Warnings = append(out.Warnings, "endpoints on private or internal networks are redacted; ask with detail=full to see them")
	}
	if federated > 0 && (q.MaxIndexAge > 0 || q.MaxMetadataAge > 0) {
		out.Warnings = append(out.Warnings, "freshness constraints apply to this registry's own records; federated candidates carry received_at")
	}
	door.WriteJSON(w, http.StatusOK, out)
	return nil
}

// xuCandidateOf turns a result into a candidate at the requested detail:
// minimal (id, status, bindings, score), summary (the default: also name,
// description and freshness) or full (also tags, private endpoints and the
// whole record). Endpoints on private or internal networks are left out
// below full and the candidate marked redacted (§7.4).
func xuCandidateOf(h federation.Hit, detail string, withEvidence bool) Candidate {
	e := h.Entry
	c := Candidate{
		ID:     h.Identifier,
		Score:  search.Round3(h.Score / 100),
		Status: door.EntryString(e, "status"),
	}
	if c.Status == "" {
		c.Status = "active"
	}
	c.Trust, c.Health = door.TrustHealth(e)
	c.Bindings, c.Redacted = xuBindings(e, detail)
	if u := door.EntryString(e, "url"); u != "" {
		if detail != "full" && privateEndpoint(u) {
			c.Redacted = true
		} else {
			c.URL = u
		}
	}
	if detail != "minimal" {
		c.Name = door.EntryString(e, "displayName")
		c.Description = door.EntryString(e, "description")
		c.Freshness = &Freshness{MetadataUpdatedAt: door.EntryString(e, "updatedAt"), IndexedAt: door.EntryString(e, "indexedAt")}
	}
	if detail == "full" {
		_ = json.Unmarshal(e["tags"], &c.Tags)
		c.Metadata = door.MustJSON(e)
	}
	if withEvidence {
		c.addEvidence(e["evidence"])
	}
	if !h.Local {
		c.setOrigin(h)
	}
	return c
}

// xuBindings are the entry's bindings with an endpoint; below full detail
// those on private or internal networks are left out and redacted says so.
func xuBindings(e map[string]json.RawMessage, detail string) (out []Binding, redacted bool) {
	var bs []struct {
		Protocol  string `json:"protocol"`
		URL       string `json:"url"`
		Transport string `json:"transport"`
	}
	_ = json.Unmarshal(e["bindings"], &bs)
	out = []Binding{}
	for _, b := range bs {
		if b.URL == "" {
			continue
		}
		if detail != "full" && privateEndpoint(b.URL) {
			redacted = true
			continue
		}
		out = append(out, Binding{Protocol: b.Protocol, Endpoint: b.URL, InteractionModel: b.Transport})
	}
	return out, redacted
}

// addEvidence fills the candidate's evidence from the entry's (raw), every
// member present even when empty.
func (c *Candidate) addEvidence(raw json.RawMessage) {
	var ev search.Evidence
	if json.Unmarshal(raw, &ev) == nil {
		c.ScoreComponents = ev.ScoreComponents
		c.MatchedTags = ev.MatchedTags
		for _, m := range ev.MatchedExamples {
			c.MatchedExamples = append(c.MatchedExamples, Example{Text: m.Text, Score: m.Score})
		}
	}
	if c.ScoreComponents == nil {
		c.ScoreComponents = map[string]float64{}
	}
	if c.MatchedTags == nil {
		c.MatchedTags = []string{}
	}
	if c.MatchedExamples == nil {
		c.MatchedExamples = []Example{}
	}
}

// setOrigin says where a federated hit came from: the registry that served
// it, the authority (its publisher, else that registry's host) and when it
// arrived.
func (c *Candidate) setOrigin(h federation.Hit) {
	c.OriginService = h.OriginService
	if c.OriginService == "" {
		c.OriginService = h.Source
	}
	c.OriginAuthority = door.EntryString(h.Entry, "publisher")
	if c.OriginAuthority == "" {
		if u, err := url.Parse(c.OriginService); err == nil {
			c.OriginAuthority = u.Hostname()
		}
	}
	if !h.ReceivedAt.IsZero() {
		c.ReceivedAt = h.ReceivedAt.UTC().Format(time.RFC3339)
	}
}

// privateEndpoint reports an endpoint on a private or internal network: a
// loopback, private, link-local or unspecified address, localhost, a name
// without a dot, or a name under a suffix reserved for internal use. Such
// endpoints are internal system names §7.4 asks to leave out by default.
func privateEndpoint(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "ws", "wss":
	default:
		return false // agent://name and other non-network URIs name no network address
	}
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified()
	}
	if h == "localhost" || !strings.Contains(h, ".") {
		return true
	}
	for _, suf := range []string{".localhost", ".local", ".internal", ".intranet", ".corp", ".lan", ".home.arpa"} {
		if strings.HasSuffix(h, suf) {
			return true
		}
	}
	return false
}
