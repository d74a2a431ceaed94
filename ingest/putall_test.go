package ingest

import (
	"fmt"
	"testing"

	"github.com/agentfinder/agentfinder/normalize"
)

// TestPutAllAppliesEachResult hands ingest groups of one-record results,
// as a registry walk does, each group larger than the results PutAll may
// keep queued: every result is applied as its own catalog, each record is
// indexed, and none is lost while PutAll waits for room.
func TestPutAllAppliesEachResult(t *testing.T) {
	e := newEnv(t, Config{BatchSize: 10}) // PutAll keeps at most 10 results queued
	const groups, per = 3, 25
	for g := range groups {
		var rs []normalize.CatalogResult
		for i := range per {
			id := fmt.Sprintf("test.put/server-%d-%d", g, i)
			rs = append(rs, normalize.CatalogResult{Catalog: "https://registry.test/v0.1/servers/" + id, Status: normalize.StatusOK,
				Records: []normalize.Record{{Identifier: "urn:ai:put.test:mcp:" + fmt.Sprint(g, "-", i), DisplayName: id, Type: "application/mcp-server+json"}}})
		}
		if err := e.ix.PutAll(t.Context(), rs); err != nil {
			t.Fatalf("PutAll group %d: %v", g, err)
		}
	}
	if err := e.ix.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := e.count(""); n != groups*per {
		t.Errorf("%d documents, want %d", n, groups*per)
	}
	st := e.ix.Stats()
	if st.Results != groups*per || st.Catalogs != groups*per || st.Upserted != groups*per {
		t.Errorf("stats %+v: want %d results, catalogs and upserts", st, groups*per)
	}
	if d := e.doc("urn:ai:put.test:mcp:2-24"); d == nil || d.SourceCatalog != "https://registry.test/v0.1/servers/test.put/server-2-24" {
		t.Errorf("the last result's record: %+v", d)
	}
}
