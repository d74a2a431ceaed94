// Package searchtest holds what the search side's tests share: the index
// settings ingest applies, read from where ingest reads them (normalize),
// so tests build their indexes as production does without importing
// ingest, and an MCP client session for the MCP door.
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
// normalize.SearchableFields without identifier and host.displayName. The
// fixture catalog's ranking assertions were written without those two: its
// URNs all name weather.example or acme.com, so with identifier searchable
// a request for "weather" matches every weather.example entry alike.
func Settings() *meilisearch.Settings {
	return &meilisearch.Settings{
		SearchableAttributes: slices.DeleteFunc(normalize.SearchableFields(), func(f string) bool {
			return f == normalize.FieldIdentifier || f == "host.displayName"
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
