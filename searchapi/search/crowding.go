package search

import (
	"encoding/json"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/query"
	"github.com/agentfinder/agentfinder/searchapi/score"
)

// How one provider's many records share a page. A directory, an
// aggregator or a registry can publish thousands of look-alike listings
// from one provider (normalize.ProviderKey: the endpoint's registrable
// domain, else the publisher); left alone, a topical request meets a page
// of them and another provider's right answer falls behind. As web search
// engines crowd hosts, at most two results (score.Model.Crowding) of one provider
// come before the results of other providers that pass the cut-off rule
// (score.Model.Keep); a provider's further results move behind those, in
// their order. Nothing is dropped (minScore 0 still returns every result)
// and no score changes; an index whose results all come from one provider
// is answered in the model's order, as before. The rule orders the pool
// (the results the model ranks), where the look-alikes compete; results
// past it keep their fused order. The rule and its setting are the
// model's (score.Model.Crowd); measured in docs/MEASUREMENTS.md (ninth
// round).

// crowdPool reorders the first len(scores) results of seq (the pool
// members, whose scores they are, in the same order; docs holds their
// documents) by m.Crowd, keep saying which scores the cut-off rule shows.
func crowdPool(m *score.Model, seq []query.Scored, scores []float64, docs map[string]meiliHit, keep func(p float64) bool) {
	providers := make([]string, len(scores))
	kept := make([]bool, len(scores))
	for i, p := range scores {
		providers[i] = providerOf(docs[seq[i].ID])
		kept[i] = keep(p)
	}
	order := m.Crowd(providers, kept)
	pool, ps := make([]query.Scored, len(scores)), make([]float64, len(scores))
	for to, from := range order {
		pool[to], ps[to] = seq[from], scores[from]
	}
	copy(seq, pool)
	copy(scores, ps)
}

// providerOf is the provider of a fetched document or a result entry
// (normalize.ProviderKey of its publisher and its bindings' URLs); "" when
// it has neither. Decoded with segmentio/encoding/json, as the tool lists
// are (hybrid.ServerTools): every search reads the pool's 30, and
// encoding/json took two thirds of the rule's time.
func providerOf(doc map[string]json.RawMessage) string {
	if doc == nil {
		return ""
	}
	var publisher string
	var bindings []struct {
		URL string `json:"url"`
	}
	_ = fastjson.Unmarshal(doc[normalize.FieldPublisher], &publisher)
	_ = fastjson.Unmarshal(doc["bindings"], &bindings)
	urls := make([]string, len(bindings))
	for i, b := range bindings {
		urls[i] = b.URL
	}
	return normalize.ProviderKey(publisher, urls)
}

// crowdHits orders a federated page (every hit shown, best first) by
// m.Crowd: the registries' results together, whichever registry holds
// them.
func crowdHits(m *score.Model, hits []federation.Hit) []federation.Hit {
	if len(hits) < 2 {
		return hits
	}
	providers := make([]string, len(hits))
	kept := make([]bool, len(hits))
	for i, h := range hits {
		providers[i], kept[i] = providerOf(h.Entry), true
	}
	out := make([]federation.Hit, len(hits))
	for to, from := range m.Crowd(providers, kept) {
		out[to] = hits[from]
	}
	return out
}
