package search

import (
	"encoding/json"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/query"
	"github.com/agentfinder/agentfinder/searchapi/score"
)

// How liveness enters ordering. The score measures relevance only and
// never changes. Within the pool (the first poolSize results, in the
// model's order), a result whose endpoint is not live (normalize.Live:
// down, not_mcp, template) moves down past the live results that follow
// it while their score (0-100) is at least its own less livenessHandicap
// points; it stops at the first live result scoring less than that, and at
// another result that is not live. Live results keep the model's order
// among themselves; results past the pool keep their fused order. liveOnly
// leaves such results out instead.
const livenessHandicap = 10

// orderByLiveness reorders rel's ranking of pool (whose documents docs
// holds) as above, and returns the health status of each result that is
// not live, by identifier, for its evidence.
func orderByLiveness(rel *relevance, pool []query.Scored, docs map[string]meiliHit) map[string]string {
	dead := map[string]string{}
	key := make([]int, len(rel.rk.Scores))
	isDead := make([]bool, len(rel.rk.Scores))
	for i, s := range rel.rk.Scores {
		key[i] = score.Percent(s)
		if i >= len(pool) {
			continue
		}
		if st := healthStatus(docs[pool[i].ID]); !normalize.Live(st) {
			dead[pool[i].ID] = st
			key[i] -= livenessHandicap
			isDead[i] = true
		}
	}
	// Bottom up, each result that is not live moves down past the live
	// results right after it whose score is at least its own less the
	// handicap. Live results keep their order (a preferred tag's boost
	// included), and so do the others among themselves.
	order := rel.rk.Order
	for i := len(order) - 1; i >= 0; i-- {
		a := order[i]
		if !isDead[a] {
			continue
		}
		for j := i; j+1 < len(order) && !isDead[order[j+1]] && key[order[j+1]] >= key[a]; j++ {
			order[j], order[j+1] = order[j+1], order[j]
		}
	}
	return dead
}

// healthStatus is the health status of a fetched document (unknown when
// it has none).
func healthStatus(doc meiliHit) string {
	var h struct {
		Status string `json:"status"`
	}
	if doc == nil || json.Unmarshal(doc[normalize.FieldHealth], &h) != nil || h.Status == "" {
		return normalize.HealthUnknown
	}
	return h.Status
}

// livenessNote is what a result's evidence says of an endpoint that is
// not live.
func livenessNote(status string) string {
	return "endpoint " + status + ": ordered below live results scoring up to 10 points less (the score is unchanged)"
}
