package mcpserver

import (
	"strings"
	"testing"
)

func TestRenderSearch(t *testing.T) {
	tests := []struct {
		name, body string
		want, not  []string
	}{
		{
			name: "good and weak",
			body: `{"results":[{"identifier":"urn:ai:a.example:agent:a","displayName":"A","type":"application/a2a-agent-card+json","url":"https://a.example/a.json","description":"Books flights.\nSecond line.","score":91,"source":"https://r.example",
				"trust":{"level":"signed","signer":"did:web:a.example"},"health":{"status":"up","latencyMs":42}},
				{"identifier":"urn:ai:b.example:agent:b","displayName":"B","type":"t","score":12,"source":"https://r.example",
				"trust":{"level":"none","problems":[{"code":"bad_signature"}]},"health":{"status":"down"}}],
				"referrals":[{"identifier":"urn:ai:up.example:registry:r","displayName":"Up","url":"https://up.example/search"}],"pageToken":"tok"}`,
			want: []string{"1. A (urn:ai:a.example:agent:a) score 91", "url: https://a.example/a.json", "   Books flights.\n", "source: https://r.example",
				"trust: signed by did:web:a.example; health: up (42 ms)",
				"2. B (urn:ai:b.example:agent:b) score 12", "trust: none (bad_signature); health: down", "Also ask: Up at https://up.example/search", `pageToken "tok"`},
			not: []string{"Second line"},
		},
		{
			name: "cut off",
			body: `{"results":[],"referrals":[],"reason":"no entry matches this request well enough: the best scored 7, below minScore 25; send minScore 0 to see every result"}`,
			want: []string{`Nothing in this registry matches "q" well enough (no entry matches`, "below minScore 25"},
		},
		{
			name: "none",
			body: `{"results":[],"referrals":[{"identifier":"urn:ai:up.example:registry:r","url":"https://up.example/search"}]}`,
			want: []string{`Nothing in this registry matches "q"`, "Also ask: urn:ai:up.example:registry:r at https://up.example/search"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := renderSearch("q", []byte(tc.body), nil)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("text lacks %q:\n%s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("text holds %q:\n%s", n, got)
				}
			}
		})
	}
}

func TestRenderAgent(t *testing.T) {
	got := renderAgent([]byte(`{"identifier":"urn:ai:a.example:mcp:x","displayName":"X","type":"application/mcp-server+json",
		"bindings":[{"protocol":"mcp","url":"https://a.example/mcp"}],"trust":{"level":"domain"},"health":{"status":"auth_required"}}`))
	for _, w := range []string{"X (urn:ai:a.example:mcp:x)", "trust: domain; health: auth_required", "endpoint: mcp https://a.example/mcp", "full record: {"} {
		if !strings.Contains(got, w) {
			t.Errorf("text lacks %q:\n%s", w, got)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("  ab\ncd", 10); got != "ab" {
		t.Errorf("first line: %q", got)
	}
	if got := oneLine("äöüäöüäöü", 4); got != "äöü…" {
		t.Errorf("cut: %q", got)
	}
}

// TestRenderSearchFromValues: the engine door's text, made from the
// answer's values, is the text of the answer's body.
func TestRenderSearchFromValues(t *testing.T) {
	ans := benchAnswer()
	shown, err := ans.Shown()
	if err != nil {
		t.Fatal(err)
	}
	fromBody, fromValues := renderSearch("convert pdf", ans.Encode(), nil), renderSearch("convert pdf", nil, shown)
	if fromValues != fromBody || !strings.Contains(fromBody, "10. Server 9") {
		t.Errorf("from the values:\n%s\nfrom the body:\n%s", fromValues, fromBody)
	}
}
