package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

// TestMeilisearchRestartMidSyncLosesNothing runs its own Meilisearch,
// kills it while a sync is being written, starts it again on the same port
// and data, and checks every record arrived and every result was applied.
func TestMeilisearchRestartMidSyncLosesNothing(t *testing.T) {
	ctx := t.Context()
	m := meilitest.Managed(t)

	res := &results{}
	ix, err := New(ctx, meili.New(m.URL, m.APIKey), Config{Index: "agents", QueueSize: 4, BatchSize: 100,
		RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond, OnResult: res.add,
		Logger: slog.New(slog.NewTextHandler(tlog{t}, nil))})
	if err != nil {
		t.Fatalf("New: %v", err)
	}

	const catalogs, per = 60, 25
	putErr := make(chan error, 1)
	go func() {
		for c := range catalogs {
			origin := fmt.Sprintf("https://host%d.test/.well-known/ai-catalog.json", c)
			var rs []normalize.Record
			for i := range per {
				rs = append(rs, normalize.Record{
					Identifier:  fmt.Sprintf("urn:air:host%d.test:agent:%d", c, i),
					DisplayName: fmt.Sprintf("Agent %d of host %d", i, c),
					Type:        "application/a2a-agent-card+json",
					Description: "restart test",
				})
			}
			if err := ix.Put(ctx, normalize.CatalogResult{Catalog: origin, Status: normalize.StatusOK, Records: rs}); err != nil {
				putErr <- err
				return
			}
		}
		putErr <- nil
	}()

	// Crash Meilisearch once part of the sync is applied, then bring it back.
	for ix.Stats().Results < catalogs/4 {
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // let writes meet a dead server
	if err := m.Start(ctx); err != nil {
		t.Fatalf("start again: %v", err)
	}

	if err := <-putErr; err != nil {
		t.Fatalf("Put: %v", err)
	}
	if err := ix.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	closeCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ix.Close(closeCtx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	res.mu.Lock()
	applied := len(res.all)
	for _, a := range res.all {
		if a.Err != nil {
			t.Errorf("%s: %v", a.Catalog, a.Err)
		}
	}
	res.mu.Unlock()
	if applied != catalogs {
		t.Fatalf("%d results applied, want %d", applied, catalogs)
	}
	st, err := meili.New(m.URL, m.APIKey).Index("agents").GetStatsWithContext(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.NumberOfDocuments != catalogs*per {
		t.Fatalf("%d documents after the restart, want %d", st.NumberOfDocuments, catalogs*per)
	}
}

// tlog sends log lines to t.Log (shown with -v or on failure).
type tlog struct{ t *testing.T }

func (w tlog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
