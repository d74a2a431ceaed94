package crawler_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

// byCatalog indexes results by their catalog URL.
func byCatalog(rs []normalize.CatalogResult) map[string]normalize.CatalogResult {
	out := map[string]normalize.CatalogResult{}
	for _, r := range rs {
		out[r.Catalog] = r
	}
	return out
}

// TestAgentCardsAtWellKnownURIs crawls the hosts that publish the real A2A
// cards: each card is found at the well-known URI it is served at (both
// when served at both), read into one record identified by its URL, asked
// for with the A2A card type; a broken card is a failed result with its
// problem and no record; a second crawl sends the card's validator.
func TestAgentCardsAtWellKnownURIs(t *testing.T) {
	web := startWeb(t)
	// The hosts served at both URIs or broken, and every fifth other one:
	// enough of each case without a crawl of all 124 hosts under -race.
	var sites []fixtures.A2ASite
	var seeds []string
	for i, s := range web.A2ASites() {
		if s.Also != "" || s.Broken != "" || i%5 == 0 {
			sites = append(sites, s)
			seeds = append(seeds, s.Host)
		}
	}
	sink := &crawlertest.Collector{}
	cfg := webConfig(web)
	cfg.Timeout = 10 * time.Second // many hosts at once on a loaded machine
	c := newCrawler(t, cfg, sink)
	crawl(t, c, seeds...)
	got := byCatalog(sink.Results())

	wantCode := map[string]string{fixtures.CardTruncated: normalize.CodeInvalidJSON, fixtures.CardArray: normalize.CodeNotAnObject,
		fixtures.CardNoName: normalize.CodeMissingField}
	read, broken := 0, 0
	for _, s := range sites {
		paths := []string{s.Path}
		if s.Also != "" {
			paths = append(paths, s.Also)
		}
		for _, p := range paths {
			u := "https://" + s.Host + p
			r, ok := got[u]
			if !ok {
				t.Errorf("%s: no result", u)
				continue
			}
			if s.Broken != "" {
				broken++
				if r.Status != normalize.StatusFailed || len(r.Records) != 0 || len(r.Problems) == 0 || r.Problems[0].Code != wantCode[s.Broken] {
					t.Errorf("%s (%s): status %s, %d records, problems %+v", u, s.Broken, r.Status, len(r.Records), r.Problems)
				}
				continue
			}
			read++
			if r.Status != normalize.StatusOK || len(r.Records) != 1 {
				t.Errorf("%s: status %s (%s), %d records, problems %+v", u, r.Status, r.Error, len(r.Records), r.Problems)
				continue
			}
			rec := r.Records[0]
			if rec.Identifier != u || rec.URL != u || rec.Type != normalize.TypeA2A || rec.DisplayName != s.Name || r.Via != normalize.ViaWellKnown {
				t.Errorf("%s: record %q %q %q %q via %s", u, rec.Identifier, rec.URL, rec.Type, rec.DisplayName, r.Via)
			}
		}
		// The other well-known URI, when not served, is no result at all.
		for _, p := range []string{fixtures.PathAgentCard, fixtures.PathAgentJSON} {
			if p != s.Path && p != s.Also {
				if _, ok := got["https://"+s.Host+p]; ok {
					t.Errorf("%s%s: a result for a URI that answers 404", s.Host, p)
				}
			}
		}
	}
	if read < 25 || broken == 0 {
		t.Errorf("%d cards read, %d broken", read, broken)
	}
	for _, rq := range web.Requests() {
		if strings.HasPrefix(rq.Path, "/.well-known/agent") && !strings.HasPrefix(rq.Accept, normalize.TypeA2A+",") {
			t.Errorf("%s%s asked with Accept %q", rq.Host, rq.Path, rq.Accept)
		}
	}

	// A second crawl asks with the card's validator and hands on not_modified.
	s := web.A2ASites()[0]
	web.ResetRequests()
	again := &crawlertest.Collector{}
	c2 := newCrawler(t, webConfig(web), again)
	c2.SetValidators(c.Validators())
	crawl(t, c2, s.Host)
	u := "https://" + s.Host + s.Path
	if r := byCatalog(again.Results())[u]; r.Status != normalize.StatusNotModified {
		t.Errorf("%s on the second crawl: %s", u, r.Status)
	}
}

// TestCardsHostOneAgentTwoWaysAndServerCards crawls HostCards: its catalog
// entry for the helpdesk agent is enriched from the 1.0 card at the
// well-known URI, which is also a record of its own; its MCP server cards
// are read from the entry's url and from <remote>/server-card, each fetch
// asking for the entry's own type.
func TestCardsHostOneAgentTwoWaysAndServerCards(t *testing.T) {
	web := startWeb(t)
	sink := &crawlertest.Collector{}
	crawl(t, newCrawler(t, webConfig(web), sink), fixtures.HostCards)
	got := byCatalog(sink.Results())

	cardURL := "https://" + fixtures.HostCards + fixtures.PathAgentCard
	card := got[cardURL]
	if card.Status != normalize.StatusOK || len(card.Records) != 1 {
		t.Fatalf("bare card: %+v", card)
	}
	bare := card.Records[0]
	if !containsStr(bare.Variants, "a2a-v1.0") || !containsStr(bare.Variants, normalize.VariantA2ASigned) || len(bare.Bindings) != 2 ||
		strings.Join(bare.Auth, ",") != "bearer,oidc" {
		t.Errorf("1.0 card read as variants %v bindings %+v auth %v", bare.Variants, bare.Bindings, bare.Auth)
	}

	cat := got["https://"+fixtures.HostCards+fixtures.PathWellKnown]
	recs := map[string]normalize.Record{}
	for _, r := range cat.Records {
		recs[r.Identifier] = r
	}
	helpdesk := recs["urn:ai:cards.test:agent:helpdesk"]
	// The catalog names its card with the fixture port (its links are
	// rewritten to reach the web); the crawl found it through the port map.
	if helpdesk.URL != web.URL(fixtures.HostCards, fixtures.PathAgentCard) || len(helpdesk.Bindings) != 2 || helpdesk.Bindings[0].URL != bare.Bindings[0].URL {
		t.Errorf("helpdesk entry not enriched from its card: %+v", helpdesk)
	}
	weather := recs["urn:ai:cards.test:mcp:weather"]
	if weather.Description != "Forecasts, radar and severe weather alerts for any city." || len(weather.Bindings) != 1 ||
		weather.Bindings[0].URL != web.URL(fixtures.HostCards, "/mcp/weather") {
		t.Errorf("server card by url not read: %q %+v", weather.Description, weather.Bindings)
	}
	tickets := recs["urn:ai:cards.test:mcp:tickets"]
	if tickets.Description != "Creates, updates and searches service desk tickets." {
		t.Errorf("server card at <remote>/server-card not read: %+v", tickets)
	}
	for _, p := range cat.Problems {
		if p.Code == normalize.CodeInvalidArtifact {
			t.Errorf("problem: %+v", p)
		}
	}

	accept := map[string]string{}
	for _, rq := range web.RequestsFor(fixtures.HostCards) {
		accept[rq.Path] += rq.Accept + ";"
	}
	for p, want := range map[string]string{
		"/mcp/weather/card.json":   "application/mcp-server-card+json,",
		"/mcp/tickets/server-card": "application/mcp-server-card+json,",
		fixtures.PathAgentCard:     normalize.TypeA2A + ",",
	} {
		if !strings.HasPrefix(accept[p], want) || strings.Contains(accept[p], "ai-catalog") {
			t.Errorf("%s asked with Accept %q, want %s...", p, accept[p], want)
		}
	}
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
