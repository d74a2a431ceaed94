package searchapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/filter"
	"github.com/agentfinder/agentfinder/searchapi/query"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// topicEmbedder is a deterministic stand-in for the sentence model: each
// word of a small vocabulary counts on its topic's axis, so synonyms that
// share no letters ("rain", "precipitation") land close, and a constant
// last component keeps every vector non-zero. It counts its calls.
type topicEmbedder struct{ calls atomic.Int64 }

var topicAxes = map[string]int{
	"rain": 0, "rainfall": 0, "weather": 0, "precipitation": 0, "umbrella": 0, "storm": 0, "forecast": 0, "radar": 0,
	"flight": 1, "flights": 1, "travel": 1, "trip": 1, "hotel": 1, "airline": 1, "tokyo": 1,
	"sales": 2, "invoice": 2, "ledger": 2, "spreadsheets": 2, "claims": 2, "insurance": 2,
	"song": 3, "songs": 3, "music": 3, "tunes": 3, "play": 3,
	"health": 4, "healthcare": 4, "patient": 4, "records": 4, "medical": 4,
}

const topicDims = 6

func (*topicEmbedder) Dimensions() int { return topicDims }

func (e *topicEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(1)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = topicVector(t)
	}
	return out, nil
}

func topicVector(text string) []float32 {
	v := make([]float32, topicDims)
	v[topicDims-1] = 0.05
	for _, w := range normalize.Words(text) {
		if a, ok := topicAxes[w]; ok {
			v[a]++
		}
	}
	return v
}

// embedTexts lays out a record's vector texts as ingest does: the entry
// text, then its embedded representative queries (examples get no vector).
func embedTexts(r normalize.Record) []string {
	entry := strings.Join([]string{r.DisplayName, r.Description, strings.Join(r.Capabilities, ", "),
		strings.Join(r.SkillNames, ", "), strings.Join(r.Tags, ", ")}, "\n")
	return append([]string{entry}, normalize.EmbeddedQueries(r.RepresentativeQueries)...)
}

// embedDoc returns a document's _vectors for normalize.EmbedderName.
func embedDoc(t testing.TB, emb search.Embedder, r normalize.Record) map[string]any {
	t.Helper()
	vs, err := emb.Embed(context.Background(), embedTexts(r))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{normalize.EmbedderName: vs}
}

// newRecordFixture serves recs (with vectors when emb is set) from a fresh
// index.
func newRecordFixture(t testing.TB, recs []normalize.Record, emb search.Embedder, mut func(*Config)) *fixture {
	t.Helper()
	cfg := Config{PublicURL: "https://finder.test.example", QueryRewriter: query.Rewrite, MinScore: new(int),
		PageTokenKey: []byte("test-key"), Now: func() time.Time { return testNow }}
	return serveRecords(t, "searchapi_fused", recs, emb, nil, cfg, mut)
}

func rec(id, name, desc string, tags []string, rq, ex []string) normalize.Record {
	return normalize.Record{Identifier: id, DisplayName: name, Description: desc, Type: "application/a2a-agent-card+json",
		URL: "https://t.example/" + id, Tags: tags, RepresentativeQueries: rq, Examples: ex, UpdatedAt: "2026-05-01"}
}

// rankingRecords: one entry matching the request by words and topic, one by
// topic only (no shared word), one by a word only (another topic), one by
// neither.
func rankingRecords() []normalize.Record {
	return []normalize.Record{
		rec("urn:ai:t.example:agent:umbrella", "Umbrella Advisor", "Says whether rain is coming tomorrow and you need an umbrella.",
			[]string{"weather"}, []string{"should I take an umbrella"}, nil),
		rec("urn:ai:t.example:agent:radar", "Precipitation Radar", "Live precipitation and storm maps.",
			[]string{"maps"}, nil, nil),
		rec("urn:ai:t.example:agent:ledger", "Sales Ledger", "Sales spreadsheets and invoice totals, due tomorrow.",
			[]string{"finance"}, nil, nil),
		rec("urn:ai:t.example:agent:tunes", "Tunes Player", "Plays music and songs.",
			[]string{"music"}, nil, nil),
	}
}

