package searchtest

import (
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

// Indexed is a fresh test index holding records.
type Indexed struct {
	Meili *meilitest.Server
	Name  string
	// ByName are the documents indexed, by identifier.
	ByName map[string]normalize.Document
}

// IndexOptions say how IndexRecords lays out documents.
type IndexOptions struct {
	// Dimensions, when positive, adds a userProvided embedder of that size
	// to the index, and Vectors gives every document its vectors (as ingest
	// lays them out).
	Dimensions int
	Vectors    func(normalize.Record) map[string]any
	// Mark, when set, changes each document before it is indexed (stale,
	// trust, health).
	Mark func(*normalize.Document)
}

// IndexRecords indexes recs, as normalize.NewDocument makes documents of
// them half an hour before Now, into a fresh index named after prefix with
// Settings, and waits until they are searchable.
func IndexRecords(t testing.TB, prefix string, recs []normalize.Record, o IndexOptions) *Indexed {
	t.Helper()
	ms, name := meilitest.Index(t, prefix)
	idx := ms.Client.Index(name)
	st := Settings()
	if o.Dimensions > 0 {
		st.Embedders = map[string]meilisearch.Embedder{normalize.EmbedderName: {Source: meilisearch.UserProvidedEmbedderSource, Dimensions: o.Dimensions}}
	}
	task, err := idx.UpdateSettings(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	ix := &Indexed{Meili: ms, Name: name, ByName: map[string]normalize.Document{}}
	docs := make([]normalize.Document, 0, len(recs))
	for _, r := range recs {
		d := normalize.NewDocument(r, Now.Add(-30*time.Minute))
		if o.Mark != nil {
			o.Mark(&d)
		}
		if o.Vectors != nil {
			d.Vectors = o.Vectors(r)
		}
		docs = append(docs, d)
		ix.ByName[r.Identifier] = d
	}
	task, err = idx.AddDocuments(docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(ms.Client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	return ix
}
