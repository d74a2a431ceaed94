package search

import (
	"sync"

	"github.com/agentfinder/agentfinder/searchapi/hybrid"
)

// smallTalkVectors holds the vectors of score.SmallTalk, embedded with the
// first query vector (Server.queryVector) and kept.
type smallTalkVectors struct {
	mu   sync.Mutex
	vecs [][]float32
}

func (v *smallTalkVectors) missing() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.vecs == nil
}

func (v *smallTalkVectors) set(vecs [][]float32) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.vecs = vecs
}

// smallTalk is the request's highest cosine similarity with the small-talk
// phrases (score.Request.SmallTalk): 0 without a query vector or the
// phrases' vectors.
func (s *Engine) smallTalk(vec []float32) float64 {
	if vec == nil {
		return 0
	}
	s.talk.mu.Lock()
	vecs := s.talk.vecs
	s.talk.mu.Unlock()
	_, c := hybrid.BestMatch(vec, vecs)
	return c
}
