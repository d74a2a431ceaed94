package search

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/federation"
)

// TestEncodeWritesTheSearchAnswer: what Encode writes is the one answer
// type its readers decode (federation.SearchAnswer): every key it writes
// is a field of that type, and each reads back as written.
func TestEncodeWritesTheSearchAnswer(t *testing.T) {
	ans := &Answer{
		Hits: []federation.Hit{{Identifier: "urn:ai:a.example:agent:x", Local: true, Entry: map[string]json.RawMessage{
			"identifier": json.RawMessage(`"urn:ai:a.example:agent:x"`), "displayName": json.RawMessage(`"X"`),
			"score": json.RawMessage(`87`), "source": json.RawMessage(`"https://finder.example"`),
			"trust": json.RawMessage(`{"level":"signed","signer":"did:web:a.example"}`), "health": json.RawMessage(`{"status":"up","latencyMs":42}`),
			"evidence": json.RawMessage(`{"matchedTags":["weather"],"matchedExamples":[{"text":"rain?"}],"matchedTerms":["rain"],"scoreComponents":{"keyword":0.5}}`),
		}}},
		Referrals: []json.RawMessage{json.RawMessage(`{"identifier":"urn:ai:b.example:registry:r","displayName":"R","url":"https://b.example/search"}`)},
		Upstreams: []federation.Outcome{{Registry: "https://b.example/search", Status: "ok", Results: 3}},
		Federated: true, PageToken: "tok", Reason: "below the cut-off",
	}
	raw := ans.Encode()
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		t.Fatal(err)
	}
	fields := map[string]bool{}
	st := reflect.TypeFor[federation.SearchAnswer]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		fields[name] = true
	}
	for k := range keys {
		if !fields[k] {
			t.Errorf("Encode writes %q, which federation.SearchAnswer does not have", k)
		}
	}
	var got federation.SearchAnswer
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	results, err := got.ShownResults()
	if err != nil || len(results) != 1 {
		t.Fatalf("results %+v, %v", results, err)
	}
	r := results[0]
	if r.Identifier != "urn:ai:a.example:agent:x" || r.Score.String() != "87" || r.SourceLabel() != "https://finder.example" ||
		r.Trust == nil || r.Trust.Signer != "did:web:a.example" || r.Health == nil || r.Health.LatencyMs != 42 ||
		r.Evidence == nil || r.Evidence.ScoreComponents["keyword"].String() != "0.5" {
		t.Errorf("result read back as %+v", r)
	}
	refs, err := got.ShownReferrals()
	if err != nil || len(refs) != 1 || refs[0].URL != "https://b.example/search" {
		t.Errorf("referrals %+v, %v", refs, err)
	}
	if got.PageToken != "tok" || got.Reason != "below the cut-off" || len(got.Upstreams) != 1 || got.Upstreams[0].Results != 3 {
		t.Errorf("answer read back as %+v", got)
	}
}

// TestShownReadsWhatEncodeWrites: what Shown reads from an answer's values
// is what a reader of Encode's bytes shows (federation.SearchAnswer's
// Shown), for local and upstream results, values Encode leaves out (empty,
// an upstream's invalid JSON) and hits without an entry.
func TestShownReadsWhatEncodeWrites(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name string
		ans  *Answer
	}{
		{name: "empty", ans: &Answer{}},
		{name: "cut off", ans: &Answer{Hits: []federation.Hit{}, Reason: "below minScore 25"}},
		{name: "local and upstream", ans: &Answer{
			Hits: []federation.Hit{
				{Local: true, Entry: map[string]json.RawMessage{
					"identifier": raw(`"urn:ai:a.example:agent:x"`), "displayName": raw(`"X \u00e9"`), "type": raw(`"application/a2a-agent-card+json"`),
					"url": raw(`"https://a.example/x.json"`), "description": raw(`"Books flights.\nSecond line."`), "score": raw(`87.5`),
					"source": raw(`"https://finder.example"`), "tags": raw(`["travel"]`), "empty": raw(``),
					"trust":    raw(`{"level":"none","problems":[{"code":"bad_signature"}]}`),
					"health":   raw(`{"status":"up","latencyMs":42}`),
					"evidence": raw(`{"matchedTerms":["flight"],"scoreComponents":{"keyword":0.5}}`),
				}},
				{Local: false, Entry: map[string]json.RawMessage{
					"identifier": raw(`"urn:ai:up.example:mcp:y"`), "displayName": raw(`{not json`), "score": raw(`12`), "DESCRIPTION": raw(`"Named in capitals."`),
					"source": raw(`{"catalog":"https://up.example/.well-known/ai-catalog.json"}`), "health": raw(`null`),
				}},
				{Identifier: "urn:ai:gone.example:agent:z"},
			},
			Referrals: []json.RawMessage{raw(`{"identifier":"urn:ai:b.example:registry:r","displayName":"R","url":"https://b.example/search"}`)},
			Federated: true, PageToken: "tok",
		}},
		{name: "invalid referral", ans: &Answer{
			Hits:      []federation.Hit{{Local: true, Entry: map[string]json.RawMessage{"identifier": raw(`"urn:ai:a.example:agent:x"`)}}},
			Referrals: []json.RawMessage{raw(`{"identifier":`)},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var read federation.SearchAnswer
			if err := json.Unmarshal(tc.ans.Encode(), &read); err != nil {
				t.Fatal(err)
			}
			want, err := read.Shown()
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.ans.Shown()
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Results) != len(want.Results) || len(got.Referrals) != len(want.Referrals) {
				t.Fatalf("Shown read %d results and %d referrals, the encoded answer %d and %d", len(got.Results), len(got.Referrals), len(want.Results), len(want.Referrals))
			}
			for i := range want.Results {
				if !reflect.DeepEqual(got.Results[i], want.Results[i]) {
					t.Errorf("result %d: Shown read\n%+v\nthe encoded answer\n%+v", i, got.Results[i], want.Results[i])
				}
			}
			for i := range want.Referrals {
				if got.Referrals[i] != want.Referrals[i] {
					t.Errorf("referral %d: Shown read %+v, the encoded answer %+v", i, got.Referrals[i], want.Referrals[i])
				}
			}
			if got.PageToken != want.PageToken || got.Reason != want.Reason {
				t.Errorf("Shown read pageToken %q reason %q, the encoded answer %q %q", got.PageToken, got.Reason, want.PageToken, want.Reason)
			}
		})
	}
}
