package searchapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
)

type adpOut struct {
	Results []struct {
		AgentCard   map[string]json.RawMessage `json:"agent_card"`
		Score       float64                    `json:"score"`
		MatchedTags []string                   `json:"matched_tags"`
	} `json:"results"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (o adpOut) cardNames() []string {
	var out []string
	for _, r := range o.Results {
		var n string
		_ = json.Unmarshal(r.AgentCard["name"], &n)
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func TestADPDiscover(t *testing.T) {
	f := newBindingsFixture(t, nil)
	discover := func(body any) (int, adpOut) {
		t.Helper()
		var out adpOut
		resp := f.do(http.MethodPost, "/adp/discover", body, nil, &out)
		return resp.StatusCode, out
	}

	// Skill-tag rules: exact, prefix (nlp/*), parent (nlp matches
	// nlp/translation), flat tags; an agent must match one requested tag.
	for _, tc := range []struct {
		name    string
		body    any
		cards   []string
		matched map[string][]string
	}{
		{"exact", map[string]any{"tags": []string{"nlp/translation"}, "federation": "none"},
			[]string{"translator-zh-en"}, map[string][]string{"translator-zh-en": {"nlp/translation"}}},
		{"prefix", map[string]any{"tags": []string{"nlp/*"}, "federation": "none"},
			[]string{"MultiLang Text Translator", "translator-zh-en"}, map[string][]string{"translator-zh-en": {"nlp/translation", "nlp/text-analysis"}, "MultiLang Text Translator": {"nlp"}}},
		{"parent", map[string]any{"tags": []string{"nlp"}, "query": "translate chinese", "federation": "none"},
			[]string{"MultiLang Text Translator", "translator-zh-en"}, map[string][]string{"translator-zh-en": {"nlp/translation", "nlp/text-analysis"}}},
		{"vision", map[string]any{"tags": []string{"vision"}, "federation": "none"},
			[]string{"ocr-reader"}, map[string][]string{"ocr-reader": {"vision/ocr"}}},
		{"flat", map[string]any{"tags": []string{"python"}, "federation": "none"},
			[]string{"translator-zh-en"}, map[string][]string{"translator-zh-en": {"python"}}},
		{"no such skill", map[string]any{"tags": []string{"audio/speech-to-text"}, "federation": "none"}, nil, nil},
	} {
		status, out := discover(tc.body)
		if status != http.StatusOK || !slices.Equal(out.cardNames(), tc.cards) {
			t.Errorf("%s: %d cards %v, want %v", tc.name, status, out.cardNames(), tc.cards)
			continue
		}
		for _, r := range out.Results {
			var n string
			_ = json.Unmarshal(r.AgentCard["name"], &n)
			if want, ok := tc.matched[n]; ok && !slices.Equal(r.MatchedTags, want) {
				t.Errorf("%s: %s matched_tags %v, want %v", tc.name, n, r.MatchedTags, want)
			}
			if r.Score < 0 || r.Score > 1 || r.MatchedTags == nil {
				t.Errorf("%s: %s score %v matched %v", tc.name, n, r.Score, r.MatchedTags)
			}
		}
	}

	// Agent cards in ADP's shape: the inline card as published, or one
	// built from the record.
	_, out := discover(map[string]any{"tags": []string{"nlp/*"}, "query": "translation", "federation": "none"})
	for _, r := range out.Results {
		var card struct {
			ID        string            `json:"id"`
			Name      string            `json:"name"`
			Skills    []string          `json:"skills"`
			Seq       int               `json:"seq"`
			Endpoints []json.RawMessage `json:"endpoints"`
			Metadata  map[string]any    `json:"metadata"`
		}
		b, _ := json.Marshal(r.AgentCard)
		if err := json.Unmarshal(b, &card); err != nil {
			t.Fatalf("card %s: %v", b, err)
		}
		switch card.Name {
		case "translator-zh-en":
			if card.ID != "agent://translator-zh-en" || card.Seq != 42 || len(card.Endpoints) != 2 || !slices.Equal(card.Skills, []string{"nlp/translation", "nlp/text-analysis", "python"}) {
				t.Errorf("inline ADP card changed: %s", b)
			}
		case "MultiLang Text Translator":
			if card.ID != "urn:ai:lingo.example:agent:translator-001" || len(card.Skills) == 0 || len(card.Endpoints) != 1 {
				t.Errorf("built card: %s", b)
			}
		default:
			t.Errorf("unexpected card %s", b)
		}
	}

	// limit and min_score.
	_, out = discover(map[string]any{"query": "weather", "limit": 1, "federation": "none"})
	if len(out.Results) != 1 {
		t.Errorf("limit 1: %d results", len(out.Results))
	}
	_, low := discover(map[string]any{"query": "weather forecast umbrella", "min_score": 0, "federation": "none"})
	_, high := discover(map[string]any{"query": "weather forecast umbrella", "min_score": 0.5, "federation": "none"})
	if len(high.Results) >= len(low.Results) || len(high.Results) == 0 {
		t.Errorf("min_score 0.5 kept %d of %d", len(high.Results), len(low.Results))
	}
	for _, r := range high.Results {
		if r.Score < 0.5 {
			t.Errorf("min_score 0.5 kept a result scoring %v", r.Score)
		}
	}

	// Bad input: ADP's error names, never a 500.
	for _, tc := range []struct {
		name string
		body any
	}{
		{"neither tags nor query", `{}`},
		{"blank tags", `{"tags":[" "]}`},
		{"tags not strings", `{"tags":[1]}`},
		{"min_score out of range", `{"query":"x","min_score":2}`},
		{"limit zero", `{"query":"x","limit":0}`},
		{"not JSON", `[`},
	} {
		status, out := discover(tc.body)
		if status != http.StatusBadRequest || out.Error == nil || out.Error.Code != "INVALID_REQUEST" || out.Error.Message == "" {
			t.Errorf("%s: %d %+v", tc.name, status, out.Error)
		}
	}
}
