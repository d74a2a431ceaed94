package ingest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfinder/agentfinder/normalize"
)

// TestRealWorldManifests indexes every real-world manifest of
// normalize/testdata/realworld (copies of published catalogs) the way the crawler would hand them over, and checks
// Meilisearch accepts every record and a second pass writes nothing.
func TestRealWorldManifests(t *testing.T) {
	var files []string
	for _, pattern := range []string{"ai-catalog-examples/*.json", "ai-catalog-go-fixtures/*.json", "ard-examples/*.json", "*.json"} {
		m, _ := filepath.Glob(filepath.Join("..", "normalize", "testdata", "realworld", pattern))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no manifests in ../normalize/testdata/realworld")
	}
	e := newEnv(t, Config{Embedder: &hashEmbedder{dims: 8}})
	var rs []normalize.CatalogResult
	ids := map[string]bool{}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		origin := "https://" + filepath.Base(filepath.Dir(f)) + ".test/" + filepath.Base(f)
		r := normalize.Catalog(body, normalize.Options{Origin: origin, Via: normalize.ViaWellKnown, Now: e.clock.Now()})
		res := normalize.CatalogResult{Catalog: origin, Via: normalize.ViaWellKnown, Status: normalize.StatusOK,
			Records: r.Records, Problems: r.Problems}
		for _, rec := range r.Records {
			ids[normalize.DocID(rec.Identifier)] = true
		}
		rs = append(rs, res)
	}
	e.sync(rs...)
	e.results.mu.Lock()
	for _, a := range e.results.all {
		if a.Err != nil {
			t.Errorf("%s: %v", a.Catalog, a.Err)
		}
	}
	e.results.mu.Unlock()
	if got := e.count(""); got != int64(len(ids)) {
		t.Fatalf("%d documents from %d files, want %d distinct identifiers", got, len(files), len(ids))
	}
	before := e.tasks()
	e.sync(rs...)
	if after := e.tasks(); after != before {
		t.Fatalf("second pass over the same manifests enqueued %d tasks, want 0", after-before)
	}
	t.Logf("%d files, %d documents", len(files), len(ids))
}
