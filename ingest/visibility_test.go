package ingest

import (
	"slices"
	"testing"

	"github.com/agentfinder/agentfinder/normalize"
)

// marked returns res with every record visible to groups only.
func marked(res normalize.CatalogResult, groups ...string) normalize.CatalogResult {
	res.Records = slices.Clone(res.Records)
	for i := range res.Records {
		res.Records[i].Visibility = groups
	}
	return res
}

// TestVisibilityChangeRewrites: marking a seed with groups (or unmarking
// it) rewrites records whose content did not change, and survives a
// restart without rewriting again.
func TestVisibilityChangeRewrites(t *testing.T) {
	e := newEnv(t, Config{})
	e.sync(catalog(t, acme, acmeManifest()))
	if got := e.count("visibility IN [\"hr\"]"); got != 0 {
		t.Fatalf("public sync: %d hidden documents", got)
	}
	e.sync(marked(catalog(t, acme, acmeManifest()), "hr"))
	if got := e.count("visibility IN [\"hr\"]"); got != 3 {
		t.Fatalf("after marking: %d documents visible to hr only, want 3", got)
	}
	before := e.tasks()
	if err := e.ix.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.open(Config{})
	e.sync(marked(catalog(t, acme, acmeManifest()), "hr"))
	if after := e.tasks(); after != before {
		t.Fatalf("unchanged marked re-sync after restart enqueued %d tasks", after-before)
	}
	e.sync(catalog(t, acme, acmeManifest()))
	if got := e.count("visibility NOT EXISTS OR visibility IS EMPTY"); got != 3 {
		t.Fatalf("after unmarking: %d public documents, want 3", got)
	}
}
