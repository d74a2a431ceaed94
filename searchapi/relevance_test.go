package searchapi

import (
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/score"
)

// relevanceOut is POST /search's answer with the reason of an empty one.
type relevanceOut struct {
	searchOut
	Reason string `json:"reason"`
}

func (f *fixture) searchReason(body any) (int, relevanceOut) {
	f.t.Helper()
	var out relevanceOut
	resp := f.do("POST", "/search", body, nil, &out)
	return resp.StatusCode, out
}

// TestCutOff: over the four ranking records, a request one of them
// answers scores above a request of words nothing holds; a cut-off between
// the two keeps the first and empties the second, with a reason; minScore
// 0 returns everything; the default cut-off (the model's) holds every
// result it returns at or above it.
func TestCutOff(t *testing.T) {
	f := newRecordFixture(t, rankingRecords(), &topicEmbedder{}, func(c *Config) { c.MinScore = nil })
	search := func(text string, extra map[string]any) relevanceOut {
		t.Helper()
		body := map[string]any{"query": map[string]any{"text": text, "federation": "none"}}
		for k, v := range extra {
			body[k] = v
		}
		status, out := f.searchReason(body)
		if status != http.StatusOK {
			t.Fatalf("%q %v: %d %+v", text, extra, status, out.Error)
		}
		return out
	}
	all := map[string]any{"minScore": 0}
	rain, noise := search("will it rain tomorrow", all), search("xyzzy plugh", all)
	if len(rain.Results) != 4 || len(noise.Results) != 4 || rain.Reason != "" || noise.Reason != "" {
		t.Fatalf("minScore 0: %v %v, reasons %q %q; want every record", ids(rain.Results), ids(noise.Results), rain.Reason, noise.Reason)
	}
	if rain.Results[0].Identifier != "urn:ai:t.example:agent:umbrella" {
		t.Errorf("rain: %v", ids(rain.Results))
	}
	for _, out := range []relevanceOut{rain, noise} {
		for i, r := range out.Results {
			if r.Score < 0 || r.Score > 100 || (i > 0 && r.Score > out.Results[i-1].Score) {
				t.Errorf("scores %v: want 0..100, falling", scores(out.Results))
			}
		}
	}
	best, noiseBest := rain.Results[0].Score, noise.Results[0].Score
	if best <= noiseBest {
		t.Fatalf("rain scores %v, noise %v: want the answered request above", scores(rain.Results), scores(noise.Results))
	}
	cut := map[string]any{"minScore": noiseBest + 1}
	if out := search("xyzzy plugh", cut); len(out.Results) != 0 || !strings.Contains(out.Reason, "minScore") {
		t.Errorf("noise above its best score: %v, reason %q", scores(out.Results), out.Reason)
	}
	out := search("will it rain tomorrow", cut)
	if len(out.Results) == 0 || out.Results[0].Identifier != "urn:ai:t.example:agent:umbrella" || out.Reason != "" {
		t.Errorf("rain above the noise's best: %v, reason %q", ids(out.Results), out.Reason)
	}
	for _, r := range out.Results {
		if r.Score < noiseBest+1 {
			t.Errorf("%s scores %d below minScore %d", r.Identifier, r.Score, noiseBest+1)
		}
	}
	out = search("will it rain tomorrow", nil)
	for _, r := range out.Results {
		if r.Score < score.Default.MinScore {
			t.Errorf("default cut-off %d: %s scores %d", score.Default.MinScore, r.Identifier, r.Score)
		}
	}
	if (len(out.Results) == 0) != (out.Reason != "") {
		t.Errorf("default cut-off: %v with reason %q", scores(out.Results), out.Reason)
	}
	out = search("will it rain tomorrow", map[string]any{"minScore": best + 1})
	if len(out.Results) != 0 || !strings.Contains(out.Reason, fmt.Sprintf("best scored %d", best)) {
		t.Errorf("above the best: %v, reason %q", scores(out.Results), out.Reason)
	}
}

func TestMinScoreValidation(t *testing.T) {
	f := newFixture(t, nil)
	for _, v := range []any{-1, 101, "20", true, 5.5e3} {
		status, out := f.search(map[string]any{"query": map[string]any{"text": "weather"}, "minScore": v})
		if status != http.StatusBadRequest || out.Error.Code != door.CodeInvalidRequest || !strings.Contains(out.Error.Message, "minScore") {
			t.Errorf("minScore %v: %d %+v", v, status, out.Error)
		}
	}
	for _, v := range []any{0, 12.5, 100, nil} {
		if status, out := f.search(map[string]any{"query": map[string]any{"text": "weather"}, "minScore": v}); status != http.StatusOK {
			t.Errorf("minScore %v: %d %+v", v, status, out.Error)
		}
	}
}

