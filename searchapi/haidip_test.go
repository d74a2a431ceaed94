package searchapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/agentfinder/agentfinder/searchapi/haidip"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

type haidipOut struct {
	haidip.Response
	Error *struct {
		Code          string `json:"code"`
		Message       string `json:"message"`
		CorrelationID string `json:"correlationId"`
	} `json:"error"`
}

func haidipIDs(rs []haidip.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func TestHAIDIPSearch(t *testing.T) {
	f := newBindingsFixture(t, nil)
	search := func(body any) (int, haidipOut, map[string]json.RawMessage) {
		t.Helper()
		var raw map[string]json.RawMessage
		resp := f.do(http.MethodPost, "/agents/search", body, nil, &raw)
		b, _ := json.Marshal(raw)
		var out haidipOut
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, out, raw
	}

	// The draft's request example: translation into Spanish is not offered,
	// so the language filter leaves nothing; French is.
	status, out, raw := search(`{"query": "translate English to Spanish", "filters": {"capabilities": ["translation"], "supported_language": "es"}, "top": 5}`)
	if status != http.StatusOK || len(out.Results) != 0 {
		t.Fatalf("spanish: %d %v", status, haidipIDs(out.Results))
	}
	for _, k := range []string{"results", "count", "query", "top", "skip", "search_time"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("response lacks %s", k)
		}
	}
	status, out, _ = search(`{"query": "translate English to French", "filters": {"capabilities": ["translation"], "supported_language": "fr"}, "top": 5, "federation": "none"}`)
	if status != http.StatusOK || !slices.Equal(haidipIDs(out.Results), []string{"urn:ai:lingo.example:agent:translator-001"}) {
		t.Fatalf("french: %d %v", status, haidipIDs(out.Results))
	}
	r := out.Results[0]
	if r.Name != "MultiLang Text Translator" || r.Description == "" || r.Score == nil || *r.Score <= 0 || *r.Score > 1 || r.Metadata != nil {
		t.Errorf("result = %+v", r)
	}
	if out.Count != 1 || out.Query != "translate English to French" || out.Top != 5 || out.Skip != 0 || out.SearchTime < 0 {
		t.Errorf("envelope = %+v", out.Response)
	}

	// capabilities match capability, tag or skill: the ADP card's
	// nlp/translation skill and tags count; every capability is required.
	_, out, _ = search(map[string]any{"query": "translation", "filters": map[string]any{"capabilities": "translation"}, "federation": "none"})
	ids := haidipIDs(out.Results)
	if !slices.Contains(ids, "urn:ai:lingo.example:agent:translator-001") || !slices.Contains(ids, "urn:ai:lingo.example:agent:translator-zh-en") {
		t.Errorf("capability translation: %v", ids)
	}
	_, out, _ = search(map[string]any{"query": "translation", "filters": map[string]any{"capabilities": []string{"translation", "language"}}, "federation": "none"})
	if !slices.Equal(haidipIDs(out.Results), []string{"urn:ai:lingo.example:agent:translator-001"}) {
		t.Errorf("capabilities translation+language: %v", haidipIDs(out.Results))
	}
	// provider matches the artifact's provider.
	_, out, _ = search(map[string]any{"query": "translate", "filters": map[string]any{"provider": "ExampleAI"}, "federation": "none"})
	if !slices.Equal(haidipIDs(out.Results), []string{"urn:ai:lingo.example:agent:translator-001"}) {
		t.Errorf("provider ExampleAI: %v", haidipIDs(out.Results))
	}

	// authentication matches the methods artifacts declare, in any spelling.
	for _, tc := range []struct {
		auth any
		want []string
	}{
		{"API Key", []string{"urn:ai:lingo.example:agent:translator-001"}},
		{[]string{"apiKey"}, []string{"urn:ai:lingo.example:agent:translator-001"}},
		{"Bearer", []string{"urn:ai:lingo.example:agent:translator-zh-en"}},
	} {
		_, out, _ = search(map[string]any{"query": "translate", "filters": map[string]any{"authentication": tc.auth}, "federation": "none"})
		if !slices.Equal(haidipIDs(out.Results), tc.want) {
			t.Errorf("authentication %v: %v, want %v", tc.auth, haidipIDs(out.Results), tc.want)
		}
	}

	// top and skip page through one ranking; include_metadata adds the record;
	// ranked=false orders by name without scores.
	_, all, _ := search(map[string]any{"query": "agent", "top": 6, "federation": "none"})
	_, page, _ := search(map[string]any{"query": "agent", "top": 2, "skip": 2, "include_metadata": true, "federation": "none"})
	if len(all.Results) < 4 || !slices.Equal(haidipIDs(page.Results), haidipIDs(all.Results[2:4])) {
		t.Fatalf("skip: %v vs %v", haidipIDs(page.Results), haidipIDs(all.Results))
	}
	var md struct {
		Identifier string `json:"identifier"`
	}
	if err := json.Unmarshal(page.Results[0].Metadata, &md); err != nil || md.Identifier != page.Results[0].ID {
		t.Errorf("metadata = %s", page.Results[0].Metadata)
	}
	_, unranked, _ := search(map[string]any{"query": "agent", "top": 6, "ranked": false, "federation": "none"})
	names := make([]string, len(unranked.Results))
	for i, r := range unranked.Results {
		names[i] = r.Name
		if r.Score != nil {
			t.Errorf("ranked=false result with a score: %+v", r)
		}
	}
	if !slices.IsSortedFunc(names, func(a, b string) int { return compareFold(a, b) }) {
		t.Errorf("ranked=false not by name: %v", names)
	}

	// Bad input: HAIDIP's error object, never a 500.
	for _, tc := range []struct {
		name string
		body any
		code string
	}{
		{"no query", `{"filters":{"capabilities":["translation"]}}`, "InvalidInput"},
		{"top too big", `{"query":"x","top":500}`, "InvalidInput"},
		{"negative skip", `{"query":"x","skip":-1}`, "InvalidInput"},
		{"skip past the window", `{"query":"x","top":10,"skip":95}`, "InvalidInput"},
		{"filters not an object", `{"query":"x","filters":[1]}`, "InvalidInput"},
		{"filter value not strings", `{"query":"x","filters":{"capabilities":[1]}}`, "InvalidInput"},
		{"unknown filter", `{"query":"x","filters":{"certification":"iso"}}`, "UnsupportedFilter"},
		{"empty body", ``, "InvalidInput"},
	} {
		status, out, _ := search(tc.body)
		if status != http.StatusBadRequest || out.Error == nil || out.Error.Code != tc.code || out.Error.Message == "" {
			t.Errorf("%s: %d %+v", tc.name, status, out.Error)
		}
	}
}

