package e2e_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/searchapi"
)

// TestEndToEndFixtureWeb crawls part of the fixture web into a real index
// through ingest, then asks the API what a client would.
func TestEndToEndFixtureWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the fixture web")
	}
	ctx := t.Context()
	ms, name := meilitest.Index(t, "searchapi_e2e")
	t.Cleanup(func() { // ingest keeps per-catalog state in a second index
		if task, err := ms.Client.DeleteIndex(name + "_sources"); err == nil {
			_ = meilitest.Wait(ms.Client, task.TaskUID)
		}
	})
	web := crawlertest.Web(t, fixtures.Options{})
	ix, err := ingest.New(ctx, ms.Client, ingest.Config{Index: name})
	if err != nil {
		t.Fatalf("ingest.New: %v", err)
	}
	t.Cleanup(func() { _ = ix.Close(context.Background()) })
	cfg := crawlertest.Config(web)
	cfg.UserAgent, cfg.Timeout, cfg.MaxAttempts = "AgentFinderBot/test", 2*time.Second, 2
	cfg.RetryBackoff, cfg.MaxRetryAfter, cfg.MaxCrawlDelay = 5*time.Millisecond, 50*time.Millisecond, 20*time.Millisecond
	c, err := crawler.New(cfg, ix, nil)
	if err != nil {
		t.Fatalf("crawler.New: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Crawl(ctx, []string{fixtures.HostAcme, fixtures.HostVariants, fixtures.HostSpoofer, fixtures.HostSolo}); err != nil {
		t.Fatalf("crawl: %v", err)
	}
	if err := ix.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	srv, err := searchapi.New(searchapi.Config{Index: name, Meili: ms.Client, PublicURL: "https://finder.e2e.test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	f := apiClient(t, hs)

	type listOut struct {
		Items []struct {
			Identifier        string   `json:"identifier"`
			Type              string   `json:"type"`
			PublisherVerified bool     `json:"publisherVerified"`
			Compliance        []string `json:"compliance"`
		} `json:"items"`
		Total int `json:"total"`
	}
	list := func(filter string) listOut {
		t.Helper()
		var out listOut
		if resp := f.Do("GET", "/agents?pageSize=100&filter="+url.QueryEscape(filter), nil, nil, &out); resp.StatusCode != 200 {
			t.Fatalf("GET /agents %s: %d", filter, resp.StatusCode)
		}
		return out
	}
	all := list("")
	if all.Total < 5 {
		t.Fatalf("only %d records indexed", all.Total)
	}
	// Every listed identifier round-trips through GET /agents/{identifier}.
	for _, it := range all.Items {
		var rec map[string]any
		if resp := f.Do("GET", "/agents/"+url.PathEscape(it.Identifier), nil, nil, &rec); resp.StatusCode != 200 || rec["identifier"] != it.Identifier {
			t.Errorf("GET /agents/%s: %d", it.Identifier, resp.StatusCode)
		}
	}
	// Records under acme.test are verified when Acme's own catalog listed
	// them, and never when the spoofer's copy is the one indexed.
	acme := list(`publisher = acme.test`)
	fromAcme := 0
	for _, it := range acme.Items {
		var rec struct {
			PublisherVerified bool `json:"publisherVerified"`
			Provenance        struct {
				Catalog string `json:"catalog"`
			} `json:"provenance"`
		}
		f.Do("GET", "/agents/"+url.PathEscape(it.Identifier), nil, nil, &rec)
		u, _ := url.Parse(rec.Provenance.Catalog)
		switch {
		case u == nil:
			t.Errorf("%s: no provenance", it.Identifier)
		case strings.HasSuffix(u.Hostname(), "acme.test"):
			fromAcme++
			if !rec.PublisherVerified {
				t.Errorf("%s from Acme's catalog is not verified", it.Identifier)
			}
		case rec.PublisherVerified:
			t.Errorf("%s from %s is verified", it.Identifier, rec.Provenance.Catalog)
		}
	}
	if fromAcme == 0 {
		t.Fatal("no records from Acme's catalogs")
	}
	if n := list(`publisher = acme.test AND verified = true`).Total; n != fromAcme {
		t.Errorf("verified filter: %d, want %d", n, fromAcme)
	}
	// The MCP type matches whatever spelling the catalogs used.
	canon := list(`type = "application/mcp-server+json"`)
	card := list(`type = "application/mcp-server-card+json"`)
	if canon.Total == 0 || canon.Total != card.Total {
		t.Errorf("mcp records: %d by canonical type, %d by card spelling", canon.Total, card.Total)
	}
	// Compliance filters by family.
	status, out := postSearchJSON(f, map[string]any{"query": map[string]any{"text": "agent", "compliance": "hipaa", "federation": "none"}, "pageSize": 50})
	if status != 200 {
		t.Fatalf("search: %d %+v", status, out.Error)
	}
	hipaa := list(`compliance = hipaa`)
	for _, it := range hipaa.Items {
		if !slices.ContainsFunc(it.Compliance, func(c string) bool { return strings.HasPrefix(c, "hipaa") }) {
			t.Errorf("%s in the hipaa filter with compliance %v", it.Identifier, it.Compliance)
		}
	}
	if hipaa.Total == 0 {
		t.Errorf("no HIPAA records in the fixture web")
	}
	// Search finds by words, every result from this registry.
	status, out = postSearchJSON(f, map[string]any{"query": map[string]any{"text": "acme", "federation": "none"}, "pageSize": 5})
	if status != 200 || len(out.Results) == 0 {
		t.Fatalf("search acme: %d %d", status, len(out.Results))
	}
	for _, r := range out.Results {
		if r.Source != "https://finder.e2e.test" || r.Score < 0 || r.Score > 100 {
			t.Errorf("result %+v", r)
		}
	}
}
