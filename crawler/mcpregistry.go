package crawler

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
)

// An MCP registry seed is walked through the registry's server list API
// (GET /v0.1/servers, or /v0/servers where that is all there is): page by
// page, one request at a time, following the opaque metadata.nextCursor.
// The first walk reads every server; later walks ask only for what changed
// since the last complete walk (updated_since, the newest updatedAt that
// walk saw). Each server name becomes one record, handed to the sink as
// the one record of its own source (normalize.RegistryServerURL), so a
// server the registry marks deleted is removed by an empty result for that
// source alone, and a walk that fails half way removes nothing: it keeps
// its cursor and the next run goes on from there.

// Reasons a registry walk stops short.
const (
	ReasonCursorLoop = "cursor_loop" // a nextCursor came back a second time
	ReasonNotAList   = "not_a_list"  // a page was not a server list
	ReasonCapped     = "capped"      // MaxRegistryPages or MaxRegistryServers reached; the next run resumes
)

// MCPRegistryState is what the crawler keeps of one MCP registry between
// walks; the caller persists it (MCPRegistryStates, SetMCPRegistryStates).
type MCPRegistryState struct {
	// Path is the list endpoint that answered ("/v0.1/servers" or
	// "/v0/servers").
	Path string `json:"path,omitempty"`
	// Since is the high-water mark of the last complete walk: the newest
	// updatedAt it saw. Zero until a walk completed: the next one is full.
	Since time.Time `json:"since,omitzero"`
	// Cursor, when set, is where an unfinished walk stopped; WalkSince is
	// the updated_since that walk asked with and WalkStart when it started.
	// The next run resumes there.
	Cursor    string    `json:"cursor,omitempty"`
	WalkSince time.Time `json:"walkSince,omitzero"`
	WalkStart time.Time `json:"walkStart,omitzero"`
	// Seen is the newest updatedAt an unfinished walk saw so far.
	Seen time.Time `json:"seen,omitzero"`
	// FullAt is when the last full walk that completed started (the
	// crawler's clock); one older than Config.RegistryFullEvery makes the
	// next walk a full one.
	FullAt time.Time `json:"fullAt,omitzero"`
	// Groups is the visibility the last walk handed records on with; a
	// change makes the next walk a full one.
	Groups []string `json:"groups,omitempty"`
}

// Flusher is an optional interface of a Sink: Flush returns once every
// result handed to Put before it is durably applied, or with the error
// that kept one from it. A registry walk's high-water mark advances only
// after a Flush succeeded; a Sink without it is trusted at once.
type Flusher interface {
	Flush(ctx context.Context) error
}

// MCPRegistryStates returns a copy of every MCP registry's walk state, by
// base URL.
func (c *Crawler) MCPRegistryStates() map[string]MCPRegistryState {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	out := make(map[string]MCPRegistryState, len(c.registries))
	for k, v := range c.registries {
		out[k] = v
	}
	return out
}

// SetMCPRegistryStates restores walk states saved from
// MCPRegistryStates (after a restart).
func (c *Crawler) SetMCPRegistryStates(m map[string]MCPRegistryState) {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	for k, v := range m {
		c.registries[k] = v
	}
}

func (c *Crawler) registryState(base string) MCPRegistryState {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	return c.registries[base]
}

func (c *Crawler) setRegistryState(base string, st MCPRegistryState) {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	c.registries[base] = st
}

