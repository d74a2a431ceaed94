package searchapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/xu"
)

type xuOut struct {
	xu.Response
	Code    string `json:"code"`
	Message string `json:"message"`
	CorrID  string `json:"correlation_id"`
}

func (f *fixture) discover(body any) (*http.Response, xuOut, map[string]json.RawMessage) {
	f.t.Helper()
	var raw map[string]json.RawMessage
	resp := f.do(http.MethodPost, "/discover", body, nil, &raw)
	b, _ := json.Marshal(raw)
	var out xuOut
	if err := json.Unmarshal(b, &out); err != nil {
		f.t.Fatal(err)
	}
	return resp, out, raw
}

func candidateIDs(cs []xu.Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func TestXuDiscover(t *testing.T) {
	f := newBindingsFixture(t, nil)

	// §5.2's request example: required_tags hr, preferred tags, protocols
	// https, a freshness constraint met and one it cannot apply (region).
	resp, out, raw := f.discover(`{
	  "query": "Find an agent for onboarding validation and API setup.",
	  "required_tags": ["hr"],
	  "preferred_tags": ["onboarding", "api-automation"],
	  "protocols": ["https"],
	  "constraints": {"max_results_age_seconds": 3600, "region": "apac"},
	  "limit": 10,
	  "detail": "summary",
	  "include_evidence": true,
	  "federation": "none"
	}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s %s", resp.StatusCode, out.Code, out.Message)
	}
	if got := resp.Header.Get(xu.ConformanceHeader); got != xu.Conformance {
		t.Errorf("conformance header = %q", got)
	}
	for _, k := range []string{"request_id", "generated_at", "applied_filters", "unsupported_filters", "warnings", "candidates"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("response lacks %s", k)
		}
	}
	if out.RequestID != resp.Header.Get("X-Correlation-ID") || out.GeneratedAt != "2026-06-01T12:00:00Z" {
		t.Errorf("request_id %q generated_at %q", out.RequestID, out.GeneratedAt)
	}
	if !slices.Equal(out.UnsupportedFilters, []string{"region"}) || len(out.Warnings) == 0 {
		t.Errorf("unsupported %v warnings %v", out.UnsupportedFilters, out.Warnings)
	}
	var applied struct {
		RequiredTags []string           `json:"required_tags"`
		Protocols    []string           `json:"protocols"`
		Constraints  map[string]float64 `json:"constraints"`
	}
	_ = json.Unmarshal(raw["applied_filters"], &applied)
	if !slices.Equal(applied.RequiredTags, []string{"hr"}) || !slices.Equal(applied.Protocols, []string{"https"}) || applied.Constraints["max_results_age_seconds"] != 3600 {
		t.Errorf("applied_filters = %s", raw["applied_filters"])
	}
	if len(out.Candidates) == 0 || out.Candidates[0].ID != "urn:ai:lingo.example:agent:hr-core" {
		t.Fatalf("candidates = %v", candidateIDs(out.Candidates))
	}
	for _, c := range out.Candidates {
		if !slices.Contains(f.byName[c.ID].Tags, "hr") {
			t.Errorf("%s lacks the required tag hr", c.ID)
		}
	}
	top := out.Candidates[0]
	if top.Name != "HR Core Automator" || top.Description == "" || top.Status != "active" || top.Score <= 0 || top.Score > 1 {
		t.Errorf("top candidate = %+v", top)
	}
	if len(top.Bindings) != 1 || top.Bindings[0].Protocol != "https" || top.Bindings[0].Endpoint != "https://agents.example.net/hr-core/invoke" {
		t.Errorf("bindings = %+v", top.Bindings)
	}
	if top.Freshness == nil || top.Freshness.MetadataUpdatedAt != "2026-05-08T00:00:00Z" || top.Freshness.IndexedAt == "" {
		t.Errorf("freshness = %+v", top.Freshness)
	}
	for _, k := range []string{"tag", "context", "example"} {
		if _, ok := top.ScoreComponents[k]; !ok {
			t.Errorf("score_components lacks %s: %v", k, top.ScoreComponents)
		}
	}
	if !slices.Contains(top.MatchedTags, "hr") || !slices.Contains(top.MatchedTags, "onboarding") || len(top.MatchedExamples) == 0 {
		t.Errorf("evidence: tags %v examples %+v", top.MatchedTags, top.MatchedExamples)
	}
	if top.OriginService != "" || top.Redacted {
		t.Errorf("local candidate with provenance or redaction: %+v", top)
	}

	// §13.2: the minimal D1 query needs no evidence and honours limit.
	resp, out, raw = f.discover(map[string]any{"query": "answer a short factual question", "protocols": []string{"https"}, "limit": 1, "federation": "none"})
	if resp.StatusCode != http.StatusOK || len(out.Candidates) > 1 {
		t.Fatalf("§13.2: %d %d candidates", resp.StatusCode, len(out.Candidates))
	}
	for _, c := range out.Candidates {
		if c.ScoreComponents != nil || c.MatchedTags != nil {
			t.Errorf("§13.2: evidence without include_evidence: %+v", c)
		}
	}

	// §13.3: a hard constraint it cannot apply is named, not silently dropped.
	resp, out, _ = f.discover(`{"query": "find a translation agent", "required_tags": ["translation"], "constraints": {"unsupported_private_filter": "example"}, "federation": "none"}`)
	if resp.StatusCode != http.StatusOK || !slices.Equal(out.UnsupportedFilters, []string{"unsupported_private_filter"}) {
		t.Fatalf("§13.3: %d unsupported %v", resp.StatusCode, out.UnsupportedFilters)
	}
	if len(out.Candidates) == 0 {
		t.Fatal("§13.3: no translation agent")
	}
	for _, c := range out.Candidates {
		if !slices.Contains(f.byName[c.ID].Tags, "translation") {
			t.Errorf("§13.3: %s lacks the required tag translation", c.ID)
		}
	}

	// Freshness constraints are hard: the fixture was indexed 30 minutes ago.
	_, out, _ = f.discover(map[string]any{"query": "translation", "constraints": map[string]any{"max_results_age_seconds": 300}, "federation": "none"})
	if len(out.Candidates) != 0 {
		t.Errorf("max_results_age_seconds 300 kept %v", candidateIDs(out.Candidates))
	}
	_, out, _ = f.discover(map[string]any{"query": "payroll", "constraints": map[string]any{"max_metadata_age_seconds": 20 * 24 * 3600}, "federation": "none"})
	if !slices.Equal(candidateIDs(out.Candidates), []string{"urn:ai:lingo.example:agent:payroll-check"}) {
		t.Errorf("max_metadata_age_seconds 20 days: %v", candidateIDs(out.Candidates))
	}

	// excluded_tags is a hard filter.
	_, out, _ = f.discover(map[string]any{"query": "payroll onboarding hr", "excluded_tags": []string{"payroll"}, "federation": "none"})
	for _, c := range out.Candidates {
		if slices.Contains(f.byName[c.ID].Tags, "payroll") {
			t.Errorf("excluded tag payroll in %s", c.ID)
		}
	}

	// §7.4: private endpoints are redacted below detail=full.
	for _, tc := range []struct {
		detail       string
		endpoints    int
		redacted     bool
		name, fullMD bool
	}{
		{"minimal", 1, true, false, false},
		{"summary", 1, true, true, false},
		{"full", 2, false, true, true},
	} {
		_, out, _ = f.discover(map[string]any{"query": "payroll run missing tax fields", "detail": tc.detail, "federation": "none", "limit": 1})
		if len(out.Candidates) != 1 || out.Candidates[0].ID != "urn:ai:lingo.example:agent:payroll-check" {
			t.Fatalf("detail %s: %v", tc.detail, candidateIDs(out.Candidates))
		}
		c := out.Candidates[0]
		if len(c.Bindings) != tc.endpoints || c.Redacted != tc.redacted || (c.Name != "") != tc.name || (len(c.Metadata) > 0) != tc.fullMD {
			t.Errorf("detail %s: bindings %v redacted %v name %q metadata %d bytes", tc.detail, c.Bindings, c.Redacted, c.Name, len(c.Metadata))
		}
		if tc.redacted && len(out.Warnings) == 0 {
			t.Errorf("detail %s: redaction without a warning", tc.detail)
		}
	}

	// Bad input: the §12 error model, never a 500.
	for _, tc := range []struct {
		name string
		body any
		code string
	}{
		{"no query", `{"required_tags":["hr"]}`, door.CodeInvalidRequest},
		{"query not a string", `{"query": 3}`, door.CodeInvalidRequest},
		{"not JSON", `{"query":`, door.CodeInvalidRequest},
		{"bad detail", `{"query":"x","detail":"everything"}`, door.CodeInvalidRequest},
		{"bad limit", `{"query":"x","limit":0}`, door.CodeInvalidRequest},
		{"bad age", `{"query":"x","constraints":{"max_results_age_seconds":"soon"}}`, door.CodeInvalidRequest},
		{"tags not strings", `{"query":"x","required_tags":[1]}`, door.CodeInvalidRequest},
	} {
		resp, out, _ := f.discover(tc.body)
		if resp.StatusCode != http.StatusBadRequest || out.Code != tc.code || out.Message == "" || out.CorrID == "" {
			t.Errorf("%s: %d %q %q %q", tc.name, resp.StatusCode, out.Code, out.Message, out.CorrID)
		}
	}
}

// TestXuDiscoverFederated: candidates from an upstream registry carry
// origin_service, origin_authority and received_at (xu §10).
func TestXuDiscoverFederated(t *testing.T) {
	up := newBindingsFixture(t, func(c *Config) { c.PublicURL = "https://upstream.test.example" })
	fed, err := federation.New(federation.Config{
		Name:         "https://finder.test.example",
		Upstreams:    []string{up.http.URL + "/search"},
		Budget:       5 * time.Second,
		TokenKey:     []byte("fed-key"),
		AllowPrivate: true, // the upstream listens on loopback
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fed.Close)
	f := newFixture(t, func(c *Config) { c.Federation = fed })

	resp, out, _ := f.discover(map[string]any{"query": "translate Chinese text into English", "federation": "auto"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, out.Message)
	}
	var got *xu.Candidate
	for i, c := range out.Candidates {
		if c.ID == "urn:ai:lingo.example:agent:translator-zh-en" {
			got = &out.Candidates[i]
		}
		if _, local := f.byName[c.ID]; local && c.OriginService != "" {
			t.Errorf("local candidate %s has origin_service %q", c.ID, c.OriginService)
		}
	}
	if got == nil {
		t.Fatalf("the upstream's translator is not a candidate: %v", candidateIDs(out.Candidates))
	}
	if got.OriginService == "" || got.OriginAuthority != "lingo.example" || got.ReceivedAt == "" {
		t.Errorf("provenance: origin_service %q origin_authority %q received_at %q", got.OriginService, got.OriginAuthority, got.ReceivedAt)
	}
	if _, err := time.Parse(time.RFC3339, got.ReceivedAt); err != nil {
		t.Errorf("received_at %q: %v", got.ReceivedAt, err)
	}
}
