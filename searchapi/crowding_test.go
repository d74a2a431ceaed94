package searchapi

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/agentfinder/agentfinder/normalize"
)

// crowdingRecords: five look-alike listings a directory publishes for
// businesses under their own names, every endpoint on the directory's
// host, and one agent of another provider answering the request in fewer
// words. single puts that agent on the directory's host too (an index with
// one provider).
func crowdingRecords(single bool) []normalize.Record {
	var recs []normalize.Record
	for i := range 5 {
		name := fmt.Sprintf("firm%d", i)
		r := rec("urn:ai:"+name+".example:agent:"+name, fmt.Sprintf("Insurance Firm %d", i),
			"Insurance claims, insurance invoices and claims handling for insurance customers.", []string{"insurance", "claims"}, nil, nil)
		r.Publisher = name + ".example"
		r.Bindings = []normalize.Binding{{Protocol: "a2a", URL: fmt.Sprintf("https://hub.directory.example/agents/%s", name)}}
		recs = append(recs, r)
	}
	desk := rec("urn:ai:claimsdesk.example:agent:desk", "Claims Desk", "Files your claims.", nil, nil, nil)
	desk.Publisher = "claimsdesk.example"
	desk.Bindings = []normalize.Binding{{Protocol: "a2a", URL: "https://agent.claimsdesk.example/a2a"}}
	if single {
		desk.Bindings[0].URL = "https://hub.directory.example/agents/desk"
	}
	return append(recs, desk)
}

// TestProviderCrowding: on a real Meilisearch, a provider's look-alike
// records that all score above another provider's answer take at most two
// places before it; the others follow it, none is dropped (minScore 0),
// no score changes and pages slice the same order. With every record from
// one provider the answer is in the model's order, scores falling.
func TestProviderCrowding(t *testing.T) {
	const desk = "urn:ai:claimsdesk.example:agent:desk"
	body := func(extra map[string]any) map[string]any {
		b := map[string]any{"query": map[string]any{"text": "insurance claims", "federation": "none"}, "minScore": 0}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	f := newRecordFixture(t, crowdingRecords(false), &topicEmbedder{}, nil)
	status, out := f.search(body(nil))
	if status != http.StatusOK || len(out.Results) != 6 {
		t.Fatalf("status %d, results %v: want all 6", status, ids(out.Results))
	}
	at := slices.IndexFunc(out.Results, func(r searchResult) bool { return r.Identifier == desk })
	above := 0
	for _, r := range out.Results {
		if r.Identifier != desk && r.Score > out.Results[at].Score {
			above++
		}
	}
	if above < 3 {
		t.Fatalf("scores %v: the case needs at least 3 listings scoring above the desk, %d do", scores(out.Results), above)
	}
	if at != 2 {
		t.Errorf("order %v (scores %v): want the desk third, after two of the directory's %d better-scored listings", ids(out.Results), scores(out.Results), above)
	}
	for i := 4; i < len(out.Results); i++ {
		if out.Results[i].Score > out.Results[i-1].Score {
			t.Errorf("the listings behind the desk are not in score order: %v", scores(out.Results))
		}
	}
	// Pages of two slice the same order.
	var paged []string
	tok := ""
	for range 4 {
		extra := map[string]any{"pageSize": 2}
		if tok != "" {
			extra["pageToken"] = tok
		}
		_, page := f.search(body(extra))
		paged = append(paged, ids(page.Results)...)
		if tok = page.PageToken; tok == "" {
			break
		}
	}
	if !slices.Equal(paged, ids(out.Results)) {
		t.Errorf("pages of two %v, one page %v", paged, ids(out.Results))
	}

	one := newRecordFixture(t, crowdingRecords(true), &topicEmbedder{}, nil)
	_, alone := one.search(body(nil))
	if len(alone.Results) != 6 {
		t.Fatalf("one provider: %v, want all 6", ids(alone.Results))
	}
	for i := 1; i < len(alone.Results); i++ {
		if alone.Results[i].Score > alone.Results[i-1].Score {
			t.Errorf("one provider: scores %v, want the model's order, falling", scores(alone.Results))
		}
	}
	if got := alone.Results[len(alone.Results)-1].Identifier; got != desk {
		t.Errorf("one provider: %v, want the desk last, where its score puts it", ids(alone.Results))
	}
}
