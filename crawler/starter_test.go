package crawler_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

// startSink records, in order, the starts and results a crawl hands it.
type startSink struct {
	mu     sync.Mutex
	events []string // "start <seed>" or "put <catalog> <seed>"
}

func (s *startSink) CrawlStarted(_ context.Context, seed string, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, "start "+seed)
	return nil
}

func (s *startSink) Put(_ context.Context, r normalize.CatalogResult) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, "put "+r.Catalog+" "+r.Seed)
	return nil
}

// TestStarterHearsTheSeedFirst: a sink that is a Starter hears of a seed's
// crawl before any of its results, and every result names the seed whose
// crawl fetched it (nested catalogs included).
func TestStarterHearsTheSeedFirst(t *testing.T) {
	web := startWeb(t)
	sink := &startSink{}
	c := newCrawler(t, webConfig(web), sink)
	crawl(t, c, fixtures.HostAcme)
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.events) < 2 || sink.events[0] != "start "+fixtures.HostAcme {
		t.Fatalf("events = %v, want the start of %s first, then results", sink.events, fixtures.HostAcme)
	}
	for _, e := range sink.events[1:] {
		if len(e) < 4 || e[:4] != "put " || e[len(e)-len(fixtures.HostAcme)-1:] != " "+fixtures.HostAcme {
			t.Errorf("event %q: want a result of seed %s", e, fixtures.HostAcme)
		}
	}
}
