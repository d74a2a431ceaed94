package e2e_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/searchapi/search"
)

// meiliRecorder is a search.Meili that passes every call on and, while
// recording, keeps the multi-search requests sent (the engine's searches
// and fetches all go through multi-search). Calls it cannot replay (an
// index's own search or documents read) are counted, so a benchmark
// replaying the record knows when it would miss some.
type meiliRecorder struct {
	search.Meili
	mu     sync.Mutex
	on     bool
	sent   []*meilisearch.MultiSearchRequest
	others atomic.Int64
}

// start begins a new record (one request's Meilisearch calls).
func (r *meiliRecorder) start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on, r.sent = true, nil
}

// stop ends the record and returns the multi-search requests sent since
// start, each a deep copy (JSON round trip) the caller may send again.
func (r *meiliRecorder) stop() ([]*meilisearch.MultiSearchRequest, error) {
	r.mu.Lock()
	sent := r.sent
	r.on, r.sent = false, nil
	r.mu.Unlock()
	out := make([]*meilisearch.MultiSearchRequest, len(sent))
	for i, q := range sent {
		raw, err := json.Marshal(q)
		if err != nil {
			return nil, err
		}
		out[i] = new(meilisearch.MultiSearchRequest)
		if err := json.Unmarshal(raw, out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MultiSearchWithContext records q while recording and sends it.
func (r *meiliRecorder) MultiSearchWithContext(ctx context.Context, q *meilisearch.MultiSearchRequest) (*meilisearch.MultiSearchResponse, error) {
	r.mu.Lock()
	if r.on {
		r.sent = append(r.sent, q)
	}
	r.mu.Unlock()
	return r.Meili.MultiSearchWithContext(ctx, q)
}

// Index returns the index, counting its searches and document reads.
func (r *meiliRecorder) Index(uid string) meilisearch.IndexManager {
	return countedIndex{IndexManager: r.Meili.Index(uid), n: &r.others}
}

// countedIndex counts the index calls the engine makes outside
// multi-search.
type countedIndex struct {
	meilisearch.IndexManager
	n *atomic.Int64
}

func (c countedIndex) SearchRawWithContext(ctx context.Context, q string, req *meilisearch.SearchRequest) (*json.RawMessage, error) {
	c.n.Add(1)
	return c.IndexManager.SearchRawWithContext(ctx, q, req)
}

func (c countedIndex) GetDocumentsWithContext(ctx context.Context, p *meilisearch.DocumentsQuery, resp *meilisearch.DocumentsResult) error {
	c.n.Add(1)
	return c.IndexManager.GetDocumentsWithContext(ctx, p, resp)
}
