package crawler_test

import (
	"context"
	"sync"
	"testing"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

// urgentSink records whether each result it is handed is urgent.
type urgentSink struct {
	mu     sync.Mutex
	urgent map[string]bool // catalog -> CatalogResult.Urgent
}

func (s *urgentSink) Put(_ context.Context, r normalize.CatalogResult) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.urgent[r.Catalog] = r.Urgent
	return nil
}

// TestCrawlOptionsUrgent: a crawl asked for as urgent marks every result it
// hands the sink (nested catalogs included) as data on the result, and a
// plain crawl of the same seed marks none.
func TestCrawlOptionsUrgent(t *testing.T) {
	web := startWeb(t)
	for _, urgent := range []bool{true, false} {
		sink := &urgentSink{urgent: map[string]bool{}}
		c := newCrawler(t, webConfig(web), sink)
		if _, err := c.CrawlWith(t.Context(), []string{fixtures.HostAcme}, crawler.CrawlOptions{Urgent: urgent}); err != nil {
			t.Fatalf("crawl (urgent %v): %v", urgent, err)
		}
		sink.mu.Lock()
		if len(sink.urgent) < 2 {
			t.Errorf("urgent %v: %d results, want the catalog and its nested ones", urgent, len(sink.urgent))
		}
		for cat, u := range sink.urgent {
			if u != urgent {
				t.Errorf("crawl with Urgent %v handed %s with Urgent %v", urgent, cat, u)
			}
		}
		sink.mu.Unlock()
	}
}
