package federation

import (
	"encoding/json"
	"slices"

	"github.com/agentfinder/agentfinder/normalize"
)

// EntryTrustHealth returns the trust level and health status a result
// entry counts as: the ones it carries, else those normalize gives a
// record without them (Record.TrustLevel from its publisherVerified,
// Record.HealthStatus). searchapi reads its own results with it too.
func EntryTrustHealth(e map[string]json.RawMessage) (level, status string) {
	var r normalize.Record
	_ = json.Unmarshal(e["publisherVerified"], &r.PublisherVerified)
	if t, ok := reportedTrust(e["trust"]); ok {
		r.Trust = &t
	}
	if h, ok := reportedHealth(e["health"]); ok {
		r.Health = &h
	}
	return r.TrustLevel(), r.HealthStatus()
}

// reportedTrust decodes a trust object whose level is one of
// normalize.TrustLevels.
func reportedTrust(raw json.RawMessage) (normalize.Trust, bool) {
	var t normalize.Trust
	if len(raw) == 0 || json.Unmarshal(raw, &t) != nil || !slices.Contains(normalize.TrustLevels, t.Level) {
		return normalize.Trust{}, false
	}
	return t, true
}

// reportedHealth decodes a health object whose status is one of
// normalize.HealthStatuses.
func reportedHealth(raw json.RawMessage) (normalize.Health, bool) {
	var h normalize.Health
	if len(raw) == 0 || json.Unmarshal(raw, &h) != nil || !slices.Contains(normalize.HealthStatuses, h.Status) {
		return normalize.Health{}, false
	}
	return h, true
}

// relayTrustHealth copies a trusted upstream's trust and health from its
// result m into entry, re-encoded from the decoded values (members we do
// not know are dropped); invalid ones are not relayed.
func relayTrustHealth(entry, m map[string]json.RawMessage) {
	if t, ok := reportedTrust(m["trust"]); ok {
		entry["trust"], _ = json.Marshal(t)
	}
	if h, ok := reportedHealth(m["health"]); ok {
		entry["health"], _ = json.Marshal(h)
	}
}

// admits reports whether an upstream result meets q's Verified, Trust and
// Health by what it reports.
func (q Query) admits(h Hit) bool {
	if q.Verified && !h.Verified {
		return false
	}
	if len(q.Trust) == 0 && len(q.Health) == 0 {
		return true
	}
	level, status := EntryTrustHealth(h.Entry)
	return (len(q.Trust) == 0 || slices.Contains(q.Trust, level)) &&
		(len(q.Health) == 0 || slices.Contains(q.Health, status))
}