func compareFold(a, b string) int {
	return slices.Compare([]byte(lowerASCII(a)), []byte(lowerASCII(b)))
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// TestListShorthands: GET /agents?capability=&language= filter like the
// HAIDIP search filters, next to the filter expression.
func TestListShorthands(t *testing.T) {
	f := newBindingsFixture(t, nil)
	list := func(q url.Values) (int, []string) {
		t.Helper()
		var out struct {
			Items []struct {
				Identifier string `json:"identifier"`
			} `json:"items"`
		}
		resp := f.do(http.MethodGet, "/agents?"+q.Encode(), nil, nil, &out)
		var ids []string
		for _, it := range out.Items {
			ids = append(ids, it.Identifier)
		}
		slices.Sort(ids)
		return resp.StatusCode, ids
	}
	for _, tc := range []struct {
		name string
		q    url.Values
		want []string
	}{
		{"capability", url.Values{"capability": {"translation"}}, []string{"urn:ai:lingo.example:agent:translator-001", "urn:ai:lingo.example:agent:translator-zh-en"}},
		{"capability and language", url.Values{"capability": {"translation"}, "language": {"es,fr"}}, []string{"urn:ai:lingo.example:agent:translator-001"}},
		{"language zh", url.Values{"language": {"zh"}}, []string{"urn:ai:lingo.example:agent:translator-zh-en"}},
		{"with a filter expression", url.Values{"capability": {"translation"}, "filter": {`type = "application/adp-agent-card+json"`}}, []string{"urn:ai:lingo.example:agent:translator-zh-en"}},
		{"two capabilities, all required", url.Values{"capability": {"translation", "language"}}, []string{"urn:ai:lingo.example:agent:translator-001"}},
	} {
		status, ids := list(tc.q)
		if status != http.StatusOK || !slices.Equal(ids, tc.want) {
			t.Errorf("%s: %d %v, want %v", tc.name, status, ids, tc.want)
		}
	}
}

// TestLanguagesFilterAndFacet: languages is a filter of GET /agents's
// expression and POST /search, and a facet of POST /explore.
func TestLanguagesFilterAndFacet(t *testing.T) {
	f := newBindingsFixture(t, nil)
	var list struct {
		Items []struct {
			Identifier string `json:"identifier"`
		} `json:"items"`
	}
	if resp := f.do(http.MethodGet, "/agents?"+url.Values{"filter": {"languages = ja"}}.Encode(), nil, nil, &list); resp.StatusCode != http.StatusOK ||
		len(list.Items) != 1 || list.Items[0].Identifier != "urn:ai:lingo.example:agent:translator-zh-en" {
		t.Errorf("filter languages = ja: %d %+v", resp.StatusCode, list.Items)
	}
	status, out := f.search(map[string]any{"query": map[string]any{"text": "translate", "federation": "none", "filter": map[string]any{"languages": []string{"fr"}}}})
	if status != http.StatusOK || !slices.Equal(ids(out.Results), []string{"urn:ai:lingo.example:agent:translator-001"}) {
		t.Errorf("POST /search languages fr: %d %v", status, ids(out.Results))
	}
	var ex search.ExploreAnswer
	if resp := f.do(http.MethodPost, "/explore", map[string]any{"facets": []string{"languages"}}, nil, &ex); resp.StatusCode != http.StatusOK ||
		ex.Facets["languages"]["en"] != 2 || ex.Facets["languages"]["zh"] != 1 {
		t.Errorf("explore languages: %d %+v", resp.StatusCode, ex.Facets)
	}
}
