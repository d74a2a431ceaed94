package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
)

// TestServeWithoutSeeds: serve with no seed says so in its log at start,
// and a search of its empty index says why it is empty.
func TestServeWithoutSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	web := crawlertest.Web(t, fixtures.Options{NoWorld: true})
	e := newE2EOn(t, web, nil)
	e.start()
	if !strings.Contains(e.logs.String(), "no seeds") {
		t.Errorf("serve without seeds did not warn:\n%s", e.logs.String())
	}
	var ans struct {
		Results []any  `json:"results"`
		Reason  string `json:"reason"`
	}
	if code := e.do(http.MethodPost, "/search", map[string]any{"query": map[string]any{"text": "weather", "federation": "none"}}, &ans); code != http.StatusOK {
		t.Fatalf("POST /search: %d", code)
	}
	if len(ans.Results) != 0 || !strings.Contains(ans.Reason, "no seeds") {
		t.Errorf("search without seeds: %d results, reason %q", len(ans.Results), ans.Reason)
	}
}
