package ingest

import (
	"slices"
	"testing"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
)

// TestWriterWithoutModelKeepsTheEmbedder: a crawl without the model (no
// Embedder) writing to the index of a serve that embeds leaves the
// embedder setting and the vectors of what it does not rewrite alone; what
// it writes is accepted (with null vectors: Meilisearch 1.21 refuses a
// document without vectors for a userProvided embedder) and marked, and
// the writer with the model rewrites it with vectors, running (its next
// fetch) or restarted (the mark).
func TestWriterWithoutModelKeepsTheEmbedder(t *testing.T) {
	emb := &hashEmbedder{dims: 8}
	e := newEnv(t, Config{Embedder: emb})
	serve := e.ix
	e.sync(catalog(t, acme, acmeManifest()))
	e.wantEmbedded(3)

	changed := manifest(
		entry("urn:air:acme.test:agent:weather", "Weather Agent", "forecasts and alerts", "2025-06-01T00:00:00Z"),
		entry("urn:air:acme.test:agent:travel", "Travel Agent", "books flights and trains", "2025-07-01T00:00:00Z"),
		entry("urn:air:acme.test:agent:billing", "Billing Agent", "invoices", "2025-06-01T00:00:00Z"),
		entry("urn:air:acme.test:agent:hotels", "Hotel Agent", "books hotel rooms", "2025-07-01T00:00:00Z"),
	)
	crawl := e.open(Config{})
	e.sync(catalog(t, acme, changed))
	if ar := e.results.last(acme); ar.Err != nil || ar.Upserted != 2 {
		t.Fatalf("the crawl without the model: %+v, want the changed and the new record written", ar)
	}
	e.wantEmbedder(8)
	e.wantEmbedded(2) // weather and billing kept theirs
	for _, id := range []string{"urn:air:acme.test:agent:travel", "urn:air:acme.test:agent:hotels"} {
		if d := e.doc(id); d == nil || !d.Unembedded {
			t.Fatalf("%s written without vectors: %+v, want it marked unembedded", id, d)
		}
	}
	if d := e.doc("urn:air:acme.test:agent:weather"); d == nil || d.Unembedded {
		t.Fatalf("weather, not rewritten: %+v, want it unmarked", d)
	}

	// The running serve's next fetch rewrites them: their content is not
	// what it last wrote.
	e.ix = serve
	e.sync(catalog(t, acme, changed))
	e.wantEmbedded(4)
	e.wantUnembedded(0)

	// Written again without the model, then a serve that starts afterwards:
	// the mark makes its first fetch rewrite them.
	again := manifest(
		entry("urn:air:acme.test:agent:weather", "Weather Agent", "forecasts, alerts and radar", "2025-08-01T00:00:00Z"),
		entry("urn:air:acme.test:agent:travel", "Travel Agent", "books flights and trains", "2025-07-01T00:00:00Z"),
		entry("urn:air:acme.test:agent:billing", "Billing Agent", "invoices", "2025-06-01T00:00:00Z"),
		entry("urn:air:acme.test:agent:hotels", "Hotel Agent", "books hotel rooms", "2025-07-01T00:00:00Z"),
	)
	e.ix = crawl
	e.sync(catalog(t, acme, again))
	e.wantUnembedded(1)
	for _, ix := range []*Indexer{crawl, serve} {
		if err := ix.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	e.open(Config{Embedder: emb})
	e.sync(catalog(t, acme, again))
	if ar := e.results.last(acme); ar.Upserted != 1 {
		t.Fatalf("the restarted serve: %+v, want the one unembedded record rewritten", ar)
	}
	e.wantEmbedded(4)
	e.wantUnembedded(0)
	e.wantEmbedder(8)
}

// wantEmbedder fails unless the index has normalize.EmbedderName alone,
// userProvided with dims dimensions.
func (e *env) wantEmbedder(dims int) {
	e.t.Helper()
	s, err := e.client.Index(e.index).GetSettingsWithContext(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	got, ok := s.Embedders[normalize.EmbedderName]
	if !ok || len(s.Embedders) != 1 || got.Source != meilisearch.UserProvidedEmbedderSource || got.Dimensions != dims {
		e.t.Fatalf("embedders = %+v, want %s alone, userProvided, %d dimensions", s.Embedders, normalize.EmbedderName, dims)
	}
}

// wantEmbedded fails unless n documents have vectors.
func (e *env) wantEmbedded(n int64) {
	e.t.Helper()
	st, err := e.client.Index(e.index).GetStatsWithContext(e.t.Context(), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if st.NumberOfEmbeddedDocuments != n {
		e.t.Fatalf("%d embedded documents of %d, want %d", st.NumberOfEmbeddedDocuments, st.NumberOfDocuments, n)
	}
}

// wantUnembedded fails unless n documents carry the unembedded mark.
func (e *env) wantUnembedded(n int) {
	e.t.Helper()
	var docs meilisearch.DocumentsResult
	err := e.client.Index(e.index).GetDocumentsWithContext(e.t.Context(), &meilisearch.DocumentsQuery{Limit: 100}, &docs)
	if err != nil {
		e.t.Fatal(err)
	}
	var marked []string
	for _, d := range docs.Results {
		if _, ok := d[normalize.FieldUnembedded]; ok {
			marked = append(marked, string(d[normalize.FieldIdentifier]))
		}
	}
	slices.Sort(marked)
	if len(marked) != n {
		e.t.Fatalf("unembedded documents %v, want %d", marked, n)
	}
}