func TestFusedRanking(t *testing.T) {
	text := "will it rain tomorrow"
	emb := &topicEmbedder{}
	f := newRecordFixture(t, rankingRecords(), emb, nil)
	emb.calls.Store(0) // count the request's embeddings only
	status, out := f.search(map[string]any{"query": map[string]any{"text": text, "federation": "none"}, "includeEvidence": true})
	if status != http.StatusOK {
		t.Fatalf("status %d %+v", status, out.Error)
	}
	// Words and topic beat topic alone, which beats a word of another topic,
	// which beats nothing; the semantic list holds every entry.
	want := []string{"urn:ai:t.example:agent:umbrella", "urn:ai:t.example:agent:radar", "urn:ai:t.example:agent:ledger", "urn:ai:t.example:agent:tunes"}
	if got := ids(out.Results); !slices.Equal(got, want) {
		t.Fatalf("hybrid order %v, want %v", got, want)
	}
	for i, r := range out.Results {
		c := r.Evidence.ScoreComponents
		overall := 0.2*c["keyword"] + 0.8*c["semantic"]
		if math.Abs(overall-c["overall"]) > 0.002 || r.Score < 0 || r.Score > 100 {
			t.Errorf("%s: score %d, components %v: overall is not 0.2 keyword + 0.8 semantic", r.Identifier, r.Score, c)
		}
		if i > 0 && r.Score > out.Results[i-1].Score {
			t.Errorf("scores not in order: %v", out.Results)
		}
	}
	if c := out.Results[1].Evidence.ScoreComponents; c["keyword"] != 0 || c["semantic"] <= out.Results[2].Evidence.ScoreComponents["semantic"] {
		t.Errorf("radar components %v, want semantic only and above the ledger's", c)
	}
	if emb.calls.Load() != 1 {
		t.Errorf("the query was embedded %d times for one request, want once", emb.calls.Load())
	}

	// Keyword only (no model): the fused keyword side alone; an entry that
	// shares no word with the request is not found.
	k := newRecordFixture(t, rankingRecords(), nil, nil)
	_, out = k.search(map[string]any{"query": map[string]any{"text": text, "federation": "none"}, "includeEvidence": true})
	want = []string{"urn:ai:t.example:agent:umbrella", "urn:ai:t.example:agent:ledger"}
	if got := ids(out.Results); !slices.Equal(got, want) {
		t.Fatalf("keyword-only order %v, want %v", got, want)
	}
	if c := out.Results[0].Evidence.ScoreComponents; c["keyword"] != c["overall"] || c["keyword"] <= 0 {
		t.Errorf("keyword-only components %v", c)
	} else if _, ok := c["semantic"]; ok {
		t.Errorf("keyword-only result has a semantic component: %v", c)
	}
	if terms := out.Results[0].Evidence.MatchedTerms; !slices.Contains(terms, "rain") || !slices.Contains(terms, "tomorrow") {
		t.Errorf("matchedTerms %v", terms)
	}
}

// TestFusedFilters runs every filter with a vector: the vector sub-query
// alone reaches every entry, so the results are exactly the entries the
// filter admits only if every sub-query (vector and terms) carries it.
func TestFusedFilters(t *testing.T) {
	f := newFixtureEmbedded(t, nil, &topicEmbedder{})
	text := "weather forecast for my flight, healthcare claims and records"
	all := f.admitted(t, "")
	cases := []map[string]any{
		{"type": "application/a2a-agent-card+json"},
		{"type": "application/mcp-server+json"},
		{"compliance": "hipaa"},
		{"publisher": "weather.example"},
		{"tags": []string{"forecast", "flights"}},
		{"requiredTags": []string{"healthcare", "claims"}},
		{"excludedTags": []string{"filler"}},
		{"capabilities": "AlertsTool"},
		{"protocols": []string{"mcp"}},
		{"verifiedOnly": true},
		{"includeStale": true},
		{"type": "application/a2a-agent-card+json", "excludedTags": []string{"filler"}, "verifiedOnly": true},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			f.t = t
			qq := map[string]any{"text": text, "federation": "none"}
			for k, v := range c {
				qq[k] = v
			}
			body := map[string]any{"query": qq, "pageSize": 100}
			q := f.parse(t, body)
			want := f.admitted(t, f.srv.engine.Filter(q))
			if len(want) == 0 || (len(want) == len(all) && !q.IncludeStale) {
				t.Fatalf("filter %q admits %d of %d entries: not a test", f.srv.engine.Filter(q), len(want), len(all))
			}
			status, out := f.search(body)
			if status != http.StatusOK {
				t.Fatalf("status %d %+v", status, out.Error)
			}
			got := ids(out.Results)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("got %d results %v, want the %d the filter admits %v", len(got), got, len(want), want)
			}
		})
	}
	// Preferred tags rank without filtering: the same entries, the tagged
	// ones first among comparable matches.
	f.t = t
	_, plain := f.search(map[string]any{"query": map[string]any{"text": text, "federation": "none"}, "pageSize": 100})
	_, pref := f.search(map[string]any{"query": map[string]any{"text": text, "federation": "none", "preferredTags": "filler"}, "pageSize": 100})
	a, b := ids(plain.Results), ids(pref.Results)
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) || slices.Equal(ids(plain.Results), ids(pref.Results)) {
		t.Fatalf("preferredTags changed the set or not the order: %v / %v", ids(plain.Results), ids(pref.Results))
	}
	for _, r := range pref.Results {
		for _, p := range plain.Results {
			if p.Identifier == r.Identifier && p.Score != r.Score {
				t.Errorf("%s: preferred score %d, plain %d: the boost must not change the shown score", r.Identifier, r.Score, p.Score)
			}
		}
	}
}