// TestMinScorePaging: a page token is bound to the request's minScore.
func TestMinScorePaging(t *testing.T) {
	f := newFixture(t, nil)
	q := map[string]any{"text": "assistant", "federation": "none"}
	status, first := f.search(map[string]any{"query": q, "pageSize": 3, "minScore": 0})
	if status != http.StatusOK || first.PageToken == "" {
		t.Fatalf("first page: %d %q %+v", status, first.PageToken, first.Error)
	}
	status, next := f.search(map[string]any{"query": q, "pageSize": 3, "minScore": 0, "pageToken": first.PageToken})
	if status != http.StatusOK || len(next.Results) == 0 || slices.Contains(ids(first.Results), next.Results[0].Identifier) {
		t.Fatalf("next page: %d %v", status, ids(next.Results))
	}
	if status, out := f.search(map[string]any{"query": q, "pageSize": 3, "minScore": 30, "pageToken": first.PageToken}); status != http.StatusBadRequest {
		t.Fatalf("token with another minScore: %d %+v", status, out.Error)
	}
}

// TestUpstreamRescored federates to a second registry that returns every
// entry it holds (no cut-off): its results come back scored on this
// registry's scale together with the local ones, ordered by that score and
// held to the request's cut-off.
func TestUpstreamRescored(t *testing.T) {
	emb := &topicEmbedder{}
	upstream := newRecordFixture(t, []normalize.Record{
		rec("urn:ai:up.example:agent:storm", "Storm Watch", "Rain and storm warnings with a radar map.", []string{"weather"}, nil, nil),
		rec("urn:ai:up.example:agent:jukebox", "Jukebox", "Plays music.", []string{"music"}, nil, nil),
	}, emb, func(c *Config) { c.MinScore = new(int) })
	fed, err := federation.New(federation.Config{Name: "https://finder.test.example", Upstreams: []string{upstream.http.URL},
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fed.Close)
	f := newRecordFixture(t, rankingRecords(), emb, func(c *Config) { c.Federation = fed; c.MinScore = nil })

	type result struct {
		Identifier string `json:"identifier"`
		Score      int    `json:"score"`
	}
	search := func(minScore int) map[string]int {
		t.Helper()
		var raw struct {
			Results   []result             `json:"results"`
			Upstreams []federation.Outcome `json:"upstreams"`
		}
		resp := f.do("POST", "/search", map[string]any{"query": map[string]any{"text": "will it rain tomorrow", "federation": "auto"},
			"pageSize": 20, "minScore": minScore}, nil, &raw)
		if resp.StatusCode != http.StatusOK || len(raw.Upstreams) != 1 || raw.Upstreams[0].Status != "ok" {
			t.Fatalf("status %d, upstreams %+v", resp.StatusCode, raw.Upstreams)
		}
		got := map[string]int{}
		for i, r := range raw.Results {
			if r.Score < minScore || (i > 0 && r.Score > raw.Results[i-1].Score) {
				t.Errorf("results %+v: want scores from %d up, falling", raw.Results, minScore)
			}
			got[r.Identifier] = r.Score
		}
		return got
	}
	all := search(0)
	storm, ok1 := all["urn:ai:up.example:agent:storm"]
	jukebox, ok2 := all["urn:ai:up.example:agent:jukebox"]
	if !ok1 || !ok2 || len(all) != 6 {
		t.Fatalf("minScore 0: %v, want the four local and two upstream records", all)
	}
	if storm <= jukebox || storm <= all["urn:ai:t.example:agent:tunes"] {
		t.Errorf("scores %v: the upstream's rain agent must outscore its jukebox and the local music agent", all)
	}
	// With a cut-off, local and upstream results pass the one rule
	// (score.Model.Keep): at least minScore and near enough the best.
	cut := search(jukebox + 1)
	best := 0
	for _, s := range all {
		best = max(best, s)
	}
	for id, s := range all {
		got, kept := cut[id]
		if want := score.Default.Keep(s, best, jukebox+1); kept != want || kept && got != s {
			t.Errorf("minScore %d: %s (score %d of best %d) kept %v with %d, want kept %v", jukebox+1, id, s, best, kept, got, want)
		}
	}
	if _, ok := cut["urn:ai:up.example:agent:jukebox"]; ok {
		t.Errorf("minScore %d: %v keeps the jukebox", jukebox+1, cut)
	}
}

func scores(rs []searchResult) []int {
	out := make([]int, len(rs))
	for i, r := range rs {
		out[i] = r.Score
	}
	return out
}
