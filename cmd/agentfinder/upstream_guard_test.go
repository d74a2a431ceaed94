package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/crawler/netguard"
	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/federation/federationtest"
)

// TestFederationAllowCIDRFlag wires serve's flags into the federator as
// serve does: --federation-allow-cidr 127.0.0.2/32 opens the configured
// upstream on 127.0.0.2 and nothing else, so its 307 to a service on
// 127.0.0.1 is refused; without the flag the upstream itself is refused at
// start; a bad value names the flag.
func TestFederationAllowCIDRFlag(t *testing.T) {
	up := federationtest.NewRedirector(t)

	build := func(args ...string) (*federation.Federator, error) {
		t.Helper()
		var o serveOptions
		if err := serveCLI(&o).parse(args, func(string) (string, bool) { return "", false }); err != nil {
			t.Fatalf("parse %q: %v", args, err)
		}
		s := &server{opts: o, log: slog.New(slog.DiscardHandler), publicURL: "http://127.0.0.1:9/"}
		return newFederation(s, []byte("k"))
	}

	if _, err := build("--upstream", up.URL); !errors.Is(err, netguard.ErrBlocked) {
		t.Fatalf("loopback upstream without --federation-allow-cidr: %v, want it refused at start", err)
	}
	if _, err := build("--upstream", up.URL, "--federation-allow-cidr", "not-a-cidr"); err == nil || !strings.Contains(err.Error(), "--federation-allow-cidr") {
		t.Fatalf("bad --federation-allow-cidr: %v, want an error naming the flag", err)
	}
	f, err := build("--upstream", up.URL, "--federation-allow-cidr", "127.0.0.2/32")
	if err != nil {
		t.Fatalf("upstream opened by --federation-allow-cidr: %v", err)
	}
	t.Cleanup(f.Close)
	local := func(context.Context, federation.Query, string) ([]federation.Hit, string, error) { return nil, "", nil }
	resp, err := f.Search(t.Context(), federation.ModeAuto, federation.Query{Text: "payroll"}, "", nil, local)
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	if up.Calls() == 0 {
		t.Fatal("the upstream on 127.0.0.2 was never called")
	}
	if n := up.VictimCalls(); n != 0 {
		t.Fatalf("the redirect target on 127.0.0.1 received %d requests", n)
	}
	if len(resp.Upstreams) != 1 || resp.Upstreams[0].Status != federation.StatusError {
		t.Fatalf("upstream outcomes %+v, want one error", resp.Upstreams)
	}
}
