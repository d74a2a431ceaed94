package crawler_test

import (
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

// TestRegistrySeedWalk walks the world's fixture MCP registry: one result
// per server name, each the one record of its own source and marked with
// the seed's groups, requests under the crawl's user agent, and
// a state that makes the next walk incremental once exported and
// restored into another crawler (as after a restart).
func TestRegistrySeedWalk(t *testing.T) {
	web := startWeb(t)
	sink := &crawlertest.Collector{}
	cfg := webConfig(web)
	cfg.RegistryPageSize = 100
	var clock atomic.Int64 // the crawler's clock, Unix nanoseconds
	clock.Store(time.Now().UnixNano())
	cfg.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	c := newCrawler(t, cfg, sink)
	seed := "registry https://" + fixtures.HostMCPRegistry + " groups=dev"
	rep := crawl(t, c, seed)
	if len(rep.Catalogs) != 1 || rep.Catalogs[0].Status != normalize.StatusOK || rep.Catalogs[0].Via != normalize.ViaRegistry {
		t.Fatalf("report: %+v", rep.Catalogs)
	}
	names := map[string]bool{}
	for _, res := range sink.Results() {
		if len(res.Records) != 1 {
			t.Fatalf("%s: %d records, want one", res.Catalog, len(res.Records))
		}
		rec := res.Records[0]
		if res.Catalog != normalize.RegistryServerURL("https://"+fixtures.HostMCPRegistry, rec.Identifier) || !slices.Equal(rec.Visibility, []string{"dev"}) {
			t.Errorf("%s from %s: visibility %v", rec.Identifier, res.Catalog, rec.Visibility)
		}
		names[rec.Identifier] = true
	}
	if len(names) != rep.Catalogs[0].Records || len(names) < 470 {
		t.Errorf("%d names handed on, report says %d", len(names), rep.Catalogs[0].Records)
	}
	for _, r := range web.RequestsFor(fixtures.HostMCPRegistry) {
		if r.UserAgent != cfg.UserAgent {
			t.Errorf("request with user agent %q", r.UserAgent)
		}
	}

	st := c.MCPRegistryStates()["https://"+fixtures.HostMCPRegistry]
	if st.Since.IsZero() || st.Cursor != "" || st.Path != "/v0.1/servers" {
		t.Fatalf("state after a full walk: %+v", st)
	}
	again := &crawlertest.Collector{}
	c2 := newCrawler(t, cfg, again)
	c2.SetMCPRegistryStates(c.MCPRegistryStates())
	web.ResetRequests()
	crawl(t, c2, seed)
	reqs := slices.DeleteFunc(web.RequestsFor(fixtures.HostMCPRegistry), func(r fixtures.Request) bool { return r.Path == "/robots.txt" })
	if len(again.Results()) != 0 || len(reqs) != 1 || !strings.Contains(reqs[0].RawQuery, "updated_since=") {
		t.Errorf("walk after restoring the state: %d results, requests %+v; want one incremental page and nothing new", len(again.Results()), reqs)
	}
	// Other groups: the records must be handed on again, in full.
	crawl(t, c2, "registry https://"+fixtures.HostMCPRegistry)
	if n := len(again.Results()); n != len(names) {
		t.Errorf("walk with other groups handed on %d results, want %d", n, len(names))
	}

	// A day after the last full walk the walk is full again: every record
	// is handed on again, so none ages into stale in the index.
	clock.Add(int64(25 * time.Hour))
	web.ResetRequests()
	crawl(t, c2, "registry https://"+fixtures.HostMCPRegistry)
	for _, r := range web.RequestsFor(fixtures.HostMCPRegistry) {
		if strings.Contains(r.RawQuery, "updated_since=") {
			t.Errorf("a day later the walk still asks for changes only: %s?%s", r.Path, r.RawQuery)
		}
	}
	if n := len(again.Results()); n != 2*len(names) {
		t.Errorf("the full walk a day later handed on %d results in all, want %d", n, 2*len(names))
	}
}
