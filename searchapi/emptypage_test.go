package searchapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/searchapi/search"
	"github.com/agentfinder/agentfinder/searchapi/web"
)

// TestEmptyPageHasNoNext: a page the cut-off emptied carries no pageToken
// in the API and shows no Next on the page (later pages score lower
// still); a registry with no seeds says so when it finds nothing.
func TestEmptyPageHasNoNext(t *testing.T) {
	cut := 100
	f := newSiteFixture(t, func(c *Config) { c.MinScore = &cut })
	status, out := f.searchReason(map[string]any{"query": map[string]any{"text": "weather forecast", "federation": "none"}, "pageSize": 1})
	if status != http.StatusOK || len(out.Results) != 0 || out.PageToken != "" || !strings.Contains(out.Reason, "minScore") {
		t.Errorf("emptied page: %d, %d results, pageToken %q, reason %q", status, len(out.Results), out.PageToken, out.Reason)
	}
	p := f.get(t, "/?q=weather+forecast")
	if next := links(p.doc, "Next"); len(next) != 0 {
		t.Errorf("an empty page links a next one: %v", next)
	}

	unseeded := newSiteFixture(t, func(c *Config) {
		c.Crawl = func() web.CrawlInfo { return web.CrawlInfo{Unseeded: true} }
	})
	_, out = unseeded.searchReason(map[string]any{"query": map[string]any{"text": "weather", "publisher": "nobody.example", "federation": "none"}})
	if len(out.Results) != 0 || out.Reason != search.UnseededReason {
		t.Errorf("no seeds: %d results, reason %q", len(out.Results), out.Reason)
	}
	_, out = f.searchReason(map[string]any{"query": map[string]any{"text": "weather", "publisher": "nobody.example", "federation": "none"}})
	if out.Reason != "" {
		t.Errorf("a seeded registry whose filter matches nothing gives a reason: %q", out.Reason)
	}
}
