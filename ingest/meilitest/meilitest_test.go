package meilitest

import (
	"testing"

	"github.com/meilisearch/meilisearch-go"
)

func TestIndexAddAndFind(t *testing.T) {
	s, name := Index(t, "meilitest")
	idx := s.Client.Index(name)
	task, err := idx.AddDocuments([]map[string]any{
		{"id": "a1", "displayName": "Weather Data Node", "description": "live telemetry"},
		{"id": "a2", "displayName": "Finance Trading Agent", "description": "markets"},
	}, nil)
	if err != nil {
		t.Fatalf("add documents: %v", err)
	}
	if err := Wait(s.Client, task.TaskUID); err != nil {
		t.Fatalf("add documents task: %v", err)
	}
	res, err := idx.Search("weather", &meilisearch.SearchRequest{})
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	if len(res.Hits) != 1 {
		t.Fatalf("search weather: got %d hits, want 1", len(res.Hits))
	}
	var got struct {
		ID string `json:"id"`
	}
	if err := res.Hits[0].DecodeInto(&got); err != nil {
		t.Fatalf("decode hit: %v", err)
	}
	if got.ID != "a1" {
		t.Fatalf("search weather: got id %q, want a1", got.ID)
	}
}
