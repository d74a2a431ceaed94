package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meili"
	"github.com/agentfinder/agentfinder/normalize"
)

const (
	acme    = "https://acme.test/.well-known/ai-catalog.json"
	acmeAlt = "https://agents.acme.test/.well-known/ai-catalog.json" // a subdomain: also verified for acme.test
	evil    = "https://evil.test/.well-known/ai-catalog.json"
	other   = "https://other.test/.well-known/ai-catalog.json"
)

func acmeManifest() string {
	return manifest(
		entry("urn:air:acme.test:agent:weather", "Weather Agent", "forecasts and alerts", "2025-06-01T00:00:00Z"),
		entry("urn:air:acme.test:agent:travel", "Travel Agent", "books flights", "2025-06-01T00:00:00Z"),
		entry("urn:air:acme.test:agent:billing", "Billing Agent", "invoices", "2025-06-01T00:00:00Z"),
	)
}

func TestIdempotentResyncWritesNothing(t *testing.T) {
	e := newEnv(t, Config{})
	e.sync(catalog(t, acme, acmeManifest()))
	if got := e.count(""); got != 3 {
		t.Fatalf("after first sync: %d documents, want 3", got)
	}
	before := e.tasks()
	e.sync(catalog(t, acme, acmeManifest()))
	if got := e.count(""); got != 3 {
		t.Fatalf("after re-sync: %d documents, want 3", got)
	}
	if after := e.tasks(); after != before {
		t.Fatalf("re-sync enqueued %d tasks, want 0", after-before)
	}
	ar := e.results.last(acme)
	if ar.Unchanged != 3 || ar.Upserted != 0 || ar.Deleted != 0 || ar.Err != nil {
		t.Fatalf("re-sync result = %+v, want 3 unchanged and nothing else", ar)
	}

	// A restarted indexer knows the index already: still no writes, and no
	// settings task either.
	if err := e.ix.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	e.open(Config{})
	e.sync(catalog(t, acme, acmeManifest()))
	if after := e.tasks(); after != before {
		t.Fatalf("re-sync after restart enqueued %d tasks, want 0", after-before)
	}
}

func TestVanishedDeletedOnlyAfterOK(t *testing.T) {
	e := newEnv(t, Config{StaleAfterFailures: -1})
	e.sync(catalog(t, acme, acmeManifest()))

	steps := []struct {
		name string
		res  normalize.CatalogResult
		want int64
	}{
		{"failed fetch deletes nothing", failed(acme), 3},
		{"not_modified deletes nothing", notModified(acme), 3},
		{"an ok fetch of a document that is not JSON deletes nothing", catalog(t, acme, `<html>moved</html>`), 3},
		{"an ok fetch of a JSON array deletes nothing", catalog(t, acme, `[1,2]`), 3},
		{"failed fetch with an empty body deletes nothing", func() normalize.CatalogResult {
			r := catalog(t, acme, manifest())
			r.Status = normalize.StatusFailed
			return r
		}(), 3},
		{"ok fetch without billing deletes billing", catalog(t, acme, manifest(
			entry("urn:air:acme.test:agent:weather", "Weather Agent", "forecasts and alerts", "2025-06-01T00:00:00Z"),
			entry("urn:air:acme.test:agent:travel", "Travel Agent", "books flights", "2025-06-01T00:00:00Z"),
		)), 2},
		{"ok fetch of an empty catalog deletes the rest", catalog(t, acme, manifest()), 0},
	}
	for _, s := range steps {
		e.sync(s.res)
		if got := e.count(""); got != s.want {
			t.Fatalf("%s: %d documents, want %d", s.name, got, s.want)
		}
	}
	if e.doc("urn:air:acme.test:agent:billing") != nil {
		t.Fatal("billing still indexed after an ok fetch dropped it")
	}
}

