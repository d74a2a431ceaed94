package main

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/scheduler"
)

// seedCrawler adapts the crawler to the scheduler: one seed per crawl, the
// report summarised for scheduling, registries handed to the book.
type seedCrawler struct {
	crawler *crawler.Crawler
	tap     *refreshTap
	learn   func([]crawler.Registry)
}

func (a *seedCrawler) Crawl(ctx context.Context, seed string) (scheduler.Result, error) {
	ctx, expiry := a.tap.watch(ctx)
	rep, err := a.crawler.Crawl(ctx, []string{seed})
	if rep == nil {
		return scheduler.Result{}, err
	}
	res := scheduler.Result{
		Catalogs:    rep.Totals.Catalogs,
		Succeeded:   rep.Totals.OK + rep.Totals.NotModified,
		NotModified: rep.Totals.NotModified,
		Records:     rep.Totals.Records,
		Report:      rep,
	}
	for _, c := range rep.Catalogs {
		if c.MaxAge > 0 && (res.Refresh == 0 || c.MaxAge < res.Refresh) {
			res.Refresh = c.MaxAge
		}
	}
	if d := expiry.soonest(); d > 0 && (res.Refresh == 0 || d < res.Refresh) {
		res.Refresh = d
	}
	a.learn(rep.Registries)
	return res, err
}

// refreshTap passes results to the sink and, for the crawl whose context
// it marked, notes the soonest expiresAt and max-age among them.
type refreshTap struct {
	sink crawler.Sink
	now  func() time.Time
	book *federation.Book
}

type tapKey struct{}

// expiryWatch collects the soonest refresh a crawl's catalogs ask for.
type expiryWatch struct {
	mu   sync.Mutex
	soon time.Duration
}

func (w *expiryWatch) note(d time.Duration) {
	if d <= 0 {
		return
	}
	w.mu.Lock()
	if w.soon == 0 || d < w.soon {
		w.soon = d
	}
	w.mu.Unlock()
}

func (w *expiryWatch) soonest() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.soon
}

func (t *refreshTap) watch(ctx context.Context) (context.Context, *expiryWatch) {
	w := &expiryWatch{}
	return context.WithValue(ctx, tapKey{}, w), w
}

// Put notes refresh hints and registries, and forwards res.
func (t *refreshTap) Put(ctx context.Context, res normalize.CatalogResult) error {
	if len(res.Registries) > 0 && t.book != nil {
		t.book.AddFromRecords(res.Registries)
	}
	if w, ok := ctx.Value(tapKey{}).(*expiryWatch); ok && res.Status != normalize.StatusFailed {
		w.note(res.MaxAge)
		now := t.now()
		for _, r := range res.Records {
			if r.ExpiresAt == "" {
				continue
			}
			if at, err := time.Parse(time.RFC3339, r.ExpiresAt); err == nil && at.After(now) {
				w.note(at.Sub(now))
			}
		}
	}
	return t.sink.Put(ctx, res)
}

// Holds passes the crawler's question on to the sink (see crawler.Holder),
// so a validator is used and kept only once ingest wrote the catalog.
func (t *refreshTap) Holds(catalog string) bool {
	h, ok := t.sink.(crawler.Holder)
	return !ok || h.Holds(catalog)
}

var (
	_ crawler.Holder = (*refreshTap)(nil)
	_ crawler.Holder = (*ingest.Indexer)(nil)
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
