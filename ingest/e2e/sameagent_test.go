package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi"
)

// TestOneAgentAcrossCatalogCardAndRegistry crawls the publisher that lists
// its agent in its catalog and also serves the agent's bare card, and a
// registry that lists a copy of its MCP server, into a real index: each
// agent is one document, the publisher's catalog's, whose lostClaims name
// the card and the registry copy; the card and the registry's name have no
// document of their own, and a search finds each agent once. GET
// /agents/{identifier} of the card or the registry's name (an alias)
// answers with the catalog's record, under the catalog's identifier.
func TestOneAgentAcrossCatalogCardAndRegistry(t *testing.T) {
	st := newStack(t, "sameagent", stackOptions{})
	st.crawl(t, []string{fixtures.HostCards, "registry https://" + fixtures.HostCardsRegistry})
	docs := readDocs(t, st.s.Client, st.index)
	srv, err := searchapi.New(searchapi.Config{Index: st.index, Meili: st.s.Client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	catalog := "https://" + fixtures.HostCards + fixtures.PathWellKnown
	card := "https://" + fixtures.HostCards + fixtures.PathAgentCard
	for _, c := range []struct {
		id, lostIdentifier, lostKind string
	}{
		{"urn:ai:cards.test:agent:helpdesk", card, normalize.SourceCard},
		{"urn:ai:cards.test:mcp:weather", fixtures.CardsRegistryWeather, normalize.SourceRegistry},
	} {
		d, ok := docs[normalize.DocID(c.id)]
		if !ok {
			t.Errorf("%s: no document", c.id)
			continue
		}
		var lost []normalize.Claim
		raw, _ := json.Marshal(d["lostClaims"])
		_ = json.Unmarshal(raw, &lost)
		if d["sourceCatalog"] != catalog || len(lost) != 1 || lost[0].Identifier != c.lostIdentifier || lost[0].Kind != c.lostKind {
			t.Errorf("%s: held by %v, lost claims %s; want the catalog's, %s's claim lost", c.id, d["sourceCatalog"], raw, c.lostIdentifier)
		}
		if _, dup := docs[normalize.DocID(c.lostIdentifier)]; dup {
			t.Errorf("%s has a document of its own beside %s", c.lostIdentifier, c.id)
		}
		if got, status := getAgent(t, hs.URL, c.lostIdentifier); status != http.StatusOK || got != c.id {
			t.Errorf("GET /agents/%s (merged into %s): %d, identifier %q; want 200 and %q", c.lostIdentifier, c.id, status, got, c.id)
		}
	}
	// The registry's other server matches nothing here: a record of its own.
	if _, ok := docs[normalize.DocID(fixtures.CardsRegistryOther)]; !ok {
		t.Errorf("%s: no document", fixtures.CardsRegistryOther)
	}
	if got, status := getAgent(t, hs.URL, fixtures.CardsRegistryOther); status != http.StatusOK || got != fixtures.CardsRegistryOther {
		t.Errorf("GET /agents/%s: %d, identifier %q; want its own record", fixtures.CardsRegistryOther, status, got)
	}
	if _, status := getAgent(t, hs.URL, "https://"+fixtures.HostCards+"/.well-known/no-such-card.json"); status != http.StatusNotFound {
		t.Errorf("GET /agents/ of an identifier nobody wrote: %d, want 404", status)
	}
	// cards.test lists three agents and the registry two servers, one of
	// them the catalog's: four agents in all.
	if len(docs) != 4 {
		ids := []any{}
		for _, d := range docs {
			ids = append(ids, d["identifier"])
		}
		t.Errorf("%d documents %v, want 4", len(docs), ids)
	}
}

// TestBrokenCardLosesNothing: a bare card indexed once and then served
// broken stays in the index as it was (a failed fetch deletes nothing),
// and is reported with its problem.
func TestBrokenCardLosesNothing(t *testing.T) {
	st := newStack(t, "brokencard", stackOptions{})
	var site fixtures.A2ASite
	for _, s := range st.w.A2ASites() {
		if s.Broken == "" && s.Also == "" {
			site = s
			break
		}
	}
	u := "https://" + site.Host + site.Path
	st.crawl(t, []string{site.Host})
	before, ok := readDocs(t, st.s.Client, st.index)[normalize.DocID(u)]
	if !ok || before["sourceKind"] != normalize.SourceCard {
		t.Fatalf("%s: not indexed as a card: %v", u, before)
	}
	body, _ := st.w.File(site.Host, site.Path)
	st.w.SetFile(site.Host, site.Path, body[:len(body)/3])
	rep := st.crawl(t, []string{site.Host})
	after, ok := readDocs(t, st.s.Client, st.index)[normalize.DocID(u)]
	if !ok || after["contentHash"] != before["contentHash"] {
		t.Errorf("%s after a broken fetch: %v", u, after)
	}
	failed := false
	for _, c := range rep.Catalogs {
		if c.URL == u && c.Status == normalize.StatusFailed && len(c.Problems) > 0 && c.Problems[0].Code == normalize.CodeInvalidJSON {
			failed = true
		}
	}
	if !failed {
		t.Errorf("the broken card is not reported: %+v", rep.Catalogs)
	}
}
