package ingest

import (
	"context"
	"errors"
	"net/http"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/ingest/meili"
)

// vectorStore is the Meilisearch vector store an index with an embedder
// uses: "experimental", Meilisearch 1.21's HNSW store (hannoy), instead of
// the default ("stable", arroy's random-projection trees). Asked for the 50
// nearest documents as the semantic sub-query asks, arroy returned 0.88 of
// a request's true 10 nearest documents on the relevance set with its
// distractors (800 records) and 0.70 on a 3,000-record index, hannoy all
// of them, at the same latency; arroy needed a list of 1,000 (a scan,
// 20 to 30 times slower) for that (docs/MEASUREMENTS.md, "the vector
// store"). Later Meilisearch releases make hannoy the default.
const vectorStore = "experimental"

// rawClient is the part of meili.Client that sends requests meilisearch-go
// has no method for; a client without it leaves the vector store as it is.
// A cluster's meili.Client sends them like its other requests: the reads
// to a replica, the writes (the feature and the setting) to the index
// write log, which every replica applies in order, so each replica, one
// that joins later too, turns the feature on before it meets the setting.
type rawClient interface {
	Do(ctx context.Context, method, path string, body, out any) error
}

// featureVectorStore is the experimental feature that lets an index
// choose its vector store. It only gates changing the setting: an index
// keeps its store when the feature is off again.
const featureVectorStore = "vectorStoreSetting"

// setVectorStore asks for index's vector store to be want unless it is
// already, turning on the experimental feature that allows it first, and
// returns the uid of the settings task it enqueued (0: none). withEmbedder
// says whether the index has an embedder that stays: Meilisearch 1.21
// fails to move an embedder's store that holds no vectors, and every later
// write of vectors to that index then fails too, so such an index keeps
// its store (a warning says so); with no embedder, or one holding vectors,
// the move is safe (ingest's tests do both).
//
// Without an embedder it waits for the task (there is nothing to move).
// With one it does not: Meilisearch moves the vectors in that task, which
// takes a while on a large index (searches keep using the old store
// meanwhile, and later writes queue behind it); a failed move leaves the
// old store, which the next start asks to change again. A Meilisearch
// without the feature, a client that cannot ask, or a change that fails
// (see storeKept) keeps the index's store, which is no error.
func (s *store) setVectorStore(ctx context.Context, index, want string, withEmbedder bool) (int64, error) {
	rc, ok := s.client.(rawClient)
	if !ok {
		return 0, nil
	}
	if on, err := s.enableFeature(ctx, rc, featureVectorStore); err != nil || !on {
		return 0, err
	}
	var cur *string
	err := s.retry(ctx, "get vector store of "+index, func(ctx context.Context) error {
		return rc.Do(ctx, http.MethodGet, "/indexes/"+index+"/settings/vector-store", nil, &cur)
	})
	if err != nil || (cur != nil && *cur == want) {
		return 0, err
	}
	if withEmbedder {
		empty, err := s.noEmbeddings(ctx, index)
		if err != nil {
			return 0, err
		}
		if empty {
			s.logger.Warn("the index's embedder holds no vectors, which Meilisearch 1.21 cannot move to another vector store: it keeps its store", "index", index, "store", want)
			return 0, nil
		}
	}
	t := &task{what: "set vector store of " + index, send: func(ctx context.Context) (*meilisearch.TaskInfo, error) {
		var info meilisearch.TaskInfo
		err := rc.Do(ctx, http.MethodPatch, "/indexes/"+index+"/settings", map[string]string{"vectorStore": want}, &info)
		return &info, err
	}}
	if err := s.enqueue(ctx, t); err != nil {
		return 0, err
	}
	if !withEmbedder {
		// No vectors to move: quick, and a start right after sees it done.
		if err := s.finish(ctx, t); err != nil {
			return 0, s.storeKept(index, want, err)
		}
	}
	return t.uid, nil
}

// noEmbeddings reports whether index holds no vectors.
func (s *store) noEmbeddings(ctx context.Context, index string) (bool, error) {
	var st *meilisearch.StatsIndex
	err := s.retry(ctx, "get stats of "+index, func(ctx context.Context) error {
		var err error
		st, err = s.client.Index(index).GetStatsWithContext(ctx, nil)
		return err
	})
	if err != nil {
		return false, err
	}
	return st.NumberOfEmbeddings == 0, nil
}

// storeKept turns the failed task of a change of index's vector store into
// a warning: the index keeps its store, as when the feature cannot be
// turned on, and the next start asks again. In a cluster the feature's
// change goes through the write log, so a replica that refuses it (an API
// key that may read the features but not change them) shows only here.
func (s *store) storeKept(index, want string, err error) error {
	var te *TaskError
	if !errors.As(err, &te) {
		return err
	}
	s.logger.Warn("the vector store change failed; the index keeps its store", "index", index, "store", want, "err", err)
	return nil
}

// enableFeature turns Meilisearch's experimental feature name on and
// reports whether the server has it. It is left on: it only allows a
// setting, and other writers of the same server may rely on it.
func (s *store) enableFeature(ctx context.Context, rc rawClient, name string) (bool, error) {
	var feats map[string]any
	err := s.retry(ctx, "get experimental features", func(ctx context.Context) error {
		return rc.Do(ctx, http.MethodGet, "/experimental-features", nil, &feats)
	})
	if err != nil {
		return s.featureRefused(name, err)
	}
	on, known := feats[name].(bool)
	if !known || on {
		return on, nil
	}
	err = s.retry(ctx, "enable experimental feature "+name, func(ctx context.Context) error {
		return rc.Do(ctx, http.MethodPatch, "/experimental-features", map[string]bool{name: true}, nil)
	})
	if err != nil {
		return s.featureRefused(name, err)
	}
	return true, nil
}

// featureRefused reads an error of reading or changing the experimental
// features: Meilisearch refusing (an API key that may not, for one) keeps
// the index's vector store and is logged; anything else is returned.
func (s *store) featureRefused(name string, err error) (bool, error) {
	var se *meili.StatusError
	if errors.As(err, &se) && se.Status < 500 {
		s.logger.Warn("cannot enable a Meilisearch experimental feature; the index keeps its vector store", "feature", name, "err", err)
		return false, nil
	}
	return false, err
}
