package searchapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/searchtest"
)

// axisEmbedder maps a few words to unit vectors: enough to check that a
// hybrid query reaches Meilisearch in the shape it accepts and that
// semantic-only matches come back with their component.
type axisEmbedder struct{}

func (axisEmbedder) Dimensions() int { return 3 }
func (axisEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		switch t {
		case "rainfall outlook":
			out[i] = []float32{1, 0, 0}
		default:
			out[i] = []float32{0, 0, 1}
		}
	}
	return out, nil
}

func TestHybridSearch(t *testing.T) {
	ms, name := meilitest.Index(t, "searchapi_hybrid")
	idx := ms.Client.Index(name)
	st := searchtest.Settings()
	st.Embedders = map[string]meilisearch.Embedder{normalize.EmbedderName: {Source: meilisearch.UserProvidedEmbedderSource, Dimensions: 3}}
	task, err := idx.UpdateSettings(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	mk := func(id, name, desc string, vec []float32) normalize.Document {
		d := normalize.NewDocument(normalize.Record{Identifier: id, DisplayName: name, Description: desc, Type: "application/a2a-agent-card+json"}, testNow)
		d.Vectors = map[string]any{normalize.EmbedderName: vec}
		return d
	}
	docs := []normalize.Document{
		mk("urn:ai:w.example:agent:forecast", "Forecast Agent", "weather predictions", []float32{0.9, 0.1, 0}),
		mk("urn:ai:w.example:agent:books", "Book Agent", "library loans", []float32{0, 1, 0}),
	}
	task, err = idx.AddDocuments(docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Index: name, Meili: ms.Client, Embedder: axisEmbedder{}, SemanticRatio: 0.9, MinScore: new(int), Now: func() time.Time { return testNow }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, srv: srv}
	f.http = httptest.NewServer(srv.Handler())
	t.Cleanup(f.http.Close)
	// No keyword of "rainfall outlook" is in any document: only the vector
	// finds the forecast agent, and its evidence says so.
	status, out := f.search(map[string]any{"query": map[string]any{"text": "rainfall outlook", "federation": "none"}, "includeEvidence": true})
	if status != http.StatusOK || len(out.Results) == 0 {
		t.Fatalf("status %d, %d results, %+v", status, len(out.Results), out.Error)
	}
	top := out.Results[0]
	if top.Identifier != "urn:ai:w.example:agent:forecast" {
		t.Fatalf("top %s", top.Identifier)
	}
	if sem, ok := top.Evidence.ScoreComponents["semantic"]; !ok || sem <= 0.5 {
		t.Fatalf("semantic component %v (%v)", sem, top.Evidence.ScoreComponents)
	}
}

// TestSearchBeforeTheEmbedder: a server with a model searching an index
// that has no embedder yet (a cluster's read node serving before the
// leader's first setup adds it) answers by keywords instead of failing.
func TestSearchBeforeTheEmbedder(t *testing.T) {
	ms, name := meilitest.Index(t, "searchapi_noembedder")
	idx := ms.Client.Index(name)
	task, err := idx.UpdateSettings(searchtest.Settings())
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	doc := normalize.NewDocument(normalize.Record{Identifier: "urn:ai:w.example:agent:books", DisplayName: "Book Agent",
		Description: "library loans and renewals", Type: "application/a2a-agent-card+json"}, testNow)
	if task, err = idx.AddDocuments([]normalize.Document{doc}, nil); err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Index: name, Meili: ms.Client, Embedder: axisEmbedder{}, MinScore: new(int), Now: func() time.Time { return testNow }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, srv: srv}
	f.http = httptest.NewServer(srv.Handler())
	t.Cleanup(f.http.Close)
	status, out := f.search(map[string]any{"query": map[string]any{"text": "library loans", "federation": "none"}})
	if status != http.StatusOK || len(out.Results) == 0 {
		t.Fatalf("status %d, %d results, %+v", status, len(out.Results), out.Error)
	}
	if got := out.Results[0].Identifier; got != "urn:ai:w.example:agent:books" {
		t.Fatalf("top %s", got)
	}
}