// parse validates a search body as handleSearch does.
func (f *fixture) parse(t testing.TB, body map[string]any) *search.Query {
	t.Helper()
	raw := door.MustJSON(body)
	var sb search.Request
	if err := json.Unmarshal(raw, &sb); err != nil {
		t.Fatal(err)
	}
	q, err := search.ParseRequest(&sb, raw, true)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// admitted lists, sorted, the identifiers of every document the Meilisearch
// filter admits.
func (f *fixture) admitted(t testing.TB, expr filter.Expr) []string {
	t.Helper()
	resp, err := f.meili.Client.Index(f.index).Search("", &meilisearch.SearchRequest{Filter: expr.Filter(), Limit: 1000,
		AttributesToRetrieve: []string{"identifier"}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range resp.Hits {
		var id string
		if err := json.Unmarshal(h["identifier"], &id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// pagingRecords are n entries, every one holding "assistant", a third of
// them "weather" too, a fifth tagged "gold": more than one shallow tier.
func pagingRecords(n int) []normalize.Record {
	out := make([]normalize.Record, n)
	topics := []string{"weather forecast", "flight and hotel", "sales invoice", "music and songs", "patient records"}
	for i := range n {
		desc := fmt.Sprintf("An assistant for %s, number %d.", topics[i%len(topics)], i)
		if i%3 == 0 {
			desc += " Also weather."
		}
		tags := []string{"assistant"}
		if i%5 == 0 {
			tags = append(tags, "gold")
		}
		out[i] = rec(fmt.Sprintf("urn:ai:p.example:agent:a%03d", i), fmt.Sprintf("Assistant %03d", i), desc, tags, nil, nil)
	}
	return out
}

// TestFusedPaging pages through more results than the shallow tier holds
// with small pages: the pages together are the one long ranking, with no
// repeat and no gap, with and without a vector and a preferred tag.
func TestFusedPaging(t *testing.T) {
	const n = 130
	recs := pagingRecords(n)
	for _, tc := range []struct {
		name string
		emb  search.Embedder
		pref []string
		want int // results in all
	}{
		{"hybrid", &topicEmbedder{}, nil, n},
		{"hybrid preferred", &topicEmbedder{}, []string{"gold"}, n},
		{"keyword only", nil, nil, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newRecordFixture(t, recs, tc.emb, nil)
			qq := map[string]any{"text": "weather assistant please", "federation": "none"}
			if tc.pref != nil {
				qq["preferredTags"] = tc.pref
			}
			var long []string
			tok := ""
			for page := 0; ; page++ {
				body := map[string]any{"query": qq, "pageSize": 100}
				if tok != "" {
					body["pageToken"] = tok
				}
				status, out := f.search(body)
				if status != http.StatusOK || page > 3 {
					t.Fatalf("status %d page %d %+v", status, page, out.Error)
				}
				long = append(long, ids(out.Results)...)
				if tok = out.PageToken; tok == "" {
					break
				}
			}
			if len(long) != tc.want {
				t.Fatalf("%d results over pages of 100, want %d", len(long), tc.want)
			}
			var paged []string
			tok = ""
			for page := 0; ; page++ {
				body := map[string]any{"query": qq, "pageSize": 7}
				if tok != "" {
					body["pageToken"] = tok
				}
				status, out := f.search(body)
				if status != http.StatusOK || page > n {
					t.Fatalf("status %d page %d %+v", status, page, out.Error)
				}
				if len(out.Results) == 0 || len(out.Results) > 7 {
					t.Fatalf("page %d has %d results", page, len(out.Results))
				}
				paged = append(paged, ids(out.Results)...)
				if tok = out.PageToken; tok == "" {
					break
				}
			}
			if !slices.Equal(paged, long) {
				t.Fatalf("pages of 7 (%d results) differ from pages of 100 (%d):\n%v\n%v", len(paged), len(long), paged, long)
			}
			seen := map[string]bool{}
			for _, id := range paged {
				if seen[id] {
					t.Fatalf("%s repeated", id)
				}
				seen[id] = true
			}
			if tc.pref != nil {
				// The best gold entries lead: a preferred tag weighs 1.5.
				if d := f.byName[paged[0]]; !slices.Contains(d.Tags, "gold") {
					t.Errorf("first result %s is not tagged gold", paged[0])
				}
			}
		})
	}
}

func TestFusedEvidence(t *testing.T) {
	recs := []normalize.Record{
		rec("urn:ai:t.example:agent:concierge", "Concierge", "Helps with many errands.", []string{"travel", "weather"},
			[]string{"book a hotel in Tokyo", "will it rain on my trip"}, []string{"play my favourite songs"}),
		rec("urn:ai:t.example:agent:ledger", "Sales Ledger", "Sales spreadsheets and invoice totals.", []string{"finance"}, nil, nil),
	}
	emb := &topicEmbedder{}
	f := newRecordFixture(t, recs, emb, nil)
	emb.calls.Store(0)
	status, out := f.search(map[string]any{"query": map[string]any{"text": "rainfall forecast for a trip", "federation": "none",
		"preferredTags": []string{"weather"}}, "includeEvidence": true})
	if status != http.StatusOK || len(out.Results) != 2 {
		t.Fatalf("status %d results %v %+v", status, ids(out.Results), out.Error)
	}
	top := out.Results[0]
	if top.Identifier != "urn:ai:t.example:agent:concierge" || top.Evidence == nil {
		t.Fatalf("top %+v", top)
	}
	ev := top.Evidence
	// The closest representative query by the vectors: the weather one
	// (two weather words and one travel word against one weather and one
	// travel), though it shares only "trip" with the request.
	qv := topicVector("rainfall forecast for a trip")
	wantCos := cosine(qv, topicVector("will it rain on my trip"))
	if len(ev.MatchedExamples) != 2 || ev.MatchedExamples[0].Text != "will it rain on my trip" || ev.MatchedExamples[0].Kind != "representativeQuery" ||
		math.Abs(ev.MatchedExamples[0].Score-wantCos) > 0.001 {
		t.Fatalf("matchedExamples %+v, want the two representative queries, the rain one first with cosine %.3f", ev.MatchedExamples, wantCos)
	}
	// Examples have no vectors: one sharing no word with the request
	// ("play my favourite songs") is no match.
	for _, m := range ev.MatchedExamples {
		if m.Kind == "example" {
			t.Errorf("matched example %+v shares no word with the request", m)
		}
	}
	if !slices.Equal(ev.MatchedTags, []string{"weather"}) {
		t.Errorf("matchedTags %v, want weather (preferred; no query word names a tag)", ev.MatchedTags)
	}
	c := ev.ScoreComponents
	for _, k := range []string{"keyword", "semantic", "context", "example", "tag", "overall", "preferredBoost"} {
		if _, ok := c[k]; !ok {
			t.Errorf("scoreComponents lacks %s: %v", k, c)
		}
	}
	if c["context"] != c["keyword"] || c["example"] != ev.MatchedExamples[0].Score || c["semantic"] <= 0.5 || c["keyword"] <= 0 ||
		top.Score < 0 || top.Score > 100 {
		t.Errorf("scoreComponents %v, score %d", c, top.Score)
	}
	if !slices.Equal(ev.MatchedTerms, []string{"trip"}) {
		t.Errorf("matchedTerms %v, want [trip]", ev.MatchedTerms)
	}
	if _, ok := out.Results[1].Evidence.ScoreComponents["preferredBoost"]; ok {
		t.Errorf("the ledger is not preferred: %v", out.Results[1].Evidence.ScoreComponents)
	}
	if emb.calls.Load() != 1 {
		t.Errorf("the query was embedded %d times, want once", emb.calls.Load())
	}
}

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}