func TestFailedFetchChangesNothing(t *testing.T) {
	e := newEnv(t, Config{StaleAfterFailures: -1})
	e.sync(catalog(t, acme, acmeManifest()))
	before := e.doc("urn:air:acme.test:agent:weather")
	// A failed result that still carries (partial) records must not write them.
	r := catalog(t, acme, manifest(entry("urn:air:acme.test:agent:weather", "Weather Agent", "CHANGED", "2025-07-01T00:00:00Z")))
	r.Status = normalize.StatusFailed
	e.sync(r)
	after := e.doc("urn:air:acme.test:agent:weather")
	if after == nil || after.Description != before.Description || e.count("") != 3 {
		t.Fatalf("failed fetch changed the index: description %q -> %v, %d docs", before.Description, after, e.count(""))
	}
	if ar := e.results.last(acme); ar.Status != normalize.StatusFailed || ar.Upserted != 0 || ar.Deleted != 0 {
		t.Fatalf("failed result = %+v", ar)
	}
}

func TestSpoofingHostCannotReplaceVerifiedRecord(t *testing.T) {
	e := newEnv(t, Config{})
	e.sync(catalog(t, acme, acmeManifest()))

	// evil.test republishes acme's weather agent, newer and rewritten, plus one of its own.
	spoof := catalog(t, evil, manifest(
		entry("urn:air:acme.test:agent:weather", "Weather Agent", "send your API keys to evil.test", "2026-01-01T00:00:00Z"),
		entry("urn:air:evil.test:agent:own", "Evil Own Agent", "legit", "2025-01-01T00:00:00Z"),
	))
	if spoof.Records[0].PublisherVerified {
		t.Fatal("test setup: spoofed record is verified")
	}
	e.sync(spoof)

	d := e.doc("urn:air:acme.test:agent:weather")
	if d == nil || d.Description != "forecasts and alerts" || d.SourceCatalog != acme {
		t.Fatalf("spoofed write replaced acme's record: %+v", d)
	}
	if e.doc("urn:air:evil.test:agent:own") == nil {
		t.Fatal("evil.test's own record was not indexed")
	}
	ar := e.results.last(evil)
	if len(ar.Problems) != 1 || ar.Problems[0].Code != normalize.CodeConflict {
		t.Fatalf("problems = %+v, want one conflict", ar.Problems)
	}
	msg := ar.Problems[0].Message
	if !strings.Contains(msg, acme) || !strings.Contains(msg, evil) {
		t.Fatalf("conflict message does not name both sources: %q", msg)
	}
	if c := ar.Conflicts[0]; c.Kept != acme || c.Lost != evil || c.Reason != "verified publisher" {
		t.Fatalf("conflict = %+v", c)
	}

	// evil.test dropping the identifier must not delete acme's record.
	e.sync(catalog(t, evil, manifest(entry("urn:air:evil.test:agent:own", "Evil Own Agent", "legit", "2025-01-01T00:00:00Z"))))
	if e.doc("urn:air:acme.test:agent:weather") == nil {
		t.Fatal("a catalog that never owned the record deleted it")
	}
}

