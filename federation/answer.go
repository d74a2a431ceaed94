package federation

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/agentfinder/agentfinder/normalize/rawjson"
)

// SearchAnswer is the body of a POST /search answer: the one type for it.
// This registry writes it (searchapi/search's Answer.Encode writes these
// fields byte by byte, for speed) and its readers decode it: the
// federation client (an upstream's answer), the MCP search tool's text and
// the agentfinder search command. Results and referrals stay raw, so one a
// reader cannot use never costs it the others; ShownResults and
// ShownReferrals read them as their readers show them.
type SearchAnswer struct {
	// Results is nil when the answer has no "results" array (present but
	// empty is an empty slice).
	Results   []json.RawMessage `json:"results"`
	Referrals []json.RawMessage `json:"referrals"`
	// Upstreams are reported by the federating modes.
	Upstreams []Outcome `json:"upstreams,omitempty"`
	// PageToken continues the search ("" when done).
	PageToken string `json:"pageToken,omitempty"`
	// Reason says why results is empty when the registry's cut-off left
	// out every result.
	Reason string `json:"reason,omitempty"`
}

// UnmarshalJSON reads an answer: results, referrals and pageToken must
// have their types (else the answer is malformed); upstreams and reason,
// which only some registries send, are read when they are well formed and
// left empty otherwise.
func (a *SearchAnswer) UnmarshalJSON(b []byte) error {
	var w struct {
		Results   *[]json.RawMessage `json:"results"`
		Referrals []json.RawMessage  `json:"referrals"`
		PageToken *string            `json:"pageToken"`
		Upstreams json.RawMessage    `json:"upstreams"`
		Reason    json.RawMessage    `json:"reason"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*a = SearchAnswer{Referrals: w.Referrals}
	if w.Results != nil {
		a.Results = append(make([]json.RawMessage, 0, len(*w.Results)), *w.Results...)
	}
	if w.PageToken != nil {
		a.PageToken = *w.PageToken
	}
	_ = json.Unmarshal(w.Upstreams, &a.Upstreams)
	_ = json.Unmarshal(w.Reason, &a.Reason)
	return nil
}

// SearchResult is what the readers of an answer show of one result.
type SearchResult struct {
	Identifier  string      `json:"identifier"`
	DisplayName string      `json:"displayName"`
	Description string      `json:"description"`
	Type        string      `json:"type"`
	URL         string      `json:"url"`
	Score       json.Number `json:"score"`
	// Source is the registry that answered: a URL, or (some registries)
	// an object with its catalog.
	Source   json.RawMessage `json:"source"`
	Trust    *ResultTrust    `json:"trust"`
	Health   *ResultHealth   `json:"health"`
	Evidence *ResultEvidence `json:"evidence"`
}

// SourceLabel is the result's source as a line of text: the URL, or the
// catalog of a source object ("" when it is neither).
func (r *SearchResult) SourceLabel() string {
	var s string
	if json.Unmarshal(r.Source, &s) == nil {
		return s
	}
	var o struct {
		Catalog string `json:"catalog"`
	}
	if json.Unmarshal(r.Source, &o) == nil {
		return o.Catalog
	}
	return ""
}

// ResultTrust is the part of a result's trust its readers show.
type ResultTrust struct {
	Level    string `json:"level"`
	Signer   string `json:"signer"`
	Problems []struct {
		Code string `json:"code"`
	} `json:"problems"`
}

// ResultHealth is the part of a result's health its readers show.
type ResultHealth struct {
	Status    string `json:"status"`
	LatencyMs int64  `json:"latencyMs"`
}

// ResultEvidence is the part of a result's evidence (includeEvidence) its
// readers show.
type ResultEvidence struct {
	MatchedTags     []string `json:"matchedTags"`
	MatchedExamples []struct {
		Text string `json:"text"`
	} `json:"matchedExamples"`
	MatchedTerms    []string               `json:"matchedTerms"`
	ScoreComponents map[string]json.Number `json:"scoreComponents"`
}

// SearchReferral is what the readers of an answer show of one referral.
type SearchReferral struct {
	Identifier  string `json:"identifier"`
	DisplayName string `json:"displayName"`
	URL         string `json:"url"`
}

// ShownResults reads every result as its readers show it; an error names
// the first result that is not a result object.
func (a *SearchAnswer) ShownResults() ([]SearchResult, error) {
	return decodeEach[SearchResult](a.Results, "result")
}

// ShownReferrals reads every referral as its readers show it; an error
// names the first referral that is not an entry object.
func (a *SearchAnswer) ShownReferrals() ([]SearchReferral, error) {
	return decodeEach[SearchReferral](a.Referrals, "referral")
}

// ShownAnswer is what the readers of a search answer show of it.
type ShownAnswer struct {
	Results   []SearchResult
	Referrals []SearchReferral
	PageToken string
	Reason    string
}

// Shown reads the answer as its readers show it (ShownResults and
// ShownReferrals).
func (a *SearchAnswer) Shown() (*ShownAnswer, error) {
	results, err := a.ShownResults()
	if err != nil {
		return nil, err
	}
	referrals, err := a.ShownReferrals()
	if err != nil {
		return nil, err
	}
	return &ShownAnswer{Results: results, Referrals: referrals, PageToken: a.PageToken, Reason: a.Reason}, nil
}

// ShownEntry reads one result held as its members' values (a Hit's Entry,
// each member as an answer writes it) as its readers show it: each field of
// SearchResult is decoded from the member its JSON name names exactly, the
// other members are never read. A writer holding the values spares its
// readers a decoding of the whole encoded answer. Decoding the encoded entry
// would also take a member named in another case ("DisplayName"): an entry
// whose members may be named so (an upstream's) is read that way instead.
// An error names the member that does not decode.
func ShownEntry(entry map[string]json.RawMessage) (SearchResult, error) {
	var r SearchResult
	v := reflect.ValueOf(&r).Elem()
	for _, f := range shownFields() {
		raw, ok := entry[f.key]
		if !ok || len(raw) == 0 {
			continue
		}
		fv := v.Field(f.index)
		if s := ""; fv.Kind() == reflect.String && rawjson.String(raw, &s) {
			fv.SetString(s)
			continue
		}
		if err := json.Unmarshal(raw, fv.Addr().Interface()); err != nil {
			return SearchResult{}, fmt.Errorf("%s: %w", f.key, err)
		}
	}
	return r, nil
}

// shownField is a field of SearchResult and the member it is read from.
type shownField struct {
	key   string
	index int
}

// shownFields are SearchResult's fields by their JSON names, read from
// the struct tags once.
var shownFields = sync.OnceValue(func() []shownField {
	st := reflect.TypeFor[SearchResult]()
	fields := make([]shownField, 0, st.NumField())
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields = append(fields, shownField{key: name, index: i})
		}
	}
	return fields
})

func decodeEach[T any](raw []json.RawMessage, what string) ([]T, error) {
	out := make([]T, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			return nil, fmt.Errorf("%s %d: %w", what, i, err)
		}
	}
	return out, nil
}
