package search

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/hybrid"
)

// The tools index (normalize.ToolsIndex) beside the engine's index holds
// the words of the records' tools, searched by each search's tools
// sub-queries (searchapi/hybrid: a request of their own, sent at the same
// time as the records'), which also read back the tool words and the
// tools' word sets of the servers it finds: the words count towards how
// much of the request a server covers, and the word sets tell which tools
// match it; the tool lists of the page's results with a matching tool are
// read after the ranking, to name them (matchTools). ingest creates
// it; an index written before it existed, or by hand without it, has none
// until ingest runs on it, and the engine then searches without tools
// instead of failing; a tools search that fails costs the search its
// tools alone (toolsFailed).

// toolsRecheck is how long the engine trusts that the tools index is
// missing before it looks again: short, since ingest creates it as the
// server starts, and a look is one small request.
const toolsRecheck = time.Second

// toolsIndex knows whether the tools index exists.
type toolsIndex struct {
	uid    string
	exists atomic.Bool
	mu     sync.Mutex
	looked time.Time // when it was last found missing
}

// toolIndex returns the tools index's uid when it exists, else "". Only
// Meilisearch's word that it is missing makes the engine take it for
// missing (for toolsRecheck): a look that fails otherwise (the caller
// left, Meilisearch busy) returns the uid, and the read of it that fails
// says so, instead of every caller's records showing no tools meanwhile.
func (s *Engine) toolIndex(ctx context.Context) string {
	t := &s.tools
	if t.exists.Load() {
		return t.uid
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exists.Load() {
		return t.uid
	}
	if !t.looked.IsZero() && s.now().Sub(t.looked) < toolsRecheck {
		return ""
	}
	if _, err := s.cfg.Meili.Index(t.uid).FetchInfoWithContext(ctx); err != nil {
		if !indexNotFound(err) {
			return t.uid
		}
		t.looked = s.now()
		return ""
	}
	t.exists.Store(true)
	return t.uid
}

// toolsFailed handles the failure of reqs' tools sub-queries (err, nil
// when they did not fail; hybrid.Result.ToolErr), which left the search
// the records' answers alone: the tools index gone (deleted since the
// engine found it) is forgotten and taken off reqs, for the rest of the
// search; any other failure is logged.
func (s *Engine) toolsFailed(ctx context.Context, err error, reqs ...*hybrid.Request) {
	if err == nil || ctx.Err() != nil {
		return
	}
	if !indexNotFound(err) {
		s.log.Warn("the tools search failed; answering without tools", "correlationId", s.correlationID(ctx), "err", err)
		return
	}
	// The tools sub-queries name the tools index alone.
	s.toolsGone()
	for _, r := range reqs {
		r.ToolIndex = ""
	}
}

// toolsGone forgets the tools index, found deleted since the engine found
// it, until toolsRecheck has passed.
func (s *Engine) toolsGone() {
	t := &s.tools
	t.mu.Lock()
	defer t.mu.Unlock()
	t.exists.Store(false)
	t.looked = s.now()
	s.log.Warn("the tools index is gone; searching without tools", "index", t.uid)
}

// newToolsIndex is the tools index beside index.
func newToolsIndex(index string) toolsIndex { return toolsIndex{uid: normalize.ToolsIndex(index)} }

// withTools returns tools with more's entries added (tools may be nil).
func withTools(tools, more map[string]*hybrid.ServerTools) map[string]*hybrid.ServerTools {
	if len(more) == 0 {
		return tools
	}
	if tools == nil {
		tools = make(map[string]*hybrid.ServerTools, len(more))
	}
	maps.Copy(tools, more)
	return tools
}
