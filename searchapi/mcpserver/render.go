package mcpserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentfinder/agentfinder/federation"
)

// renderSearch is the compact text of a search answer a model reads:
// shown, what the answer shows when the backend had its values at hand,
// else the body read as the one answer type (federation.SearchAnswer); an
// answer it cannot read is passed on as it came.
func renderSearch(text string, body json.RawMessage, shown *federation.ShownAnswer) string {
	if shown != nil {
		return renderShown(text, shown)
	}
	var a federation.SearchAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return string(body)
	}
	shown, err := a.Shown()
	if err != nil {
		return string(body)
	}
	return renderShown(text, shown)
}

// renderShown is the text of what an answer shows.
func renderShown(text string, a *federation.ShownAnswer) string {
	results, referrals := a.Results, a.Referrals
	var b strings.Builder
	switch {
	case len(results) == 0 && a.Reason != "":
		fmt.Fprintf(&b, "Nothing in this registry matches %q well enough (%s). Try other words or fewer filters.\n", text, a.Reason)
	case len(results) == 0:
		fmt.Fprintf(&b, "Nothing in this registry matches %q. Try other words or fewer filters.\n", text)
	default:
		// The registry's cut-off already left out what does not match well
		// (the request's minScore, else the registry's default).
		fmt.Fprintf(&b, "Results for %q, best first (scores 0-100: about the chance in 100 that it is what was asked for):\n", text)
		for i, r := range results {
			name := r.DisplayName
			if name == "" {
				name = r.Identifier
			}
			score, _ := r.Score.Float64()
			fmt.Fprintf(&b, "%d. %s (%s) score %g\n   type: %s\n", i+1, name, r.Identifier, score, r.Type)
			if r.URL != "" {
				fmt.Fprintf(&b, "   url: %s\n", r.URL)
			}
			if d := oneLine(r.Description, 160); d != "" {
				fmt.Fprintf(&b, "   %s\n", d)
			}
			if r.Trust != nil || r.Health != nil {
				fmt.Fprintf(&b, "   %s\n", trustLine(r.Trust, r.Health))
			}
			fmt.Fprintf(&b, "   source: %s\n", r.SourceLabel())
		}
		if a.PageToken != "" {
			fmt.Fprintf(&b, "More results: call search again with the same arguments and pageToken %q.\n", a.PageToken)
		}
	}
	for _, r := range referrals {
		name := r.DisplayName
		if name == "" {
			name = r.Identifier
		}
		fmt.Fprintf(&b, "Also ask: %s at %s\n", name, r.URL)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// trustLine says a result's trust and health in a few words: "trust:
// signed by did:web:acme.com; health: up (42 ms)".
func trustLine(t *federation.ResultTrust, h *federation.ResultHealth) string {
	var parts []string
	if t != nil && t.Level != "" {
		s := "trust: " + t.Level
		if t.Level == "signed" && t.Signer != "" {
			s += " by " + t.Signer
		}
		var codes []string
		for _, p := range t.Problems {
			codes = append(codes, p.Code)
		}
		if len(codes) > 0 {
			s += " (" + strings.Join(codes, ", ") + ")"
		}
		parts = append(parts, s)
	}
	if h != nil && h.Status != "" {
		s := "health: " + h.Status
		if h.Status == "up" && h.LatencyMs > 0 {
			s += fmt.Sprintf(" (%d ms)", h.LatencyMs)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// oneLine returns the first line of s, at most n runes.
func oneLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// renderAgent is the text of a record: the fields a model acts on (trust
// and health among them), then the whole record as JSON.
func renderAgent(body json.RawMessage) string {
	var r struct {
		Identifier  string `json:"identifier"`
		DisplayName string `json:"displayName"`
		Type        string `json:"type"`
		URL         string `json:"url"`
		Description string `json:"description"`
		Bindings    []struct {
			Protocol string `json:"protocol"`
			URL      string `json:"url"`
		} `json:"bindings"`
		Trust  *federation.ResultTrust  `json:"trust"`
		Health *federation.ResultHealth `json:"health"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return string(body)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)\ntype: %s\n", r.DisplayName, r.Identifier, r.Type)
	if r.Trust != nil || r.Health != nil {
		fmt.Fprintf(&b, "%s\n", trustLine(r.Trust, r.Health))
	}
	if r.URL != "" {
		fmt.Fprintf(&b, "url: %s\n", r.URL)
	}
	for _, bd := range r.Bindings {
		if bd.URL != "" {
			fmt.Fprintf(&b, "endpoint: %s %s\n", bd.Protocol, bd.URL)
		}
	}
	if r.Description != "" {
		fmt.Fprintf(&b, "%s\n", strings.TrimSpace(r.Description))
	}
	fmt.Fprintf(&b, "full record: %s", body)
	return b.String()
}

// renderExplore is the text of facet counts, largest first.
func renderExplore(body json.RawMessage) string {
	var e struct {
		Total  int64                     `json:"total"`
		Facets map[string]map[string]int `json:"facets"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return string(body)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d entries.", e.Total)
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range e.Facets {
			if !yield(k) {
				return
			}
		}
	})
	for _, n := range names {
		type kv struct {
			k string
			v int
		}
		var vals []kv
		for k, v := range e.Facets[n] {
			vals = append(vals, kv{k, v})
		}
		slices.SortFunc(vals, func(a, b kv) int {
			if a.v != b.v {
				return b.v - a.v
			}
			return strings.Compare(a.k, b.k)
		})
		parts := make([]string, 0, len(vals))
		for _, x := range vals {
			parts = append(parts, fmt.Sprintf("%s (%d)", x.k, x.v))
		}
		fmt.Fprintf(&b, "\n%s: %s", n, strings.Join(parts, ", "))
	}
	return b.String()
}
