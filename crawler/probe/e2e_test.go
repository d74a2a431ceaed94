package probe_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/crawler/probe"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/ingest"
	"github.com/agentfinder/agentfinder/ingest/embed"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi"
	"github.com/agentfinder/agentfinder/searchapi/query"
)

// The liveness cases of fixtures.HostLive, by identifier.
const (
	idUp      = "urn:ai:live.test:agent:up"
	idDown    = "urn:ai:live.test:agent:down"
	idRefused = "urn:ai:live.test:agent:refused"
	idSlow    = "urn:ai:live.test:agent:slow"
	idGated   = "urn:ai:live.test:agent:gated"
	idHidden  = "urn:ai:live.test:agent:hidden"
	idREST    = "urn:ai:live.test:agent:rest"
	idGone    = "urn:ai:live.test:agent:gone"
	idMCP     = "urn:ai:live.test:mcp:up"
	idStdio   = "urn:ai:live.test:mcp:stdio"
	idNotes   = "urn:ai:live.test:skill:notes"
)

// healthSink hands the prober's verdicts to an indexer made after it (the
// indexer reads the prober's state, the prober writes to the indexer).
type healthSink struct{ ix *ingest.Indexer }

func (s *healthSink) SetHealth(ctx context.Context, id, catalog string, h normalize.Health) (bool, error) {
	return s.ix.SetHealth(ctx, id, catalog, h)
}

func (s *healthSink) SetTools(ctx context.Context, id, catalog string, ts *normalize.ToolSet) (bool, error) {
	return s.ix.SetTools(ctx, id, catalog, ts)
}

// observed is the crawler's sink in serve's shape: ingest first, then the
// prober learns the records.
type observed struct {
	ix *ingest.Indexer
	p  *probe.Prober
}

func (o observed) Put(ctx context.Context, res normalize.CatalogResult) error {
	if err := o.ix.Put(ctx, res); err != nil {
		return err
	}
	o.p.Observe(res.Catalog, res.Records)
	return nil
}

// live is crawl -> ingest (a real Meilisearch) -> prober -> search over
// the fixture web's live.test.
type live struct {
	t     *testing.T
	web   *fixtures.Web
	clock *clockwork.FakeClock
	cfg   probe.Config
	cr    *crawler.Crawler
	ix    *ingest.Indexer
	p     *probe.Prober
	api   *httptest.Server
}

func newLive(t *testing.T) *live { t.Helper(); return newLiveWith(t, nil) }

// newLiveWith is newLive with an embedder for ingest and search (nil:
// keyword search only) and serve's query rewriter.
func newLiveWith(t *testing.T, emb *embed.Model) *live {
	t.Helper()
	m, index := meilitest.Index(t, "probe")
	web := crawlertest.Web(t, fixtures.Options{})
	l := &live{t: t, web: web, clock: clockwork.NewFakeClockAt(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))}
	l.cfg = probe.Config{Slow: 100 * time.Millisecond, Now: l.clock.Now, StatePath: filepath.Join(t.TempDir(), "probe.json")}
	cfg := crawlertest.Config(web)
	cfg.Timeout, cfg.MaxAttempts = 2*time.Second, 1
	cr, err := crawler.New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cr.Close() })
	l.cr = cr
	sink := &healthSink{}
	if l.p, err = probe.New(l.cfg, cr, sink); err != nil {
		t.Fatal(err)
	}
	icfg := ingest.Config{Index: index, Health: l.p, Tools: l.p}
	scfg := searchapi.Config{Index: index, Meili: m.Client}
	if emb != nil {
		icfg.Embedder, scfg.Embedder, scfg.QueryRewriter = emb, emb, query.Rewrite
	}
	if l.ix, err = ingest.New(t.Context(), m.Client, icfg); err != nil {
		t.Fatal(err)
	}
	sink.ix = l.ix
	t.Cleanup(func() { l.ix.Close(context.Background()) })
	srv, err := searchapi.New(scfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.api = httptest.NewServer(srv.Handler())
	t.Cleanup(l.api.Close)
	return l
}

// crawl crawls seeds (live.test when none) into the index through a
// crawler of its own whose sink feeds the prober, and waits until the
// index has them.
func (l *live) crawl(seeds ...string) {
	l.t.Helper()
	cfg := crawlertest.Config(l.web)
	cfg.Timeout, cfg.DisableDNS = 2*time.Second, true
	c, err := crawler.New(cfg, observed{ix: l.ix, p: l.p}, nil)
	if err != nil {
		l.t.Fatal(err)
	}
	defer c.Close()
	if len(seeds) == 0 {
		seeds = []string{fixtures.HostLive}
	}
	if _, err := c.Crawl(l.t.Context(), seeds); err != nil {
		l.t.Fatalf("crawl: %v", err)
	}
	l.flush()
}

