package main

import (
	"context"
	"encoding/json"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/embed"
	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/scheduler"
	"github.com/agentfinder/agentfinder/searchapi"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// seedCrawler adapts the crawler to the scheduler: one seed per crawl, the
// report summarised for scheduling, its registries handed to learn. Both
// come from the crawl report only.
type seedCrawler struct {
	crawler *crawler.Crawler
	learn   func([]crawler.Registry)
	// urgent, when set, reports whether an IndexNow ping asked for this
	// crawl: its results are then written at once (crawler.CrawlOptions).
	urgent func(seed string) bool
}

func (a *seedCrawler) Crawl(ctx context.Context, seed string) (scheduler.Result, error) {
	opts := crawler.CrawlOptions{Urgent: a.urgent != nil && a.urgent(seed)}
	rep, err := a.crawler.CrawlWith(ctx, []string{seed}, opts)
	if rep == nil {
		return scheduler.Result{}, err
	}
	a.learn(rep.Registries)
	return summarize(rep), err
}

// summarize is what the scheduler needs of a crawl report: counts and the
// soonest refresh any catalog asked for.
func summarize(rep *crawler.Report) scheduler.Result {
	res := scheduler.Result{
		Catalogs:    rep.Totals.Catalogs,
		Succeeded:   rep.Totals.OK + rep.Totals.NotModified,
		NotModified: rep.Totals.NotModified,
		Records:     rep.Totals.Records,
		Report:      rep,
	}
	for _, c := range rep.Catalogs {
		if c.Refresh > 0 && (res.Refresh == 0 || c.Refresh < res.Refresh) {
			res.Refresh = c.Refresh
		}
	}
	return res
}

// Compile-time checks of what serve wires.
var (
	_ crawler.Sink         = (*ingest.Indexer)(nil)
	_ crawler.BatchSink    = (*ingest.Indexer)(nil) // a registry walk hands on a page at a time
	_ crawler.Holder       = (*ingest.Indexer)(nil)
	_ crawler.Flusher      = (*ingest.Indexer)(nil) // a registry walk's high-water mark waits for it
	_ crawler.Flusher      = probedSink{}
	_ scheduler.Crawler    = (*seedCrawler)(nil)
	_ scheduler.Persister  = crawlerState{}
	_ ingest.Embedder      = (*embed.Model)(nil)
	_ search.Embedder      = (*embed.Model)(nil)
	_ searchapi.Supervisor = (*meili.Managed)(nil)
	_ federation.Searcher  = (*federation.Federator)(nil)
)

// crawlerState persists, in the scheduler's state file, the crawler's
// conditional-GET validators (only those of catalogs ingest has written)
// and where its MCP registry walks stand. A file written before registry
// walks existed holds the validators alone, and still loads.
type crawlerState struct{ c *crawler.Crawler }

type crawlerStateFile struct {
	Validators map[string]crawler.Validator        `json:"validators"`
	Registries map[string]crawler.MCPRegistryState `json:"mcpRegistries,omitempty"`
}

func (v crawlerState) MarshalState() ([]byte, error) {
	f := crawlerStateFile{Validators: v.c.Validators(), Registries: v.c.MCPRegistryStates()}
	if f.Validators == nil {
		f.Validators = map[string]crawler.Validator{} // never null: null reads as the old shape
	}
	return json.Marshal(f)
}

func (v crawlerState) UnmarshalState(b []byte) error {
	var f crawlerStateFile
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	if f.Validators == nil && f.Registries == nil {
		var old map[string]crawler.Validator // the validators alone, as written before
		if err := json.Unmarshal(b, &old); err != nil {
			return err
		}
		f.Validators = old
	}
	v.c.SetValidators(f.Validators)
	v.c.SetMCPRegistryStates(f.Registries)
	return nil
}