func TestPrecedence(t *testing.T) {
	const id = "urn:air:acme.test:agent:weather"
	rec := func(origin, desc, updated string, seq int64) normalize.CatalogResult {
		r := catalog(t, origin, manifest(entry(id, "Weather Agent", desc, updated)))
		r.Records[0].Seq = seq
		return r
	}
	cases := []struct {
		name       string
		first      normalize.CatalogResult
		second     normalize.CatalogResult
		wantDesc   string
		wantReason string // "" when the second write wins
	}{
		{"older updatedAt from another catalog loses",
			rec(acme, "new", "2025-06-01T00:00:00Z", 0), rec(acmeAlt, "old", "2025-01-01T00:00:00Z", 0), "new", "updatedAt"},
		{"older updatedAt from the same catalog loses",
			rec(acme, "new", "2025-06-01T00:00:00Z", 0), rec(acme, "old", "2025-01-01T00:00:00Z", 0), "new", "updatedAt"},
		{"newer updatedAt from another verified catalog wins",
			rec(acme, "old", "2025-01-01T00:00:00Z", 0), rec(acmeAlt, "new", "2025-06-01T00:00:00Z", 0), "new", ""},
		{"lower seq loses even with a newer updatedAt",
			rec(acme, "seq5", "2025-01-01T00:00:00Z", 5), rec(acmeAlt, "seq3", "2025-06-01T00:00:00Z", 3), "seq5", "seq"},
		{"higher seq wins",
			rec(acme, "seq5", "2025-06-01T00:00:00Z", 5), rec(acmeAlt, "seq7", "2025-01-01T00:00:00Z", 7), "seq7", ""},
		{"on a tie the catalog URL that sorts first keeps it",
			rec(acme, "first", "2025-06-01T00:00:00Z", 0), rec(acmeAlt, "second", "2025-06-01T00:00:00Z", 0), "first", "catalog URL"},
		{"on a tie the catalog URL that sorts first takes it, whoever came first",
			rec(acmeAlt, "second", "2025-06-01T00:00:00Z", 0), rec(acme, "first", "2025-06-01T00:00:00Z", 0), "first", ""},
		{"a record with seq outranks one without",
			rec(acme, "none", "2025-06-01T00:00:00Z", 0), rec(acmeAlt, "seq1", "2025-01-01T00:00:00Z", 1), "seq1", ""},
		{"verified beats unverified even when older",
			rec(evil, "evil", "2026-01-01T00:00:00Z", 9), rec(acme, "acme", "2024-01-01T00:00:00Z", 1), "acme", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			e.sync(tc.first)
			e.sync(tc.second)
			d := e.doc(id)
			if d == nil || d.Description != tc.wantDesc {
				t.Fatalf("stored %+v, want description %q", d, tc.wantDesc)
			}
			ar := e.results.last(tc.second.Catalog)
			if tc.wantReason == "" {
				if len(ar.Conflicts) != 0 || ar.Upserted != 1 {
					t.Fatalf("second write: %+v, want it applied without conflict", ar)
				}
				if d.SourceCatalog != tc.second.Catalog {
					t.Fatalf("sourceCatalog = %s, want %s", d.SourceCatalog, tc.second.Catalog)
				}
				return
			}
			if len(ar.Conflicts) != 1 || ar.Conflicts[0].Reason != tc.wantReason || ar.Problems[0].Code != normalize.CodeConflict {
				t.Fatalf("second write: conflicts %+v problems %+v, want one %q conflict", ar.Conflicts, ar.Problems, tc.wantReason)
			}
		})
	}
}

func TestTakeoverMovesOwnership(t *testing.T) {
	const id = "urn:air:acme.test:agent:weather"
	e := newEnv(t, Config{})
	e.sync(catalog(t, evil, manifest(entry(id, "Weather Agent", "evil first", "2025-01-01T00:00:00Z"))))
	e.sync(catalog(t, acme, manifest(entry(id, "Weather Agent", "acme", "2025-01-01T00:00:00Z"))))
	// evil no longer owns it: its ok fetch without the entry must not delete acme's record.
	e.sync(catalog(t, evil, manifest()))
	if d := e.doc(id); d == nil || d.Description != "acme" {
		t.Fatalf("after takeover and evil's empty fetch: %+v", d)
	}
	// acme dropping it deletes it.
	e.sync(catalog(t, acme, manifest()))
	if e.doc(id) != nil {
		t.Fatal("owner's ok fetch without the entry did not delete it")
	}
}

