package crawler_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

func TestParseSeed(t *testing.T) {
	for _, tc := range []struct {
		in       string
		target   string
		groups   []string
		bad      bool
		registry bool
	}{
		{"acme.test", "acme.test", nil, false, false},
		{"  hr.corp.example   groups=HR,people ", "hr.corp.example", []string{"hr", "people"}, false, false},
		{"https://x.test/c.json groups=a", "https://x.test/c.json", []string{"a"}, false, false},
		{"x.test groups=", "", nil, true, false},
		{"x.test owner=me", "", nil, true, false},
		{"x.test groups=a groups=b", "", nil, true, false},
		{"registry https://registry.modelcontextprotocol.io", "https://registry.modelcontextprotocol.io", nil, false, true},
		{"registry https://reg.corp.example/mcp/ groups=dev", "https://reg.corp.example/mcp", []string{"dev"}, false, true},
		{"registry", "", nil, true, false},
		{"registry ftp://x.test", "", nil, true, false},
		{"registry https://x.test/?page=2", "", nil, true, false},
		{"registry https://x.test owner=me", "", nil, true, false},
	} {
		sd, err := crawler.ParseSeed(tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("ParseSeed(%q) error %v, want error %v", tc.in, err, tc.bad)
			continue
		}
		if !tc.bad && (sd.Target != tc.target || !slices.Equal(sd.Groups, tc.groups) || sd.Registry != tc.registry) {
			t.Errorf("ParseSeed(%q) = %+v, want %s %v registry %v", tc.in, sd, tc.target, tc.groups, tc.registry)
		}
	}
}

// TestSeedGroupsMarkRecords: every record a marked seed yields carries the
// seed's groups; a plain seed's records in the same crawl stay public.
func TestSeedGroupsMarkRecords(t *testing.T) {
	web := startWeb(t)
	sink := &crawlertest.Collector{}
	c := newCrawler(t, webConfig(web), sink)
	crawl(t, c, fixtures.HostAcme+" groups=HR,people", fixtures.HostLinkOnly)
	marked, public := 0, 0
	for _, res := range sink.Results() {
		for _, rec := range res.Records {
			switch {
			case strings.Contains(res.Catalog, fixtures.HostAcme):
				marked++
				if !slices.Equal(rec.Visibility, []string{"hr", "people"}) {
					t.Errorf("%s from the marked seed: visibility %v", rec.Identifier, rec.Visibility)
				}
			case strings.Contains(res.Catalog, fixtures.HostLinkOnly):
				public++
				if len(rec.Visibility) != 0 {
					t.Errorf("%s from the plain seed: visibility %v", rec.Identifier, rec.Visibility)
				}
			}
		}
	}
	if marked == 0 || public == 0 {
		t.Fatalf("records: %d from the marked seed, %d from the plain one", marked, public)
	}
}

// TestSeedGroupsChangeRefetches: a catalog crawled as public and then marked
// with groups is fetched in full, not answered by a 304 that would leave its
// records public in the index; the same marking again may use the validator.
func TestSeedGroupsChangeRefetches(t *testing.T) {
	web := startWeb(t)
	sink := &crawlertest.Collector{}
	c := newCrawler(t, webConfig(web), sink)
	crawl(t, c, fixtures.HostAcme)

	steps := []struct {
		seed string
		want normalize.FetchStatus
	}{
		{fixtures.HostAcme + " groups=hr", normalize.StatusOK},
		{fixtures.HostAcme + " groups=hr", normalize.StatusNotModified},
		{fixtures.HostAcme + " groups=hr,finance", normalize.StatusOK},
		{fixtures.HostAcme, normalize.StatusOK},
	}
	for _, st := range steps {
		rep := crawl(t, c, st.seed)
		got, _ := find(rep, acmeWellKnown)
		if got.Status != st.want {
			t.Errorf("crawl of %q: %s is %s, want %s", st.seed, acmeWellKnown, got.Status, st.want)
		}
	}
	var last []string
	for _, res := range sink.Results() {
		if res.Catalog == acmeWellKnown && len(res.Records) > 0 {
			last = res.Records[0].Visibility
		}
	}
	if len(last) != 0 {
		t.Errorf("records of the unmarked seed's last full fetch carry visibility %v", last)
	}
}

func TestSeedStringAndHost(t *testing.T) {
	for _, line := range []string{"hr.test groups=hr,people", "https://Acme.test:8443/c.json", "registry https://reg.test groups=dev", "plain.test"} {
		sd, err := crawler.ParseSeed(line)
		if err != nil {
			t.Fatal(err)
		}
		back, err := crawler.ParseSeed(sd.String())
		if err != nil || back.String() != sd.String() || back.Registry != sd.Registry {
			t.Errorf("%q: String %q reads back as %+v (%v)", line, sd.String(), back, err)
		}
	}
	for target, want := range map[string]string{"HR.test.": "hr.test", "https://Acme.test:8443/c.json": "acme.test", "hr.test:8443": "hr.test"} {
		if got := (crawler.Seed{Target: target}).Host(); got != want {
			t.Errorf("Host(%q) = %q, want %q", target, got, want)
		}
	}
}
