package search

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
)

// Trust and health are shown and filtered, never scored: the relevance
// score reads neither (Agent Finder §7.1: the score is not a trust
// rating). A record indexed before they existed, or relayed by a registry
// that does not report them, lacks them; it counts, in filters
// (filter.Absent), facet counts and results alike, as
// normalize.Record.TrustLevel and Record.HealthStatus say: trust "domain"
// when its publisher is verified, else "none"; health "unknown".

// signedOnly and liveOnly are the request options, as the filter groups
// they stand for.
var (
	signedOnly = []string{normalize.TrustSigned}
	liveOnly   = []string{normalize.HealthUp}
)

// fillTrustHealth gives an entry that lacks trust or health the ones it
// counts as, so every result and record shows both.
func fillTrustHealth(e map[string]json.RawMessage) {
	if e == nil {
		return
	}
	trust, health := e["trust"], e["health"]
	if present(trust) && present(health) {
		return
	}
	level, status := federation.EntryTrustHealth(e)
	if !present(trust) {
		e["trust"] = mustJSON(normalize.Trust{Level: level})
	}
	if !present(health) {
		e["health"] = mustJSON(normalize.Health{Status: status})
	}
}

// intersect returns the values every one of lists holds, in the order of
// the first; nil lists is nil.
func intersect(lists [][]string) []string {
	if len(lists) == 0 {
		return nil
	}
	out := []string{}
	for _, v := range lists[0] {
		all := true
		for _, l := range lists[1:] {
			all = all && slices.Contains(l, v)
		}
		if all {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return []string{""} // contradictory filters: nothing passes
	}
	return out
}

func present(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// countAbsent adds to dist, the facet counts of an explore over q's
// matches (total of them), the records that lack trust or health under the
// value they count as: Meilisearch counts only the values documents hold.
// A record lacks health when no status counts it; which level a record
// without trust counts as depends on its publisherVerified, which one more
// count (only when trust is asked for) tells.
func (s *Engine) countAbsent(ctx context.Context, q *Query, fields []string, total int64, dist map[string]map[string]int) error {
	for _, f := range []string{normalize.FieldHealthStatus, normalize.FieldTrustLevel} {
		if slices.Contains(fields, f) && dist[f] == nil {
			dist[f] = map[string]int{}
		}
	}
	if m, ok := dist[normalize.FieldHealthStatus]; ok {
		sum := 0
		for _, n := range m {
			sum += n
		}
		if rest := int(total) - sum; rest > 0 {
			m[(normalize.Record{}).HealthStatus()] += rest
		}
	}
	m, ok := dist[normalize.FieldTrustLevel]
	if !ok {
		return nil
	}
	sum := 0
	for _, n := range m {
		sum += n
	}
	if int(total) == sum {
		return nil
	}
	req := s.exploreSearch(q, []string{normalize.FieldPublisherVerified})
	req.Filter = filter.And(s.filter(q), filter.Missing(normalize.FieldTrustLevel)).Filter()
	resp, err := s.rawSearch(ctx, req)
	if err != nil {
		return err
	}
	absent, err := decodeFacets(resp.FacetDistribution)
	if err != nil {
		return err
	}
	for v, n := range absent[normalize.FieldPublisherVerified] {
		level := (normalize.Record{PublisherVerified: v == "true"}).TrustLevel()
		m[level] += n
	}
	return nil
}