// registryTurn waits until no other walk of base runs (one request at a
// time per registry, across concurrent crawls) and returns its release.
func (c *Crawler) registryTurn(ctx context.Context, base string) (func(), error) {
	c.regMu.Lock()
	turn := c.regTurns[base]
	if turn == nil {
		turn = make(chan struct{}, 1)
		c.regTurns[base] = turn
	}
	c.regMu.Unlock()
	select {
	case turn <- struct{}{}:
		return func() { <-turn }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// walk is one walk of one MCP registry.
type walk struct {
	s        *session
	t        task
	base     string
	st       MCPRegistryState
	since    time.Time // updated_since of this walk; zero for a full walk
	started  time.Time // when the walk (or the walk it resumes) started
	cursor   string
	seen     time.Time // newest updatedAt seen
	cursors  map[string]bool
	versions map[string][]normalize.RegistryEntry // by server name, this walk's
	pages    int
	read     int // server versions read
	handed   int // records handed on
	deleted  int
	problems []normalize.Problem
}

// walkRegistry walks the MCP registry of t (its base URL) and reports it
// as one catalog of the crawl.
func (s *session) walkRegistry(ctx context.Context, t task) {
	release, err := s.c.registryTurn(ctx, t.url)
	if err != nil {
		return
	}
	defer release()
	w := s.newWalk(t)
	reason, msg := w.run(ctx)
	if ctx.Err() != nil && reason != "" {
		reason, msg = ReasonCanceled, ctx.Err().Error()
	}
	w.finish(ctx, reason)
	s.reportWalk(w, reason, msg)
}

func (s *session) newWalk(t task) *walk {
	st := s.c.registryState(t.url)
	groups := s.groups[t.seed]
	if !slices.Equal(st.Groups, groups) {
		st = MCPRegistryState{Path: st.Path, Groups: groups} // other readers: a full walk
	}
	w := &walk{s: s, t: t, base: t.url, st: st, since: st.Since, seen: st.Since, cursors: map[string]bool{},
		versions: map[string][]normalize.RegistryEntry{}, started: s.c.cfg.Now()}
	if w.started.Sub(st.FullAt) >= s.c.cfg.RegistryFullEvery {
		w.since = time.Time{} // time for a full walk: every record handed on again
	}
	if st.Cursor != "" {
		w.cursor, w.since, w.seen, w.started = st.Cursor, st.WalkSince, laterOf(st.Seen, st.WalkSince), st.WalkStart
	}
	return w
}

// run fetches pages until the list ends, a cap is reached or something
// fails; it returns the reason it stopped short ("" when the list ended).
func (w *walk) run(ctx context.Context) (reason, msg string) {
	cfg := w.s.c.cfg
	for {
		if w.pages >= cfg.MaxRegistryPages || w.read >= cfg.MaxRegistryServers {
			return ReasonCapped, fmt.Sprintf("stopped after %d pages and %d servers; the next run resumes", w.pages, w.read)
		}
		page, reason, msg := w.fetch(ctx)
		if reason != "" {
			return reason, msg
		}
		w.pages++
		w.take(ctx, page)
		if page.NextCursor == "" {
			return "", ""
		}
		if w.cursors[page.NextCursor] || page.NextCursor == w.cursor {
			return ReasonCursorLoop, fmt.Sprintf("cursor %q came back after %d pages", page.NextCursor, w.pages)
		}
		w.cursors[page.NextCursor] = true
		w.cursor = page.NextCursor
	}
}

// fetch gets and reads the next page, falling back from /v0.1/servers to
// /v0/servers when the registry has no v0.1 list.
func (w *walk) fetch(ctx context.Context) (normalize.RegistryPage, string, string) {
	paths := []string{"/v0.1/servers", "/v0/servers"}
	if w.st.Path != "" {
		paths = []string{w.st.Path}
	}
	for i, p := range paths {
		res, err := w.s.get(ctx, w.pageURL(p), kindRegistry, nil)
		switch {
		case err != nil:
			return normalize.RegistryPage{}, Reason(err), err.Error()
		case (res.Status == http.StatusNotFound || res.Status == http.StatusMethodNotAllowed) && i+1 < len(paths) && w.pages == 0:
			continue
		case res.Status < 200 || res.Status > 299:
			return normalize.RegistryPage{}, ReasonHTTPStatus, fmt.Sprintf("HTTP %d from %s", res.Status, res.URL)
		}
		page, err := normalize.ReadRegistryPage(res.Body)
		if err != nil {
			return page, ReasonNotAList, err.Error()
		}
		w.st.Path = p
		return page, "", ""
	}
	return normalize.RegistryPage{}, ReasonHTTPStatus, "no server list at /v0.1/servers or /v0/servers"
}

// pageURL is the list request for the walk's next page.
func (w *walk) pageURL(path string) string {
	q := url.Values{}
	q.Set("limit", strconv.Itoa(w.s.c.cfg.RegistryPageSize))
	if w.cursor != "" {
		q.Set("cursor", w.cursor)
	}
	if !w.since.IsZero() {
		q.Set("updated_since", w.since.Format(time.RFC3339Nano))
	}
	return w.base + path + "?" + q.Encode()
}

// take hands on the record of every server name the page lists, built
// from all versions of it this walk has seen.
func (w *walk) take(ctx context.Context, page normalize.RegistryPage) {
	w.problems = appendCapped(w.problems, page.Problems)
	var names []string
	for _, e := range page.Servers {
		w.read++
		if e.UpdatedAt.After(w.seen) {
			w.seen = e.UpdatedAt
		}
		if !slices.Contains(names, e.Name) {
			names = append(names, e.Name)
		}
		w.versions[e.Name] = append(w.versions[e.Name], e)
	}
	if !w.since.IsZero() {
		for _, name := range names {
			w.allVersions(ctx, name)
		}
	}
	// The page's results go to the sink together (BatchSink), so ingest
	// writes them (and embeds their texts) with the pages queued beside
	// them, as one batch.
	results := make([]normalize.CatalogResult, 0, len(names))
	for _, name := range names {
		results = append(results, w.result(name))
	}
	w.s.handAll(ctx, results)
}

// allVersions replaces, in an incremental walk, the versions of name the
// changed pages listed with every version the registry holds
// ({path}/{name}/versions), so the record still lists them all and shows
// the right latest one. When that list cannot be had (a server entirely
// deleted answers 404), the pages' versions stand.
func (w *walk) allVersions(ctx context.Context, name string) {
	u := w.base + w.st.Path + "/" + url.PathEscape(name) + "/versions"
	res, err := w.s.get(ctx, u, kindRegistry, nil)
	if err != nil || res.Status != http.StatusOK {
		return
	}
	page, err := normalize.ReadRegistryPage(res.Body)
	if err != nil {
		return
	}
	all := slices.DeleteFunc(page.Servers, func(e normalize.RegistryEntry) bool { return e.Name != name })
	if len(all) == 0 {
		return
	}
	for _, e := range w.versions[name] {
		if !slices.ContainsFunc(all, func(a normalize.RegistryEntry) bool { return a.Version == e.Version }) {
			all = append(all, e) // a deleted version the list no longer shows
		}
	}
	w.versions[name] = all
}

// result is the sink's result for one server name: its record, or an
// empty result that removes it when every version is deleted.
func (w *walk) result(name string) normalize.CatalogResult {
	s := w.s
	now := s.c.cfg.Now()
	rec, probs, ok := normalize.RegistryRecord(w.versions[name], normalize.RegistryOptions{Registry: w.base, Now: now})
	cr := normalize.CatalogResult{Catalog: normalize.RegistryServerURL(w.base, name), Via: normalize.ViaRegistry,
		Path: []string{w.base}, Status: normalize.StatusOK, FetchedAt: now, Problems: probs}
	if ok {
		cr.Records = []normalize.Record{rec}
		w.handed++
	} else {
		w.deleted++
	}
	s.markVisibility(&cr, w.t)
	s.c.metrics.catalog(&cr)
	return cr
}

// finish settles the walk's state: a walk that ended keeps its
// high-water mark once the sink holds what it was handed; one that
// stopped short keeps its cursor, to resume.
func (w *walk) finish(ctx context.Context, reason string) {
	st := w.st
	if f, ok := w.s.c.sink.(Flusher); ok && w.s.c.sink != nil && ctx.Err() == nil {
		if err := f.Flush(ctx); err != nil {
			w.s.c.log.Warn("registry walk: sink flush failed; the walk's state is kept as it was", "registry", w.base, "err", err)
			return
		}
	}
	switch {
	case ctx.Err() != nil && reason != "":
		return // cancelled: the next run starts where the last state says
	case reason == "":
		if w.since.IsZero() {
			st.FullAt = w.started
		}
		st.Since, st.Cursor, st.WalkSince, st.Seen, st.WalkStart = w.seen, "", time.Time{}, time.Time{}, time.Time{}
		if st.Since.IsZero() {
			st.Since = w.s.c.cfg.Now().UTC() // a registry that gives no times: changes since now
		}
	default:
		st.Cursor, st.WalkSince, st.Seen, st.WalkStart = w.cursor, w.since, w.seen, w.started
		if reason == ReasonCursorLoop {
			st.Cursor = "" // resuming at a looping cursor would loop again
		}
	}
	w.s.c.setRegistryState(w.base, st)
}

// reportWalk adds the walk to the crawl report as one catalog.
func (s *session) reportWalk(w *walk, reason, msg string) {
	status := normalize.StatusOK
	if reason != "" {
		status = normalize.StatusFailed
		s.c.log.Info("registry walk stopped short", "registry", w.base, "reason", reason, "err", msg, "pages", w.pages, "servers", w.read)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.report.Catalogs = append(s.report.Catalogs, CatalogReport{URL: w.base, Via: normalize.ViaRegistry, Status: status,
		Reason: reason, Error: msg, Records: w.handed, Problems: nonNil(w.problems)})
}

// hand gives one result to the sink, counting a failure.
func (s *session) hand(ctx context.Context, cr normalize.CatalogResult) {
	if s.c.sink == nil {
		return
	}
	cr.Urgent = s.opts.Urgent
	if err := s.c.sink.Put(ctx, cr); err != nil {
		s.sinkFailed(err, cr.Catalog, 1)
	}
}

// handAll gives results to the sink together when it is a BatchSink, else
// one by one, counting failures.
func (s *session) handAll(ctx context.Context, results []normalize.CatalogResult) {
	bs, ok := s.c.sink.(BatchSink)
	if !ok || len(results) == 0 {
		for _, cr := range results {
			s.hand(ctx, cr)
		}
		return
	}
	for i := range results {
		results[i].Urgent = s.opts.Urgent
	}
	if err := bs.PutAll(ctx, results); err != nil {
		s.sinkFailed(err, results[0].Catalog, len(results))
	}
}

// sinkFailed counts n results the sink refused with err (the first of them
// from url).
func (s *session) sinkFailed(err error, url string, n int) {
	for range n {
		s.c.metrics.sinkError()
	}
	s.c.log.Error("sink put", "url", url, "results", n, "err", err)
	s.mu.Lock()
	s.report.Totals.SinkErrors += n
	if s.sinkErr == nil {
		s.sinkErr = err
	}
	s.mu.Unlock()
}

// maxWalkProblems bounds the problems one walk reports.
const maxWalkProblems = 100

func appendCapped(list, more []normalize.Problem) []normalize.Problem {
	for _, p := range more {
		if len(list) >= maxWalkProblems {
			break
		}
		list = append(list, p)
	}
	return list
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
