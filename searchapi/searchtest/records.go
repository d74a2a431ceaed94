package searchtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
)

// Now is the clock of the search side's test servers: after the fixture's
// expired-storm expired.
var Now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// FillerCount is how many near-identical "filler" records the fixture
// catalogs add, enough for several pages.
const FillerCount = 37

// CatalogRecords normalizes a manifest as if fetched from origin, through
// normalize.Catalog alone: every field of a record (publisher and its
// verification, compliance, protocols, host) means what normalize's rules
// make of it, as in production.
func CatalogRecords(t testing.TB, body []byte, origin string) []normalize.Record {
	t.Helper()
	res := normalize.Catalog(body, normalize.Options{Origin: origin, Via: normalize.ViaWellKnown, Now: Now.Add(-time.Hour)})
	if len(res.Records) == 0 {
		t.Fatalf("normalize.Catalog(%s): no records; problems %+v", origin, res.Problems)
	}
	return res.Records
}

// CatalogFile is CatalogRecords of the manifest in file.
func CatalogFile(t testing.TB, file, origin string) []normalize.Record {
	t.Helper()
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return CatalogRecords(t, body, origin)
}

// FillerCatalog is a manifest of n similar general assistants.
func FillerCatalog(n int) []byte {
	var entries []map[string]any
	for i := range n {
		entries = append(entries, map[string]any{
			"identifier":  fmt.Sprintf("urn:ai:filler.example:agent:assistant-%02d", i),
			"displayName": fmt.Sprintf("General Assistant %02d", i),
			"type":        "application/a2a-agent-card+json",
			"url":         fmt.Sprintf("https://filler.example/agents/%02d.json", i),
			"description": fmt.Sprintf("A general purpose assistant that answers questions, variant %d.", i),
			"tags":        []string{"filler", "assistant"},
			"updatedAt":   Now.Add(-time.Duration(i) * time.Hour).Format(time.RFC3339),
		})
	}
	b, _ := json.Marshal(map[string]any{"specVersion": "1.0", "host": map[string]string{"displayName": "Filler"}, "entries": entries})
	return b
}

// fillerOrigin is where the filler catalog is fetched from.
const fillerOrigin = "https://filler.example/.well-known/ai-catalog.json"

// FixtureRecords are the records of the test catalogs in testdata (acme,
// the weather mirror) and the filler, as normalize makes them.
func FixtureRecords(t testing.TB, testdata string) []normalize.Record {
	t.Helper()
	recs := append(CatalogFile(t, filepath.Join(testdata, "acme.json"), "https://acme.com/.well-known/ai-catalog.json"),
		CatalogFile(t, filepath.Join(testdata, "weather.json"), "https://mirror.example.net/weather/ai-catalog.json")...)
	recs = append(recs, CatalogRecords(t, FillerCatalog(FillerCount), fillerOrigin)...)
	for i, r := range recs {
		if strings.HasSuffix(r.Identifier, ":expired-storm") && r.ExpiresAt == "" {
			recs[i].ExpiresAt = "2026-01-01T00:00:00Z" // as an xu artifact's expires_at would set it
		}
	}
	return recs
}

// SiteRecords are the records the site's tests serve: acme, the weather
// mirror, the tools catalog of testdata/site.json and the filler.
func SiteRecords(t testing.TB, testdata string) []normalize.Record {
	t.Helper()
	var recs []normalize.Record
	for _, f := range []struct{ file, origin string }{
		{"acme.json", "https://acme.com/.well-known/ai-catalog.json"},
		{"weather.json", "https://mirror.example.net/weather/ai-catalog.json"},
		{"site.json", "https://tools.example.org/.well-known/ai-catalog.json"},
	} {
		recs = append(recs, CatalogFile(t, filepath.Join(testdata, f.file), f.origin)...)
	}
	return append(recs, CatalogRecords(t, FillerCatalog(FillerCount), fillerOrigin)...)
}

// What the site fixture's about page is told about crawling (the fields
// of web.CrawlInfo): its seeds, its last crawl and its upstreams.
var (
	SiteSeeds     = []string{"acme.com", "weather.example", "tools.example.org"}
	SiteLastCrawl = Now.Add(-3 * time.Hour)
	SiteUpstreams = []string{"https://upstream.test.example/search"}
)

// The trust fixture: the fixture records, some with trust and health as
// the crawler and prober set them, the others without (as indexed before
// either existed). Publishers: acme.com and filler.example verified,
// weather.example not.
var (
	TrustOf = map[string]*normalize.Trust{
		"urn:ai:acme.com:agent:claims":        {Level: normalize.TrustSigned, Signer: "did:web:acme.com", CheckedAt: Now.Add(-time.Hour)},
		"urn:ai:acme.com:agent:scheduler":     {Level: normalize.TrustDomain, CheckedAt: Now.Add(-time.Hour)},
		"urn:ai:acme.com:mcp:records":         {Level: normalize.TrustNone, Problems: []normalize.Problem{{Path: "entries[2].trustManifest.signature", Code: normalize.CodeBadSignature, Severity: normalize.SeverityWarning, Message: "the signature does not verify"}}},
		"urn:ai:weather.example:mcp:forecast": {Level: normalize.TrustNone},
	}
	HealthOf = map[string]*normalize.Health{
		"urn:ai:acme.com:agent:claims":        {Status: normalize.HealthUp, CheckedAt: Now.Add(-10 * time.Minute), LatencyMs: 42},
		"urn:ai:acme.com:agent:scheduler":     {Status: normalize.HealthDown, CheckedAt: Now.Add(-10 * time.Minute), Detail: "HTTP 503"},
		"urn:ai:acme.com:mcp:records":         {Status: normalize.HealthAuthRequired, CheckedAt: Now.Add(-10 * time.Minute), Detail: "HTTP 401"},
		"urn:ai:weather.example:mcp:forecast": {Status: normalize.HealthUp, CheckedAt: Now.Add(-10 * time.Minute), LatencyMs: 7},
	}
)

// MarkStale marks the fixture's old-radar record stale, as ingest does
// when a catalog keeps failing.
func MarkStale(d *normalize.Document) {
	if strings.HasSuffix(d.Identifier, ":old-radar") {
		d.Stale = true
	}
}

// MarkTrust is the trust fixture's mark: MarkStale, and with withTrust the
// trust and health of TrustOf and HealthOf.
func MarkTrust(withTrust bool) func(*normalize.Document) {
	return func(d *normalize.Document) {
		MarkStale(d)
		if withTrust {
			d.Trust, d.Health = TrustOf[d.Identifier], HealthOf[d.Identifier]
		}
	}
}

// BindingsText matches the trust fixture's acme and weather records
// broadly, so each binding has several levels and statuses to tell apart.
const BindingsText = "healthcare weather forecast flights claims records appointment"
