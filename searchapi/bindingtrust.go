package searchapi

import (
	"encoding/json"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
)

// bindingTrust and bindingHealth are a result's trust and health in the
// snake_case of the xu, HAIDIP and ADP bindings.
type bindingTrust struct {
	Level     string   `json:"level"`
	Signer    string   `json:"signer,omitempty"`
	CheckedAt string   `json:"checked_at,omitempty"`
	Problems  []string `json:"problems,omitempty"` // problem codes
}

type bindingHealth struct {
	Status    string `json:"status"`
	CheckedAt string `json:"checked_at,omitempty"`
	LatencyMs int64  `json:"latency_ms,omitempty"`
	Detail    string `json:"detail,omitempty"`
}

// bindingTrustHealth reads a result's trust and health (every result has
// them: runSearch fills in those a record lacks).
func bindingTrustHealth(e map[string]json.RawMessage) (*bindingTrust, *bindingHealth) {
	var t normalize.Trust
	var h normalize.Health
	_ = json.Unmarshal(e["trust"], &t)
	_ = json.Unmarshal(e["health"], &h)
	xt := &bindingTrust{Level: t.Level, Signer: t.Signer}
	if !t.CheckedAt.IsZero() {
		xt.CheckedAt = t.CheckedAt.UTC().Format(time.RFC3339)
	}
	for _, p := range t.Problems {
		xt.Problems = append(xt.Problems, p.Code)
	}
	xh := &bindingHealth{Status: h.Status, LatencyMs: h.LatencyMs, Detail: h.Detail}
	if !h.CheckedAt.IsZero() {
		xh.CheckedAt = h.CheckedAt.UTC().Format(time.RFC3339)
	}
	return xt, xh
}