// catalog is live.test's catalog URL as discovery finds it (the default
// port, which the crawler maps), the catalog its records come from.
func (l *live) catalog() string { return "https://" + fixtures.HostLive + fixtures.PathWellKnown }

func (l *live) flush() {
	l.t.Helper()
	if err := l.ix.Flush(l.t.Context()); err != nil {
		l.t.Fatalf("flush: %v", err)
	}
}

// round runs one probe round and waits until its verdicts are searchable.
func (l *live) round() int {
	l.t.Helper()
	n := l.p.RunDue(l.t.Context())
	l.flush()
	return n
}

// agent decodes GET /agents/{identifier}'s answer into v.
func (l *live) agent(id string, v any) {
	l.t.Helper()
	resp, err := http.Get(l.api.URL + "/agents/" + url.PathEscape(id))
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		l.t.Fatalf("GET /agents/%s: %d", id, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		l.t.Fatal(err)
	}
}

// health reads a record's health back through GET /agents/{identifier}.
func (l *live) health(id string) normalize.Health {
	l.t.Helper()
	var rec struct {
		Health *normalize.Health `json:"health"`
	}
	l.agent(id, &rec)
	if rec.Health == nil {
		l.t.Fatalf("GET /agents/%s: no health on the record", id)
	}
	return *rec.Health
}

// listed returns the identifiers GET /agents lists for a filter expression.
func (l *live) listed(filter string) []string {
	l.t.Helper()
	resp, err := http.Get(l.api.URL + "/agents?pageSize=50&filter=" + url.QueryEscape(filter))
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		l.t.Fatalf("GET /agents?filter=%s: %d", filter, resp.StatusCode)
	}
	var page struct {
		Items []struct {
			Identifier string `json:"identifier"`
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		l.t.Fatal(err)
	}
	var ids []string
	for _, it := range page.Items {
		ids = append(ids, it.Identifier)
	}
	slices.Sort(ids)
	return ids
}

func (l *live) want(id, status, detail string) normalize.Health {
	l.t.Helper()
	h := l.health(id)
	if h.Status != status || !strings.Contains(h.Detail, detail) {
		l.t.Errorf("%s: health %+v, want status %s with detail containing %q", id, h, status, detail)
	}
	return h
}

// copyHost republishes live.test's up agent with a card naming the
// endpoint that answers 503: an unverified claim that loses to live.test's
// own, and whose endpoint must never speak for the record.
const copyHost = "live-copy.test"

