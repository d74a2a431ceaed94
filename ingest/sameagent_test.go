package ingest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
)

// The sources of one agent, each reaching it another way.
const (
	pubCatalog  = "https://pub.test/.well-known/ai-catalog.json"
	pubCard     = "https://pub.test/.well-known/agent-card.json"
	pubOldCard  = "https://pub.test/.well-known/agent.json"
	registryURL = "https://registry.test"
)

// pubCardBody is the helpdesk agent's A2A card.
const pubCardBody = `{"name":"Helpdesk","description":"IT helpdesk.","version":"1.0","url":"https://pub.test/a2a/helpdesk",
	"skills":[{"id":"reset","name":"Reset a password","tags":["it"]}]}`

// pubManifest lists the helpdesk agent (its card inline) and an MCP server
// whose streamable-HTTP remote is the registry copy's.
var pubManifest = manifest(
	`{"identifier":"urn:ai:pub.test:agent:helpdesk","displayName":"Helpdesk Agent","type":"application/a2a-agent-card+json","data":`+pubCardBody+`}`,
	`{"identifier":"urn:ai:pub.test:mcp:weather","displayName":"Weather","type":"application/mcp-server+json",
	  "data":{"name":"test.pub/weather","remotes":[{"type":"streamable-http","url":"https://pub.test/mcp/weather/"}]}}`,
)

// cardResult is a bare card fetched from origin, as the crawler hands it on.
func cardResult(t *testing.T, origin, body string) normalize.CatalogResult {
	t.Helper()
	r := normalize.Card([]byte(body), normalize.Options{Origin: origin, Via: normalize.ViaWellKnown})
	if len(r.Records) != 1 {
		t.Fatalf("card %s: %+v", origin, r.Problems)
	}
	return normalize.CatalogResult{Catalog: origin, Via: normalize.ViaWellKnown, Status: normalize.StatusOK, Records: r.Records}
}

// registryResults are a registry's servers, each a name, a remote and a
// repository, read as the crawler reads a registry page: one result per
// server name, under the server's own URL.
func registryResults(t *testing.T, servers ...[3]string) []normalize.CatalogResult {
	t.Helper()
	var items []string
	for _, s := range servers {
		items = append(items, fmt.Sprintf(`{"server":{"name":%q,"description":"A server.","version":"1.0.0",
			"remotes":[{"type":"streamable-http","url":%q}],"repository":{"url":%q,"source":"github"}},
			"_meta":{%q:{"status":"active","isLatest":true}}}`, s[0], s[1], s[2], normalize.OfficialMeta))
	}
	page, err := normalize.ReadRegistryPage([]byte(`{"servers":[` + strings.Join(items, ",") + `],"metadata":{}}`))
	if err != nil || len(page.Servers) != len(servers) {
		t.Fatalf("registry page: %v, %d servers, problems %+v", err, len(page.Servers), page.Problems)
	}
	var out []normalize.CatalogResult
	for _, e := range page.Servers {
		rec, _, ok := normalize.RegistryRecord([]normalize.RegistryEntry{e}, normalize.RegistryOptions{Registry: registryURL})
		if !ok {
			t.Fatalf("registry record %s", e.Name)
		}
		out = append(out, normalize.CatalogResult{Catalog: rec.Source.Catalog, Via: normalize.ViaRegistry, Status: normalize.StatusOK,
			Records: []normalize.Record{rec}})
	}
	return out
}

// sameAgentSources are the results of the scenario, in one order.
func sameAgentSources(t *testing.T) []normalize.CatalogResult {
	return append([]normalize.CatalogResult{
		catalog(t, pubCatalog, pubManifest),
		cardResult(t, pubCard, pubCardBody),
		cardResult(t, pubOldCard, pubCardBody),
	}, registryResults(t,
		[3]string{"test.pub/weather", "https://PUB.test/mcp/weather", "https://github.com/pub/servers"},
		// Two servers of one monorepo: distinct servers, never merged.
		[3]string{"io.github.pub/notes", "https://notes.pub.test/mcp", "https://github.com/pub/mono"},
		[3]string{"io.github.pub/todo", "https://todo.pub.test/mcp", "https://github.com/pub/mono"},
	)...)
}

