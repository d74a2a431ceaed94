package search

import (
	"encoding/json"
	"math"
	"sort"
	"strings"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/hybrid"
	"github.com/agentfinder/agentfinder/searchapi/query"
)

// Evidence explains one result (xu §8).
type Evidence struct {
	MatchedTags     []string           `json:"matchedTags"`
	MatchedExamples []MatchedExample   `json:"matchedExamples"`
	MatchedTerms    []string           `json:"matchedTerms"`
	ScoreComponents map[string]float64 `json:"scoreComponents"`
	Freshness       Freshness          `json:"freshness"`
	// Trust and Health are the record's, shown beside the score they do
	// not enter.
	Trust  json.RawMessage `json:"trust,omitempty"`
	Health json.RawMessage `json:"health,omitempty"`
	// MatchedTools name the record's tools that match the request.
	MatchedTools []MatchedTool `json:"matchedTools,omitempty"`
	// Liveness says when the result was ordered below live results of
	// similar relevance (see orderByLiveness).
	Liveness string `json:"liveness,omitempty"`
}

// MatchedExample is a representative query or example close to the
// request, with how close (0..1).
type MatchedExample struct {
	Text   string  `json:"text"`
	Kind   string  `json:"kind"` // representativeQuery or example
	Score  float64 `json:"score"`
	Source string  `json:"-"`
}

// Freshness says when a result's metadata last changed and when it was
// indexed.
type Freshness struct {
	MetadataUpdatedAt string `json:"metadataUpdatedAt,omitempty"`
	IndexedAt         string `json:"indexedAt,omitempty"`
}

// buildEvidence explains one fused result: matched tags (requested,
// preferred or named by a query word), the representative queries and
// examples closest to the request (cosine against the query vector when the
// document's vectors are there, else the share of query words they hold),
// and the score components: keyword and semantic (the fused score's two
// parts), with the xu names tag, context (= keyword) and example.
func buildEvidence(h meiliHit, examplesRaw, vectorsRaw json.RawMessage, q *Query, qterms []string, sc query.Scored, vec []float32, preferred bool) Evidence {
	ev := Evidence{MatchedTags: []string{}, MatchedExamples: []MatchedExample{}, ScoreComponents: map[string]float64{}}
	var tags, rq, ex []string
	_ = json.Unmarshal(h["tags"], &tags)
	_ = json.Unmarshal(h["representativeQueries"], &rq)
	_ = json.Unmarshal(examplesRaw, &ex)
	wanted := map[string]bool{}
	for _, g := range q.Groups {
		if g.Field == normalize.FieldTags && g.Op != opNone {
			for _, v := range g.Vals {
				wanted[strings.ToLower(v)] = true
			}
		}
	}
	for _, t := range q.PreferredTags {
		wanted[strings.ToLower(t)] = true
	}
	tagHits := 0.0
	for _, t := range tags {
		if wanted[strings.ToLower(t)] || overlap(normalize.Terms(t), qterms) > 0 {
			ev.MatchedTags = append(ev.MatchedTags, t)
		}
	}
	if len(tags) > 0 && len(ev.MatchedTags) > 0 {
		tagHits = math.Min(1, float64(len(ev.MatchedTags))/math.Max(1, math.Min(float64(len(tags)), float64(len(qterms)+len(wanted)))))
	}
	// Representative queries have vectors of their own (compared by
	// cosine); examples have none (normalize.EmbedderName's layout) and are
	// compared by words.
	if m, ok := semanticExamples(vectorsRaw, vec, rq); ok {
		ev.MatchedExamples = append(m, lexicalExamples(qterms, nil, ex)...)
	} else {
		ev.MatchedExamples = lexicalExamples(qterms, rq, ex)
	}
	sort.SliceStable(ev.MatchedExamples, func(i, j int) bool { return ev.MatchedExamples[i].Score > ev.MatchedExamples[j].Score })
	ev.MatchedExamples = uniqueExamples(ev.MatchedExamples)
	if len(ev.MatchedExamples) > 3 {
		ev.MatchedExamples = ev.MatchedExamples[:3]
	}
	ev.ScoreComponents["tag"] = Round3(tagHits)
	ev.ScoreComponents["example"] = 0
	if len(ev.MatchedExamples) > 0 {
		ev.ScoreComponents["example"] = max(0, ev.MatchedExamples[0].Score)
	}
	ev.ScoreComponents["keyword"] = Round3(sc.Keyword)
	ev.ScoreComponents["context"] = Round3(sc.Keyword)
	if vec != nil {
		ev.ScoreComponents["semantic"] = Round3(sc.Semantic)
	}
	ev.ScoreComponents["overall"] = Round3(sc.Score)
	if preferred {
		ev.ScoreComponents["preferredBoost"] = preferredWeight
	}
	ev.MatchedTerms = sc.Terms
	if ev.MatchedTerms == nil {
		ev.MatchedTerms = []string{}
	}
	_ = json.Unmarshal(h["updatedAt"], &ev.Freshness.MetadataUpdatedAt)
	_ = json.Unmarshal(h["indexedAt"], &ev.Freshness.IndexedAt)
	ev.Trust, ev.Health = h["trust"], h["health"]
	return ev
}

