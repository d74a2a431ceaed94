// Package searchtest holds what the search side's tests share (searchapi's
// own and the end-to-end tests in searchapi/e2e): the index settings
// ingest applies, read from where ingest reads them (normalize), so tests
// build their indexes as production does without importing ingest; the
// fixture catalogs' records, made by normalize alone, and an index of
// them; a client that checks every answer against openapi.json; and an
// MCP client session for the MCP door. It imports no searchapi package,
// so the tests of every one of them may use it.
package searchtest

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/meilisearch/meilisearch-go"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfinder/agentfinder/normalize"
)

// Settings are the index settings the search side's tests index with: the
// filterable and sortable attributes ingest applies (normalize's), and
// normalize.SearchableFields without identifier, host.displayName and the
// names no document holds (normalize.ReservedField). The fixture catalog's
// ranking assertions were written without those: its URNs all name
// weather.example or acme.com, so with identifier searchable a request for
// "weather" matches every weather.example entry alike, and three more
// searchable attributes move every keyword score a little (Meilisearch's
// attribute rule counts them), enough to pass a preferred tag's boost over
// a perfect match. Its indexes have no tools index (the engine then
// searches without tools): tests of the tool index index through ingest.
func Settings() *meilisearch.Settings {
	return &meilisearch.Settings{
		SearchableAttributes: slices.DeleteFunc(normalize.SearchableFields(), func(f string) bool {
			switch f {
			case normalize.FieldIdentifier, "host.displayName":
				return true
			}
			return normalize.ReservedField(f)
		}),
		FilterableAttributes: normalize.FilterableFields(),
		SortableAttributes:   normalize.SortableFields(),
	}
}

// MCPSession connects the official SDK's client to the MCP endpoint at
// url; the session closes when the test ends.
func MCPSession(t testing.TB, url string, hc *http.Client) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}
