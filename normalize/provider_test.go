package normalize

import "testing"

func TestProviderKey(t *testing.T) {
	for _, c := range []struct {
		publisher string
		urls      []string
		want      string
	}{
		{"a2a-cards.example", []string{"https://hub.lifie.ai/agents/walmart"}, "lifie.ai"},
		{"other.example", []string{"https://api.lifie.ai/a2a"}, "lifie.ai"},
		// A platform on the public suffix list hosts many providers.
		{"x.example", []string{"https://a2abench-api.web.app/a2a"}, "a2abench-api.web.app"},
		{"x.example", []string{"https://b.onrender.com/"}, "b.onrender.com"},
		// No endpoint host (a package, a loopback or address endpoint):
		// the publisher.
		{"github.com/kukapay", nil, "github.com/kukapay"},
		{"Pub01.Example", []string{"", "http://localhost:8080/a2a", "http://127.0.0.1:9000", "http://[::1]:9000"}, "pub01.example"},
		// The first endpoint with a host name counts.
		{"p.example", []string{"stdio:", "https://Agents.Acme.co.uk/x", "https://other.example/y"}, "acme.co.uk"},
		{"", nil, ""},
	} {
		if got := ProviderKey(c.publisher, c.urls); got != c.want {
			t.Errorf("ProviderKey(%q, %v) = %q, want %q", c.publisher, c.urls, got, c.want)
		}
	}
}
