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
)

// seedCrawler adapts the crawler to the scheduler: one seed per crawl, the
// report summarised for scheduling, its registries handed to learn. Both
// come from the crawl report only.
type seedCrawler struct {
	crawler *crawler.Crawler
	learn   func([]crawler.Registry)
	// urgent, when set, reports whether an IndexNow ping asked for this
	// crawl: its results are then written at once (ingest.Urgent).
	urgent func(seed string) bool
}

func (a *seedCrawler) Crawl(ctx context.Context, seed string) (scheduler.Result, error) {
	if a.urgent != nil && a.urgent(seed) {
		ctx = ingest.Urgent(ctx)
	}
	rep, err := a.crawler.Crawl(ctx, []string{seed})
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
	_ crawler.Holder       = (*ingest.Indexer)(nil)
	_ scheduler.Crawler    = (*seedCrawler)(nil)
	_ scheduler.Persister  = validatorState{}
	_ ingest.Embedder      = (*embed.Model)(nil)
	_ searchapi.Embedder   = (*embed.Model)(nil)
	_ searchapi.Supervisor = (*meili.Managed)(nil)
	_ federation.Searcher  = (*federation.Federator)(nil)
)

// validatorState persists the crawler's conditional-GET validators in the
// scheduler's state file (only those of catalogs ingest has written).
type validatorState struct{ c *crawler.Crawler }

func (v validatorState) MarshalState() ([]byte, error) { return json.Marshal(v.c.Validators()) }

func (v validatorState) UnmarshalState(b []byte) error {
	var m map[string]crawler.Validator
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	v.c.SetValidators(m)
	return nil
}
