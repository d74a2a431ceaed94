package federation

import (
	"testing"

	"github.com/agentfinder/agentfinder/normalize"
)

// TestCredentialOnlyToForwardAuthUpstreams: in auto mode the caller's
// credential reaches the upstream configured with ForwardAuth and no other:
// not another configured upstream, not a learned registry that is
// federated to.
func TestCredentialOnlyToForwardAuthUpstreams(t *testing.T) {
	fwd := newSwapServer(t, listHandler([]map[string]any{entry("urn:ai:f.example:a", "a")}, 0))
	plain := newSwapServer(t, listHandler([]map[string]any{entry("urn:ai:p.example:b", "b")}, 0))
	learned := newSwapServer(t, listHandler([]map[string]any{entry("urn:ai:l.example:c", "c")}, 0))
	f := newFederator(t, Config{Upstreams: []string{fwd.URL, plain.URL}, ForwardAuthTo: []string{fwd.URL}, FederateLearned: true, AllowPrivate: true})
	if n := f.Book().AddFromRecords([]normalize.Record{{Identifier: "urn:ai:l.example:registry:l", DisplayName: "L", Type: "application/ai-registry", URL: learned.URL + "/search"}}); n != 1 {
		t.Fatalf("learned %d registries", n)
	}
	ctx := WithCredential(t.Context(), "Bearer caller-key")
	if _, err := f.Search(ctx, ModeAuto, Query{Text: "x"}, "", nil, localOf(nil)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		s    *swapServer
		want string
	}{{"forwardAuth upstream", fwd, "Bearer caller-key"}, {"plain upstream", plain, ""}, {"learned registry", learned, ""}} {
		reqs := c.s.requests()
		if len(reqs) != 1 || reqs[0].auth != c.want {
			t.Errorf("%s: %d requests, Authorization %q, want one with %q", c.name, len(reqs), firstAuth(reqs), c.want)
		}
	}
	// No credential in the context: nothing is sent, even to fwd.
	if _, err := f.Search(t.Context(), ModeAuto, Query{Text: "y"}, "", nil, localOf(nil)); err != nil {
		t.Fatal(err)
	}
	if reqs := fwd.requests(); len(reqs) != 2 || reqs[1].auth != "" {
		t.Errorf("anonymous search sent Authorization %q", firstAuth(reqs[1:]))
	}
}

func firstAuth(reqs []recorded) string {
	if len(reqs) == 0 {
		return ""
	}
	return reqs[0].auth
}
