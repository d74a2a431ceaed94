package e2e_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

// TestOnlyEntryTurnedInvalidKeepsItsRecord: a catalog's one entry is indexed,
// then the publisher breaks it (no type). The fetch succeeds, the entry is
// reported invalid, and its last good record stays in the index, as it
// would if the whole catalog had failed.
func TestOnlyEntryTurnedInvalidKeepsItsRecord(t *testing.T) {
	s := meilitest.Connect(t)
	ctx := t.Context()
	index := meilitest.NewIndexName("invalid")
	dropIndexes(t, s, index)
	const host, id = "one-entry.test", "urn:ai:one-entry.test:agent:solo"
	web, err := fixtures.Start(ctx, fixtures.Options{NoWorld: true})
	if err != nil {
		t.Fatalf("fixtures: %v", err)
	}
	t.Cleanup(func() { _ = web.Close() })
	good := []byte(`{"specVersion": "1.0", "entries": [{"identifier": "` + id + `", "displayName": "Solo",
	  "type": "application/a2a-agent-card+json", "url": "https://one-entry.test/agents/solo.json", "description": "The only agent."}]}`)
	broken := []byte(`{"specVersion": "1.0", "entries": [{"identifier": "` + id + `", "displayName": "Solo",
	  "url": "https://one-entry.test/agents/solo.json", "description": "The only agent, its type lost."}]}`)

	var applied []ingest.ApplyResult
	ix, err := ingest.New(ctx, s.Client, ingest.Config{Index: index, OnResult: func(_ string, a ingest.ApplyResult) { applied = append(applied, a) }})
	if err != nil {
		t.Fatalf("ingest: %v", err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = ix.Close(cctx)
	})
	cr, err := crawler.New(crawler.Config{
		DNSServer:    web.DNSAddr,
		PortMap:      map[string]string{"443": strconv.Itoa(web.PortFor("https")), "80": strconv.Itoa(web.PortFor("http"))},
		AllowPrivate: true, CAFile: web.CAFile, DisableEnrichment: true, DisableDNS: true, Timeout: 5 * time.Second,
	}, ix, nil)
	if err != nil {
		t.Fatalf("crawler: %v", err)
	}
	t.Cleanup(func() { _ = cr.Close() })
	crawl := func(body []byte) crawler.CatalogReport {
		t.Helper()
		web.SetFile(host, "/.well-known/ai-catalog.json", body)
		rep, err := cr.Crawl(ctx, []string{host})
		if err != nil {
			t.Fatalf("crawl: %v", err)
		}
		if err := ix.Flush(ctx); err != nil {
			t.Fatalf("flush: %v", err)
		}
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
