package door

import (
	"encoding/json"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
)

// Trust is a result's trust in the snake_case of the xu, HAIDIP and ADP
// bindings.
type Trust struct {
	Level     string   `json:"level"`
	Signer    string   `json:"signer,omitempty"`
	CheckedAt string   `json:"checked_at,omitempty"`
	Problems  []string `json:"problems,omitempty"` // problem codes
}

// Health is a result's health in the snake_case of the xu, HAIDIP and ADP
// bindings.
type Health struct {
	Status    string `json:"status"`
	CheckedAt string `json:"checked_at,omitempty"`
	LatencyMs int64  `json:"latency_ms,omitempty"`
	Detail    string `json:"detail,omitempty"`
}

// TrustHealth reads a result's trust and health (every result has them:
// the engine fills in those a record lacks).
func TrustHealth(e map[string]json.RawMessage) (*Trust, *Health) {
	var t normalize.Trust
	var h normalize.Health
	_ = json.Unmarshal(e["trust"], &t)
	_ = json.Unmarshal(e["health"], &h)
	xt := &Trust{Level: t.Level, Signer: t.Signer}
	if !t.CheckedAt.IsZero() {
		xt.CheckedAt = t.CheckedAt.UTC().Format(time.RFC3339)
	}
	for _, p := range t.Problems {
		xt.Problems = append(xt.Problems, p.Code)
	}
	xh := &Health{Status: h.Status, LatencyMs: h.LatencyMs, Detail: h.Detail}
	if !h.CheckedAt.IsZero() {
		xh.CheckedAt = h.CheckedAt.UTC().Format(time.RFC3339)
	}
	return xt, xh
}

// EntryString reads a string field of a result entry ("" if absent or not
// a string).
func EntryString(e map[string]json.RawMessage, k string) string {
	var v string
	_ = json.Unmarshal(e[k], &v)
	return v
}