func TestStaleMarkingAndRecovery(t *testing.T) {
	e := newEnv(t, Config{StaleAfterFailures: 2, StaleAfter: 48 * time.Hour})
	e.sync(catalog(t, acme, acmeManifest()), catalog(t, other, manifest(
		entry("urn:air:other.test:agent:x", "Other Agent", "other", "2025-06-01T00:00:00Z"))))

	e.sync(failed(acme))
	if got := e.count("stale = true"); got != 0 {
		t.Fatalf("after one failure: %d stale, want 0", got)
	}
	e.sync(failed(acme))
	if got := e.count("stale = true"); got != 3 {
		t.Fatalf("after two failures: %d stale, want 3", got)
	}
	if got := e.count("stale = false"); got != 1 {
		t.Fatalf("other catalog: %d fresh, want 1", got)
	}
	if ar := e.results.last(acme); ar.MarkedStale != 3 {
		t.Fatalf("MarkedStale = %d, want 3", ar.MarkedStale)
	}
	// Records stay whole while stale.
	if d := e.doc("urn:air:acme.test:agent:travel"); d == nil || !d.Stale || d.Description != "books flights" {
		t.Fatalf("stale record = %+v", d)
	}

	e.sync(notModified(acme))
	if got := e.count("stale = true"); got != 0 {
		t.Fatalf("after a not_modified fetch: %d stale, want 0", got)
	}
	if ar := e.results.last(acme); ar.Recovered != 3 {
		t.Fatalf("Recovered = %d, want 3", ar.Recovered)
	}

	// Age: no successful fetch of other.test for longer than StaleAfter.
	e.sync(catalog(t, acme, acmeManifest()))
	e.clock.Advance(72 * time.Hour)
	e.sync() // a flush runs the age check
	if got := e.count("stale = true AND sourceCatalog = " + quote(other)); got != 1 {
		t.Fatalf("other.test after 72h without a fetch: %d stale, want 1", got)
	}
	e.sync(catalog(t, other, manifest(entry("urn:air:other.test:agent:x", "Other Agent", "other", "2025-06-01T00:00:00Z"))))
	if got := e.count("stale = true AND sourceCatalog = " + quote(other)); got != 0 {
		t.Fatalf("other.test after an ok fetch: %d stale, want 0", got)
	}

	// Catalog health survives a restart: one more failure is counted on top.
	if err := e.ix.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.open(Config{StaleAfterFailures: 2, StaleAfter: 48 * time.Hour})
	e.sync(catalog(t, acme, acmeManifest()))
	e.sync(failed(acme))
	if err := e.ix.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.open(Config{StaleAfterFailures: 2, StaleAfter: 48 * time.Hour})
	e.sync(failed(acme))
	if got := e.count("stale = true AND sourceCatalog = " + quote(acme)); got != 3 {
		t.Fatalf("failures across a restart: %d stale, want 3", got)
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func TestExpiredRecordsFlagged(t *testing.T) {
	e := newEnv(t, Config{})
	r := catalog(t, acme, acmeManifest())
	r.Records[0].ExpiresAt = "2020-01-01T00:00:00Z" // weather: expired
	r.Records[1].ExpiresAt = "2099-01-01T00:00:00Z" // travel: later
	e.sync(r)
	now := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC).Unix()
	filter := fmt.Sprintf("expiresAtTs = 0 OR expiresAtTs > %d", now)
	res, err := e.client.Index(e.index).SearchWithContext(t.Context(), "", &meilisearch.SearchRequest{Filter: filter})
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	var got []string
	for _, h := range res.Hits {
		var d normalize.Document
		if err := h.DecodeInto(&d); err != nil {
			t.Fatal(err)
		}
		got = append(got, d.Identifier)
	}
	slices.Sort(got)
	want := []string{"urn:air:acme.test:agent:billing", "urn:air:acme.test:agent:travel"}
	if !slices.Equal(got, want) {
		t.Fatalf("unexpired = %v, want %v", got, want)
	}
	if d := e.doc("urn:air:acme.test:agent:weather"); d == nil || d.ExpiresAtTs != time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Unix() {
		t.Fatalf("expired record = %+v", d)
	}
}

func TestSettingsAppliedOnce(t *testing.T) {
	e := newEnv(t, Config{})
	s, err := e.client.Index(e.index).GetSettingsWithContext(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.SearchableAttributes, normalize.SearchableFields()) {
		t.Fatalf("searchable = %v", s.SearchableAttributes)
	}
	if s.Pagination.MaxTotalHits != normalize.MaxTotalHits || !slices.Contains(s.FilterableAttributes, normalize.FieldExpiresAtTs) {
		t.Fatalf("settings = %+v", s)
	}
	if s.ProximityPrecision != meilisearch.ByAttribute || s.FacetSearch {
		t.Fatalf("proximityPrecision = %q, facetSearch = %v; want byAttribute, false", s.ProximityPrecision, s.FacetSearch)
	}
	if len(s.Embedders) != 0 {
		t.Fatalf("embedders without an Embedder: %v", s.Embedders)
	}
	e.reopenWithoutTasks(Config{})
}

func TestEmbeddings(t *testing.T) {
	emb := &hashEmbedder{dims: 8}
	e := newEnv(t, Config{Embedder: emb})
	r := catalog(t, acme, acmeManifest())
	r.Records[0].RepresentativeQueries = []string{"will it rain tomorrow", "weather in paris"}
	r.Records[0].Examples = []string{"forecast for Berlin"}
	r.Records[1].DisplayName = "" // a record without any text gets a null vector
	r.Records[1].Description = ""
	e.sync(r)

	s, err := e.client.Index(e.index).GetSettingsWithContext(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if emb, ok := s.Embedders[normalize.EmbedderName]; !ok || emb.Source != meilisearch.UserProvidedEmbedderSource || emb.Dimensions != 8 {
		t.Fatalf("embedders = %+v", s.Embedders)
	}
	vectors := func(identifier string) int {
		t.Helper()
		var d struct {
			Vectors map[string]struct {
				Embeddings [][]float32 `json:"embeddings"`
			} `json:"_vectors"`
		}
		err := e.client.Index(e.index).GetDocumentWithContext(t.Context(), normalize.DocID(identifier),
			&meilisearch.DocumentQuery{RetrieveVectors: true}, &d)
		if err != nil {
			t.Fatal(err)
		}
		return len(d.Vectors[normalize.EmbedderName].Embeddings)
	}
	if n := vectors("urn:air:acme.test:agent:weather"); n != 3 {
		t.Fatalf("weather: %d vectors, want 3 (entry + 2 queries; examples get none)", n)
	}
	if n := vectors("urn:air:acme.test:agent:travel"); n != 0 {
		t.Fatalf("travel (no text): %d vectors, want 0", n)
	}
	if n := vectors("urn:air:acme.test:agent:billing"); n != 1 {
		t.Fatalf("billing: %d vectors, want 1", n)
	}
	texts := emb.texts

	// Unchanged content is not embedded again; stale flags keep the vectors.
	e.sync(r)
	e.sync(failed(acme), failed(acme), failed(acme))
	if emb.texts != texts {
		t.Fatalf("re-sync embedded %d more texts, want 0", emb.texts-texts)
	}
	if n := vectors("urn:air:acme.test:agent:weather"); n != 3 || e.count("stale = true") != 3 {
		t.Fatalf("after stale marking: %d vectors, %d stale", n, e.count("stale = true"))
	}
	hits, err := e.client.Index(e.index).SearchWithContext(t.Context(), "", &meilisearch.SearchRequest{
		Vector: mustEmbed(t, emb, "rain tomorrow"), Hybrid: &meilisearch.SearchRequestHybrid{Embedder: normalize.EmbedderName, SemanticRatio: 1}, Limit: 1})
	if err != nil {
		t.Fatalf("vector search: %v", err)
	}
	var top normalize.Document
	if len(hits.Hits) == 0 || hits.Hits[0].DecodeInto(&top) != nil || top.Identifier != "urn:air:acme.test:agent:weather" {
		t.Fatalf("vector search for a representative query did not find weather first: %+v", hits.Hits)
	}
}

func mustEmbed(t *testing.T, e Embedder, s string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{s})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func TestPutAfterCloseFails(t *testing.T) {
	e := newEnv(t, Config{})
	if err := e.ix.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := e.ix.Put(t.Context(), failed(acme)); err != ErrClosed {
		t.Fatalf("Put after Close = %v, want ErrClosed", err)
	}
	if err := e.ix.Flush(t.Context()); err != ErrClosed {
		t.Fatalf("Flush after Close = %v, want ErrClosed", err)
	}
}

// The crawler's Sink, as it declares it.
var _ interface {
	Put(ctx context.Context, res normalize.CatalogResult) error
} = (*Indexer)(nil)

// badVecEmbedder returns a vector of the wrong size for texts holding
// BADVEC, which Meilisearch rejects.
type badVecEmbedder struct{ hashEmbedder }

func (b *badVecEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, err := b.hashEmbedder.Embed(ctx, texts)
	for i, t := range texts {
		if strings.Contains(t, "BADVEC") {
			out[i] = out[i][:3]
		}
	}
	return out, err
}

func TestRejectedDocumentCostsOnlyItself(t *testing.T) {
	e := newEnv(t, Config{Embedder: &badVecEmbedder{hashEmbedder{dims: 8}}})
	good := catalog(t, acme, acmeManifest())
	bad := catalog(t, other, manifest(
		entry("urn:air:other.test:agent:ok", "Fine Agent", "fine", "2025-06-01T00:00:00Z"),
		entry("urn:air:other.test:agent:bad", "Broken Agent", "BADVEC", "2025-06-01T00:00:00Z"),
	))
	if err := e.ix.Put(t.Context(), good); err != nil {
		t.Fatal(err)
	}
	if err := e.ix.Put(t.Context(), bad); err != nil {
		t.Fatal(err)
	}
	err := e.ix.Flush(t.Context())
	if err == nil {
		t.Fatal("Flush reported no error for a rejected document")
	}
	var te *TaskError
	if !errors.As(err, &te) || te.Code == "" || te.Message == "" {
		t.Fatalf("Flush error %v does not carry Meilisearch's task error", err)
	}
	if got := e.count(""); got != 4 {
		t.Fatalf("%d documents indexed, want 4 (all but the rejected one)", got)
	}
	if ar := e.results.last(other); ar.Err == nil {
		t.Fatal("the rejected document's catalog got no error")
	}
	if ar := e.results.last(acme); ar.Err != nil {
		t.Fatalf("a catalog in the same batch got the other's error: %v", ar.Err)
	}
	if st := e.ix.Stats(); st.TaskFailures == 0 || !strings.Contains(st.LastError, te.Code) {
		t.Fatalf("stats = %+v", st)
	}
	// ingest's table was corrected: the next sync tries the record again.
	bad.Records[1].Description = "fixed now"
	bad.Records[1].ContentHash = ""
	e.sync(bad)
	if d := e.doc("urn:air:other.test:agent:bad"); d == nil || d.Description != "fixed now" {
		t.Fatalf("fixed record = %+v", d)
	}
}

func TestEmbedderAddedLaterReembedsOnNextFetch(t *testing.T) {
	e := newEnv(t, Config{})
	e.sync(catalog(t, acme, acmeManifest()))
	if err := e.ix.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	emb := &hashEmbedder{dims: 8}
	e.open(Config{Embedder: emb})
	e.sync(catalog(t, acme, acmeManifest()))
	if ar := e.results.last(acme); ar.Upserted != 3 {
		t.Fatalf("after adding an embedder: %+v, want all 3 rewritten", ar)
	}
	st, err := e.client.Index(e.index).GetStatsWithContext(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.NumberOfEmbeddedDocuments != 3 {
		t.Fatalf("%d embedded documents, want 3", st.NumberOfEmbeddedDocuments)
	}
}

// TestEmbedderOfAnOldLayoutIsReplaced: an index whose vectors are under
// another embedder name (an older layout: "default" held a vector per
// example too) gets normalize.EmbedderName alone, its documents are
// re-embedded on their next fetch, and the start after that changes no
// settings.
func TestEmbedderOfAnOldLayoutIsReplaced(t *testing.T) {
	e := newEnv(t, Config{})
	e.sync(catalog(t, acme, acmeManifest()))
	if err := e.ix.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	old := map[string]meilisearch.Embedder{"default": {Source: meilisearch.UserProvidedEmbedderSource, Dimensions: 8}}
	task, err := e.client.Index(e.index).UpdateEmbeddersWithContext(t.Context(), old)
	if err == nil {
		_, err = e.client.WaitForTaskWithContext(t.Context(), task.TaskUID, 50*time.Millisecond)
	}
	if err != nil {
		t.Fatalf("old embedder: %v", err)
	}
	emb := &hashEmbedder{dims: 8}
	e.open(Config{Embedder: emb})
	e.sync(catalog(t, acme, acmeManifest()))
	if ar := e.results.last(acme); ar.Upserted != 3 {
		t.Fatalf("after the layout changed: %+v, want all 3 rewritten", ar)
	}
	s, err := e.client.Index(e.index).GetSettingsWithContext(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Embedders[normalize.EmbedderName]; !ok || len(s.Embedders) != 1 {
		t.Fatalf("embedders = %v, want %s alone", s.Embedders, normalize.EmbedderName)
	}
	e.reopenWithoutTasks(Config{Embedder: emb})
}

func TestNewGivesUpOnUnreachableMeilisearch(t *testing.T) {
	_, err := New(t.Context(), meili.New("http://127.0.0.1:1", ""), Config{SetupTimeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") && !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("New against a closed port = %v, want an error naming the failure", err)
	}
}
