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
