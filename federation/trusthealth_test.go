package federation

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// TestTrustHealthRelay: a configured (trusted) upstream's trust and health
// are relayed when valid; a learned one's never are, so its results count
// as trust none (or domain through a relayed publisherVerified, which it
// cannot have) and health unknown, and Query.Trust and Query.Health hold
// every result to what it reports.
func TestTrustHealthRelay(t *testing.T) {
	body := []byte(`{"results": [
		{"identifier": "urn:ai:a.example:agent:signed", "displayName": "A", "type": "application/a2a-agent-card+json", "url": "https://a.example/card.json",
		 "publisherVerified": true, "trust": {"level": "signed", "signer": "did:web:a.example", "extra": 1}, "health": {"status": "up", "latencyMs": 5}},
		{"identifier": "urn:ai:b.example:agent:bogus", "displayName": "B", "type": "application/a2a-agent-card+json", "url": "https://b.example/card.json",
		 "trust": {"level": "super-signed"}, "health": "up"},
		{"identifier": "urn:ai:c.example:agent:plain", "displayName": "C", "type": "application/a2a-agent-card+json", "url": "https://c.example/card.json",
		 "publisherVerified": true}
	]}`)
	now := time.Unix(1e9, 0)
	type th struct{ level, status string }
	read := func(trusted bool) map[string]th {
		a, err := parseAnswer(body, "https://up.example/search", trusted, now)
		if err != nil || len(a.hits) != 3 {
			t.Fatalf("parseAnswer(trusted=%v): %v, %d hits", trusted, err, len(a.hits))
		}
		out := map[string]th{}
		for _, h := range a.hits {
			l, s := EntryTrustHealth(h.Entry)
			out[h.Identifier] = th{l, s}
			if !trusted && (h.Entry["trust"] != nil || h.Entry["health"] != nil) {
				t.Errorf("learned upstream's trust %s health %s relayed", h.Entry["trust"], h.Entry["health"])
			}
			if trusted && h.Identifier == "urn:ai:a.example:agent:signed" && string(h.Entry["trust"]) != `{"level":"signed","signer":"did:web:a.example"}` {
				t.Errorf("relayed trust %s", h.Entry["trust"])
			}
		}
		return out
	}
	trusted := map[string]th{
		"urn:ai:a.example:agent:signed": {"signed", "up"},
		"urn:ai:b.example:agent:bogus":  {"none", "unknown"}, // invalid values are not relayed
		"urn:ai:c.example:agent:plain":  {"domain", "unknown"},
	}
	learned := map[string]th{
		"urn:ai:a.example:agent:signed": {"none", "unknown"},
		"urn:ai:b.example:agent:bogus":  {"none", "unknown"},
		"urn:ai:c.example:agent:plain":  {"none", "unknown"},
	}
	for name, c := range map[string]struct {
		trusted bool
		want    map[string]th
	}{"trusted": {true, trusted}, "learned": {false, learned}} {
		got := read(c.trusted)
		for id, w := range c.want {
			if got[id] != w {
				t.Errorf("%s: %s counts as %+v, want %+v", name, id, got[id], w)
			}
		}
	}

	a, _ := parseAnswer(body, "https://up.example/search", true, now)
	for _, tc := range []struct {
		q    Query
		want []string
	}{
		{Query{}, []string{"urn:ai:a.example:agent:signed", "urn:ai:b.example:agent:bogus", "urn:ai:c.example:agent:plain"}},
		{Query{Trust: []string{"signed"}}, []string{"urn:ai:a.example:agent:signed"}},
		{Query{Trust: []string{"domain", "none"}}, []string{"urn:ai:b.example:agent:bogus", "urn:ai:c.example:agent:plain"}},
		{Query{Health: []string{"up"}}, []string{"urn:ai:a.example:agent:signed"}},
		{Query{Trust: []string{"domain"}, Health: []string{"up"}}, nil},
		{Query{Trust: []string{""}}, nil},
		{Query{Verified: true}, []string{"urn:ai:a.example:agent:signed", "urn:ai:c.example:agent:plain"}},
	} {
		var got []string
		for _, h := range a.hits {
			if tc.q.admits(h) {
				got = append(got, h.Identifier)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("trust %v health %v admits %v, want %v", tc.q.Trust, tc.q.Health, got, tc.want)
		}
	}
}

// TestTrustHealthForwarded: Query.Trust and Query.Health go upstream as the
// filters trust.level and health in both request shapes, without the
// empty value that stands for "nothing passes".
func TestTrustHealthForwarded(t *testing.T) {
	q := Query{Text: "x", Filter: map[string][]string{"tags": {"a"}}, Trust: []string{"signed"}, Health: []string{""}, PageSize: 5}
	for _, s := range []shape{shapeV042, shapeARD} {
		var body struct {
			Query struct {
				Filter map[string][]string `json:"filter"`
			} `json:"query"`
		}
		if err := json.Unmarshal(requestBody(q, "none", "", s), &body); err != nil {
			t.Fatal(err)
		}
		f := body.Query.Filter
		if !slices.Equal(f["trust.level"], []string{"signed"}) || f["health"] != nil || !slices.Equal(f["tags"], []string{"a"}) {
			t.Errorf("%s: filter %v", s, f)
		}
	}
	if len(q.Filter) != 1 {
		t.Fatalf("requestBody changed the query's filter: %v", q.Filter)
	}
	q = Query{Text: "x", Verified: true, PageSize: 5}
	for _, s := range []shape{shapeV042, shapeARD} {
		var body struct {
			Query struct {
				VerifiedOnly bool `json:"verifiedOnly"`
			} `json:"query"`
		}
		if err := json.Unmarshal(requestBody(q, "none", "", s), &body); err != nil || !body.Query.VerifiedOnly {
			t.Errorf("%s: verifiedOnly not forwarded (%v)", s, err)
		}
	}
}