// TestOneAgentOneRecord hands ingest one agent reached several ways (the
// publisher's catalog, its bare card at both well-known URIs, a registry's
// copy of its MCP server, read through normalize's registry reader) in
// several orders: each agent is one document, the
// catalog's, whose lost claims list every other source; the index is the
// same whatever the order.
func TestOneAgentOneRecord(t *testing.T) {
	src := sameAgentSources(t)
	orders := [][]int{{0, 1, 2, 3, 4, 5}, {5, 4, 3, 2, 1, 0}, {1, 3, 0, 5, 2, 4}}
	var first map[string]string
	for _, order := range orders {
		e := newEnv(t, Config{})
		var rs []normalize.CatalogResult
		for _, i := range order {
			rs = append(rs, src[i]) // ingest applies them in this order
		}
		e.sync(rs...)
		if n := e.count(""); n != 4 {
			t.Errorf("order %v: %d documents, want 4 (helpdesk, weather, notes, todo)", order, n)
		}
		help := e.doc("urn:ai:pub.test:agent:helpdesk")
		if help == nil || help.SourceCatalog != pubCatalog {
			t.Fatalf("order %v: helpdesk held by %+v", order, help)
		}
		if got := claimsOf(help); got != pubCard+" (publisher's catalog); "+pubOldCard+" (publisher's catalog)" {
			t.Errorf("order %v: helpdesk lost claims %s", order, got)
		}
		weather := e.doc("urn:ai:pub.test:mcp:weather")
		if weather == nil || claimsOf(weather) != src[3].Catalog+" (verified publisher)" || weather.LostClaims[0].Identifier != "test.pub/weather" ||
			weather.LostClaims[0].Kind != normalize.SourceRegistry {
			t.Errorf("order %v: weather %+v", order, weather)
		}
		// The merged-away identifiers are the document's alias keys (the
		// patch of a losing claim and the takeover's write alike).
		if got, want := help.AliasKeys, sortedKeys(pubCard, pubOldCard); !slices.Equal(got, want) {
			t.Errorf("order %v: helpdesk alias keys %v, want %v", order, got, want)
		}
		if got, want := weather.AliasKeys, sortedKeys("test.pub/weather"); !slices.Equal(got, want) {
			t.Errorf("order %v: weather alias keys %v, want %v", order, got, want)
		}
		for _, gone := range []string{pubCard, pubOldCard, "test.pub/weather"} {
			if e.doc(gone) != nil {
				t.Errorf("order %v: %s has a document of its own: a duplicate", order, gone)
			}
		}
		snap := map[string]string{}
		for _, id := range []string{"urn:ai:pub.test:agent:helpdesk", "urn:ai:pub.test:mcp:weather", "io.github.pub/notes", "io.github.pub/todo"} {
			d := e.doc(id)
			if d == nil {
				t.Fatalf("order %v: no document for %s", order, id)
			}
			d.IndexedAt, d.IndexedAtTs, d.Source.FetchedAt = time.Time{}, 0, time.Time{}
			b, _ := json.Marshal(d)
			snap[id] = string(b)
		}
		if first == nil {
			first = snap
			continue
		}
		for id, want := range first {
			if snap[id] != want {
				t.Errorf("order %v: %s differs from the first order's:\n got %s\nwant %s", order, id, snap[id], want)
			}
		}
	}
}

// TestWithdrawnCatalogEntryFallsToItsCard: when the catalog stops listing
// the agent, its document goes, the card's catalog is to be fetched again,
// and the card then holds the agent under its own identifier.
func TestWithdrawnCatalogEntryFallsToItsCard(t *testing.T) {
	e := newEnv(t, Config{})
	card := cardResult(t, pubCard, pubCardBody)
	e.sync(catalog(t, pubCatalog, pubManifest), card)
	e.sync(catalog(t, pubCatalog, manifest(`{"identifier":"urn:ai:pub.test:agent:other","displayName":"Other","type":"application/a2a-agent-card+json","url":"https://pub.test/other.json"}`)))
	if ar := e.results.last(pubCatalog); !slices.Contains(ar.Refetch, pubCard) {
		t.Errorf("refetch %v, want the card", ar.Refetch)
	}
	if e.doc("urn:ai:pub.test:agent:helpdesk") != nil {
		t.Error("withdrawn entry still indexed")
	}
	e.sync(card)
	d := e.doc(pubCard)
	if d == nil || d.SourceCatalog != pubCard || len(d.LostClaims) != 0 {
		t.Errorf("card after the withdrawal: %+v", d)
	}
}

// sortedKeys are the DocIDs of identifiers, sorted.
func sortedKeys(identifiers ...string) []string {
	var out []string
	for _, id := range identifiers {
		out = append(out, normalize.DocID(id))
	}
	slices.Sort(out)
	return out
}

// claimsOf lists a document's lost claims as "catalog (reason)".
func claimsOf(d *normalize.Document) string {
	var out []string
	for _, c := range d.LostClaims {
		out = append(out, fmt.Sprintf("%s (%s)", c.Catalog, c.Reason))
	}
	return strings.Join(out, "; ")
}

// TestAliasKeysStampedAtStart: a merged document indexed before alias keys
// existed (its aliasKeys field absent) gets them when ingest starts on the
// index, so a lookup by the merged-away identifier finds it without a
// recrawl.
func TestAliasKeysStampedAtStart(t *testing.T) {
	e := newEnv(t, Config{})
	e.sync(sameAgentSources(t)...)
	id := normalize.DocID("urn:ai:pub.test:mcp:weather")
	var raw map[string]any
	if err := e.client.Index(e.index).GetDocumentWithContext(t.Context(), id, nil, &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw, normalize.FieldAliasKeys)
	task, err := e.client.Index(e.index).AddDocumentsWithContext(t.Context(), []map[string]any{raw}, nil) // replaces the document whole
	if err != nil {
		t.Fatal(err)
	}
	if err := meilitest.Wait(e.client, task.TaskUID); err != nil {
		t.Fatal(err)
	}
	if d := e.doc("urn:ai:pub.test:mcp:weather"); d == nil || len(d.AliasKeys) != 0 {
		t.Fatalf("the document still has alias keys, so the test proves nothing: %+v", d)
	}
	if err := e.ix.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.open(Config{})
	if got, want := e.doc("urn:ai:pub.test:mcp:weather").AliasKeys, sortedKeys("test.pub/weather"); !slices.Equal(got, want) {
		t.Errorf("alias keys after the restart %v, want %v", got, want)
	}
}