func TestLiveness(t *testing.T) {
	l := newLive(t)
	l.web.SetFile(copyHost, fixtures.PathWellKnown, []byte(`{"specVersion": "1.0", "entries": [
	  {"identifier": "urn:ai:live.test:agent:up", "displayName": "Heron Dispatcher (copy)",
	   "type": "application/a2a-agent-card+json", "url": "https://live-copy.test/card.json",
	   "description": "A copy whose endpoint is down.", "updatedAt": "2030-01-01T00:00:00Z"}]}`))
	l.web.SetFile(copyHost, "/card.json", []byte(`{"name": "Heron Dispatcher (copy)", "description": "A copy.",
	  "version": "9.0.0", "url": "https://live.test/a2a/down", "preferredTransport": "JSONRPC", "skills": []}`))
	l.crawl(fixtures.HostLive, copyHost)

	// Indexed but not probed yet: every record says unknown.
	for _, id := range []string{idUp, idDown, idMCP, idStdio, idNotes} {
		l.want(id, normalize.HealthUnknown, "")
	}
	if n := l.round(); n != 10 {
		t.Errorf("first round probed %d records, want 10 (every record with an endpoint, at once, and the copy's claim)", n)
	}
	if n := l.p.Len(); n != 9 {
		t.Errorf("after the first round the prober tracks %d records, want 9 (the losing copy forgotten)", n)
	}

	t.Run("one probe decides what answers", func(t *testing.T) {
		if h := l.want(idUp, normalize.HealthUp, ""); h.LatencyMs <= 0 || h.CheckedAt.IsZero() {
			t.Errorf("up: %+v, want a latency and a check time", h)
		}
		l.want(idMCP, normalize.HealthUp, "")
		l.want(idREST, normalize.HealthUp, "")
		l.want(idGated, normalize.HealthAuthRequired, "HTTP 401")
		if h := l.want(idSlow, normalize.HealthUp, "slow"); h.LatencyMs < fixtures.LiveSlowDelay.Milliseconds() {
			t.Errorf("slow: latency %dms, want at least %v", h.LatencyMs, fixtures.LiveSlowDelay)
		}
		l.want(idHidden, normalize.HealthUnknown, "robots.txt")
		l.want(idStdio, normalize.HealthUnknown, "")
		l.want(idNotes, normalize.HealthUnknown, "")
		if l.web.Fetched(fixtures.HostLive, fixtures.PathLiveHidden) {
			t.Error("the prober requested a path robots.txt disallows")
		}
		var deleted bool
		for _, r := range l.web.RequestsFor(fixtures.HostLive) {
			deleted = deleted || (r.Method == http.MethodDelete && r.Path == fixtures.PathLiveMCP)
		}
		if !deleted {
			t.Error("the MCP session the probe opened was not closed (no DELETE)")
		}
	})

	t.Run("down only after repeated failures, never deleted", func(t *testing.T) {
		l.want(idDown, normalize.HealthUnknown, "failure 1 of 3")
		l.want(idRefused, normalize.HealthUnknown, "failure 1 of 3")
		l.want(idGone, normalize.HealthUnknown, "a2a-card: HTTP 404 (failure 1 of 3")
		l.clock.Advance(10 * time.Minute * 11 / 10) // past the first retry, jitter included
		if n := l.round(); n != 3 {
			t.Errorf("retry round probed %d records, want the 3 failing ones", n)
		}
		l.want(idDown, normalize.HealthUnknown, "failure 2 of 3")
		l.clock.Advance(20 * time.Minute * 11 / 10)
		l.round()
		l.want(idDown, normalize.HealthDown, "HTTP 503")
		l.want(idRefused, normalize.HealthDown, "connection_error")
		l.want(idGone, normalize.HealthDown, "a2a-card: HTTP 404")
		l.want(idUp, normalize.HealthUp, "") // the others are not due

		// Search filters on what the prober found: the down records are
		// kept, and left out of a live-only listing.
		if got, want := l.listed(`publisher = "live.test" AND health = down`), []string{idDown, idGone, idRefused}; !slices.Equal(got, want) {
			t.Errorf("health = down lists %v, want %v", got, want)
		}
		if got, want := l.listed(`publisher = "live.test" AND health = up`), []string{idREST, idSlow, idUp, idMCP}; !slices.Equal(got, want) {
			t.Errorf("health = up lists %v, want %v", got, want)
		}
	})

	t.Run("a recrawl rewriting a record keeps its health", func(t *testing.T) {
		cat, _ := l.web.File(fixtures.HostLive, fixtures.PathWellKnown)
		l.web.SetFile(fixtures.HostLive, fixtures.PathWellKnown,
			[]byte(strings.Replace(string(cat), "its endpoint answers 503.", "its endpoint answers 503, still.", 1)))
		l.crawl()
		l.want(idDown, normalize.HealthDown, "HTTP 503")
		l.want(idUp, normalize.HealthUp, "")
	})

	t.Run("a down record is probed again within hours, backing off", func(t *testing.T) {
		l.clock.Advance(40 * time.Minute * 11 / 10) // past the retry after a third failure
		if n := l.round(); n != 3 {
			t.Errorf("a round 44 minutes after they went down probed %d records, want the 3 down ones", n)
		}
		l.want(idDown, normalize.HealthDown, "HTTP 503")
		l.clock.Advance(40 * time.Minute * 11 / 10) // short of the next retry (80 minutes, jitter included)
		if n := l.round(); n != 0 {
			t.Errorf("a round 44 minutes after the last retry probed %d records, want none", n)
		}
	})

	t.Run("a restart keeps the state and probes nothing early", func(t *testing.T) {
		if err := l.p.Save(); err != nil {
			t.Fatal(err)
		}
		p2, err := probe.New(l.cfg, l.cr, &healthSink{ix: l.ix})
		if err != nil {
			t.Fatal(err)
		}
		if h, _ := p2.Health(idDown, l.catalog()); h.Status != normalize.HealthDown {
			t.Errorf("after restart: %s is %+v, want down", idDown, h)
		}
		if h, _ := p2.Health(idGated, l.catalog()); h.Status != normalize.HealthAuthRequired {
			t.Errorf("after restart: %s is %+v, want auth_required", idGated, h)
		}
		if n := p2.RunDue(t.Context()); n != 0 {
			t.Errorf("after restart %d records were probed at once, want none before they are due", n)
		}
		l.clock.Advance(27 * time.Hour) // past every record's daily probe
		if n := p2.RunDue(t.Context()); n != 9 {
			t.Errorf("a day later %d records were probed, want 9", n)
		}
	})
}