// semanticExamples scores each embedded representative query by the
// cosine of its stored vector with the query vector. ok is false when there
// is no query vector or the stored vectors do not line up with the texts
// (e.g. indexed before they changed).
func semanticExamples(vectorsRaw json.RawMessage, vec []float32, rq []string) ([]MatchedExample, bool) {
	if vec == nil || len(vectorsRaw) == 0 {
		return nil, false
	}
	vs, err := hybrid.Vectors(meilisearch.Hit{"_vectors": vectorsRaw}, "")
	if err != nil || len(vs) == 0 {
		return nil, false
	}
	texts := normalize.EmbeddedQueries(rq)
	var skip int
	switch len(vs) {
	case len(texts) + 1: // the entry text first
		skip = 1
	case len(texts):
	default:
		return nil, false
	}
	out := make([]MatchedExample, 0, len(texts))
	for i, t := range texts {
		_, cos := hybrid.BestMatch(vec, vs[skip+i:skip+i+1])
		out = append(out, MatchedExample{Text: t, Kind: "representativeQuery", Score: Round3(max(0, cos))})
	}
	return out, true
}

// lexicalExamples scores representative queries and examples by the share
// of the query's words they hold, leaving out those that hold none.
func lexicalExamples(qterms, rq, ex []string) []MatchedExample {
	out := []MatchedExample{}
	if len(qterms) == 0 {
		return out
	}
	add := func(kind string, texts []string) {
		for _, t := range texts {
			if n := overlap(normalize.Terms(t), qterms); n > 0 {
				out = append(out, MatchedExample{Text: t, Kind: kind, Score: Round3(float64(n) / float64(len(qterms)))})
			}
		}
	}
	add("representativeQuery", rq)
	add("example", ex)
	return out
}

// uniqueExamples keeps the first (best scored, as sorted) of examples whose
// texts are the same but for case and spacing: a text that is both a
// representative query and a skill example is one match, not two.
func uniqueExamples(in []MatchedExample) []MatchedExample {
	seen := make(map[string]bool, len(in))
	out := in[:0]
	for _, m := range in {
		key := strings.ToLower(strings.Join(strings.Fields(m.Text), " "))
		if !seen[key] {
			seen[key] = true
			out = append(out, m)
		}
	}
	return out
}

// overlap counts the words of a that match a word of b.
func overlap(a, b []string) int {
	n := 0
	for _, x := range a {
		for _, y := range b {
			if normalize.WordMatch(x, y) {
				n++
				break
			}
		}
	}
	return n
}

// Round3 rounds f to three decimals, as every score and component is shown.
func Round3(f float64) float64 { return math.Round(f*1000) / 1000 }
