package crawler_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/fixtures"
)

func TestParseSeed(t *testing.T) {
	for _, tc := range []struct {
		in     string
		target string
		groups []string
		bad    bool
	}{
		{"acme.test", "acme.test", nil, false},
		{"  hr.corp.example   groups=HR,people ", "hr.corp.example", []string{"hr", "people"}, false},
		{"https://x.test/c.json groups=a", "https://x.test/c.json", []string{"a"}, false},
		{"x.test groups=", "", nil, true},
		{"x.test owner=me", "", nil, true},
		{"x.test groups=a groups=b", "", nil, true},
	} {
		sd, err := crawler.ParseSeed(tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("ParseSeed(%q) error %v, want error %v", tc.in, err, tc.bad)
			continue
		}
		if !tc.bad && (sd.Target != tc.target || !slices.Equal(sd.Groups, tc.groups)) {
			t.Errorf("ParseSeed(%q) = %+v, want %s %v", tc.in, sd, tc.target, tc.groups)
		}
	}
}

// TestSeedGroupsMarkRecords: every record a marked seed yields carries the
// seed's groups; a plain seed's records in the same crawl stay public.
func TestSeedGroupsMarkRecords(t *testing.T) {
	web := startWeb(t)
	sink := &collector{}
	c := newCrawler(t, webConfig(web), sink)
	crawl(t, c, fixtures.HostAcme+" groups=HR,people", fixtures.HostLinkOnly)
	marked, public := 0, 0
	for _, res := range sink.results() {
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
