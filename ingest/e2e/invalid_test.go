package e2e_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/normalize"
)

// TestOnlyEntryTurnedInvalidKeepsItsRecord: a catalog's one entry is indexed,
// then the publisher breaks it (no type). The fetch succeeds, the entry is
// reported invalid, and its last good record stays in the index, as it
// would if the whole catalog had failed.
func TestOnlyEntryTurnedInvalidKeepsItsRecord(t *testing.T) {
	const host, id = "one-entry.test", "urn:ai:one-entry.test:agent:solo"
	good := []byte(`{"specVersion": "1.0", "entries": [{"identifier": "` + id + `", "displayName": "Solo",
	  "type": "application/a2a-agent-card+json", "url": "https://one-entry.test/agents/solo.json", "description": "The only agent."}]}`)
	broken := []byte(`{"specVersion": "1.0", "entries": [{"identifier": "` + id + `", "displayName": "Solo",
	  "url": "https://one-entry.test/agents/solo.json", "description": "The only agent, its type lost."}]}`)

	var applied []ingest.ApplyResult
	st := newStack(t, "invalid", stackOptions{
		webOpts: fixtures.Options{NoWorld: true},
		ingest: func(c *ingest.Config) {
			c.OnResult = func(_ string, a ingest.ApplyResult) { applied = append(applied, a) }
		},
		crawler: func(c *crawler.Config) {
			c.DisableEnrichment, c.DisableDNS, c.MaxAttempts = true, true, 0
		},
	})
	s, index, ctx := st.s, st.index, t.Context()
	crawl := func(body []byte) crawler.CatalogReport {
		t.Helper()
		st.w.SetFile(host, "/.well-known/ai-catalog.json", body)
		rep := st.crawl(t, []string{host})
		if len(rep.Catalogs) != 1 {
			t.Fatalf("crawl reported %d catalogs: %+v", len(rep.Catalogs), rep.Catalogs)
		}
		return rep.Catalogs[0]
	}
	description := func() string {
		t.Helper()
		var d struct{ Description string }
		err := s.Client.Index(index).GetDocumentWithContext(ctx, normalize.DocID(id), nil, &d)
		var me *meilisearch.Error
		if errors.As(err, &me) && me.StatusCode == http.StatusNotFound {
			return ""
		}
		if err != nil {
			t.Fatalf("get %s: %v", id, err)
		}
		return d.Description
	}

	if c := crawl(good); c.Status != normalize.StatusOK || c.Records != 1 {
		t.Fatalf("good catalog: %+v", c)
	}
	if got := description(); got != "The only agent." {
		t.Fatalf("after the good fetch the record reads %q", got)
	}
	c := crawl(broken)
	if c.Status != normalize.StatusOK || c.Records != 0 {
		t.Fatalf("broken entry: %+v, want an ok fetch with no valid record", c)
	}
	var reported bool
	for _, p := range c.Problems {
		reported = reported || p.Severity == normalize.SeverityError
	}
	if !reported {
		t.Errorf("the invalid entry is not reported: %+v", c.Problems)
	}
	if got := description(); got != "The only agent." {
		t.Fatalf("after the entry turned invalid the record reads %q, want the last good one kept", got)
	}
	last := applied[len(applied)-1]
	if last.Deleted != 0 || len(last.Kept) != 1 || last.Kept[0] != id {
		t.Fatalf("ingest applied %+v, want nothing deleted and %s kept", last, id)
	}
}
