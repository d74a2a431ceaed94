package ingest

import (
	"slices"
	"testing"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
)

// TestTrustHealthFilterable: an index made before trust.level and
// health.status were filter fields gets them on the next start, and a
// record's trust and health written through ingest are then filterable by
// their dotted paths. Health comes from the prober's state (Config.Health);
// a record it does not know is stamped unknown, never left without health.
func TestTrustHealthFilterable(t *testing.T) {
	e := newEnv(t, Config{})
	if err := e.ix.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The index as an older release left it: without the two fields.
	old := slices.DeleteFunc(normalize.FilterableFields(), func(f string) bool {
		return f == normalize.FieldTrustLevel || f == normalize.FieldHealthStatus
	})
	attrs := make([]any, len(old))
	for i, f := range old {
		attrs[i] = f
	}
	task, err := e.client.Index(e.index).UpdateFilterableAttributesWithContext(t.Context(), &attrs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.WaitForTaskWithContext(t.Context(), task.TaskUID, 0); err != nil {
		t.Fatal(err)
	}
	probed := &healths{m: map[string]normalize.Health{"urn:air:acme.test:agent:weather": {Status: normalize.HealthUp, LatencyMs: 12}}}
	e.open(Config{Health: probed})
	s, err := e.client.Index(e.index).GetSettingsWithContext(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{normalize.FieldTrustLevel, normalize.FieldHealthStatus} {
		if !slices.Contains(s.FilterableAttributes, f) {
			t.Fatalf("after a restart %s is not filterable: %v", f, s.FilterableAttributes)
		}
	}

	r := catalog(t, acme, acmeManifest())
	for i := range r.Records {
		if r.Records[i].Identifier == "urn:air:acme.test:agent:weather" {
			r.Records[i].Trust = &normalize.Trust{Level: normalize.TrustSigned, Signer: "did:web:acme.test"}
		} else {
			r.Records[i].Trust = nil // as written before it existed
		}
	}
	e.sync(r)
	for filter, want := range map[string]int64{
		`trust.level = "signed"`:                          1,
		`health.status = "up"`:                            1,
		`trust.level NOT EXISTS`:                          2,
		`health.status NOT EXISTS`:                        0,
		`health.status = "unknown"`:                       2,
		`trust.level = "signed" AND health.status = "up"`: 1,
	} {
		if got := e.count(filter); got != want {
			t.Errorf("%s: %d documents, want %d", filter, got, want)
		}
	}
	res, err := e.client.Index(e.index).SearchWithContext(t.Context(), "", &meilisearch.SearchRequest{
		Facets: []string{normalize.FieldTrustLevel, normalize.FieldHealthStatus}, Limit: 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.FacetDistribution) == 0 {
		t.Fatal("no facet distribution for trust.level and health.status")
	}
}
