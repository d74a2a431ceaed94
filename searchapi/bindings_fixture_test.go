package searchapi

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
)

// newBindingsFixture serves the acme and weather catalogs plus bindings.json:
// agents published as ADP cards, HAIDIP metadata and xu metadata (inline),
// one of them with endpoints on a private network.
func newBindingsFixture(t testing.TB, mut func(*Config)) *fixture {
	t.Helper()
	var recs []normalize.Record
	for _, f := range []struct{ file, origin string }{
		{"acme.json", "https://acme.com/.well-known/ai-catalog.json"},
		{"weather.json", "https://mirror.example.net/weather/ai-catalog.json"},
		{"bindings.json", "https://lingo.example/.well-known/ai-catalog.json"},
	} {
		body, err := os.ReadFile(filepath.Join("testdata", f.file))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, catalogRecords(t, body, f.origin)...)
	}
	// No cut-off: the bindings' tests are about their shapes and filters on
	// a small catalog; relevance_test.go tests the cut-off and its reason.
	cfg := Config{PublicURL: "https://finder.test.example", RegistryName: "Test Finder", MinScore: new(int),
		PageTokenKey: []byte("test-key"), Now: func() time.Time { return testNow }}
	return serveRecords(t, "bindings", recs, nil, nil, cfg, mut)
}
