package federation

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/agentfinder/agentfinder/crawler/netguard"
)

// rrfK is the reciprocal rank fusion constant (Cormack et al.): a hit at
// rank r in a source contributes 1/(rrfK+r).
const rrfK = 60

// maxCalls bounds the upstream calls of one search, following included.
const maxCalls = 32

// Federator answers searches in auto and referrals mode over the registry
// book. It is safe for concurrent use; Close releases idle connections.
type Federator struct {
	cfg    Config
	log    *slog.Logger
	book   *Book
	client *http.Client // every upstream: the network guard in the dialer

	viaName string // received-by in our Via element: host[:port] when Name is a URL

	mu     sync.Mutex
	states map[string]*upstreamState // by EndpointKey
}

var _ Searcher = (*Federator)(nil)

// New builds a Federator. Configured upstreams go into its book; an invalid
// one is an error. A nil logger discards.
func New(cfg Config, logger *slog.Logger) (*Federator, error) {
	cfg.setDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Name == "" {
		cfg.Name = "agentfinder-" + randomHex(6)
	}
	if len(cfg.TokenKey) == 0 {
		cfg.TokenKey = []byte(randomHex(32))
	}
	guard := netguard.New(netguard.Config{AllowPrivate: cfg.AllowPrivate, Allow: cfg.AllowCIDRs})
	f := &Federator{
		cfg:     cfg,
		log:     logger.With("component", "federation"),
		book:    NewBook(guard),
		client:  newHTTPClient(cfg, guard),
		states:  map[string]*upstreamState{},
		viaName: cfg.Name,
	}
	if u, err := url.Parse(cfg.Name); err == nil && u.Host != "" {
		f.viaName = strings.ToLower(u.Host)
	}
	for _, u := range cfg.Upstreams {
		if err := f.book.AddConfigured(u); err != nil {
			return nil, fmt.Errorf("configure upstream: %w", err)
		}
	}
	return f, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Book returns the registry book, for adding crawled and DNS-learned registries.
func (f *Federator) Book() *Book { return f.book }

// Name is this registry's name in Via headers: Config.Name, or its
// host[:port] when Config.Name is a URL (RFC 9110 received-by).
func (f *Federator) Name() string { return f.viaName }

// Close releases idle upstream connections.
func (f *Federator) Close() {
	f.client.CloseIdleConnections()
}

func (f *Federator) state(endpoint string) *upstreamState {
	k := EndpointKey(endpoint)
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.states[k]
	if !ok {
		if len(f.states) >= maxStates {
			f.evictLocked()
		}
		s = &upstreamState{}
		f.states[k] = s
	}
	return s
}

// maxStates bounds the upstreams remembered (breakers, shapes): registries
// named in answers could otherwise grow the map without end.
const maxStates = 4096

// evictLocked forgets upstreams that hold nothing worth remembering, or,
// when every one does, an arbitrary half.
func (f *Federator) evictLocked() {
	for k, s := range f.states {
		if s.breaker.idle() && s.getShape() == shapeV042 {
			delete(f.states, k)
		}
	}
	for k := range f.states {
		if len(f.states) < maxStates/2 {
			break
		}
		delete(f.states, k)
	}
}

// mayFederate reports whether auto mode may fan out to a learned registry.
func (f *Federator) mayFederate(r Registry) bool {
	if r.Trusted() {
		return true
	}
	if f.cfg.FederateLearned {
		return true
	}
	u, err := url.Parse(r.Endpoint)
	return err == nil && allowedHost(u.Host, f.cfg.FederateHosts)
}

// normQuery applies the page size bounds every registry accepts (1..100,
// default 10).
func normQuery(q Query) Query {
	switch {
	case q.PageSize <= 0:
		q.PageSize = 10
	case q.PageSize > 100:
		q.PageSize = 100
	}
	return q
}

// Search implements Searcher.
func (f *Federator) Search(ctx context.Context, mode Mode, q Query, pageToken string, via []string, local LocalSearch) (Response, error) {
	q = normQuery(q)
	st, err := decodeToken(f.cfg.TokenKey, pageToken, q)
	if err != nil {
		return Response{}, err
	}
	if mode == ModeAuto {
		return f.auto(ctx, q, st, pageToken != "", via, local)
	}
	var resp Response
	var next string
	if !st.Local.Done {
		var hits []Hit
		hits, next, err = local(ctx, q, st.Local.Token)
		if err != nil {
			return Response{}, fmt.Errorf("local search: %w", err)
		}
		for _, h := range hits {
			resp.Results = append(resp.Results, f.present(h))
		}
	}
	if next != "" {
		resp.PageToken = encodeToken(f.cfg.TokenKey, pageState{Query: queryHash(q), Local: sourceState{Token: next}})
	}
	if mode == ModeReferrals {
		resp.Referrals = f.referrals(f.book.Registries(), q.Text, ParseVia(via))
	}
	return resp, nil
}

// referrals ranks regs for the query, leaving out this registry and the
// registries the request came through.
func (f *Federator) referrals(regs []Registry, text string, via []string) []json.RawMessage {
	skip := map[string]bool{EndpointKey(f.cfg.Name): true, EndpointKey(f.viaName): true}
	for _, v := range via {
		skip[EndpointKey(v)] = true
	}
	var out []json.RawMessage
	for _, r := range Rank(regs, text) {
		k := EndpointKey(r.Endpoint)
		if skip[k] {
			continue
		}
		skip[k] = true
		out = append(out, r.Referral())
		if len(out) == f.cfg.MaxReferrals {
			break
		}
	}
	return out
}

// target is one upstream to call in one search.
type target struct {
	reg   Registry
	from  sourceState // where to continue (Token, Offset)
	depth int         // 1 for the book, +1 per registry followed
}

// callResult is what one upstream call produced.
type callResult struct {
	idx     int
	outcome Outcome
	ans     answer
	ok      bool
}

// source is one ranked list entering the fusion.
type source struct {
	from  sourceState
	hits  []Hit // after the continuation offset
	next  string
	order int
}

func (f *Federator) auto(ctx context.Context, q Query, st pageState, continuing bool, via []string, local LocalSearch) (Response, error) {
	viaIn := ParseVia(via)
	inVia := map[string]bool{}
	for _, v := range viaIn {
		inVia[EndpointKey(v)] = true
	}
	looped := InChain(viaIn, f.viaName, f.cfg.Name)
	// An upstream is in the chain when Via names its endpoint or its host.
	visited := func(endpoint string) bool {
		return inVia[EndpointKey(endpoint)] || inVia[strings.ToLower(hostOf(endpoint))]
	}
	hopsLeft := f.cfg.MaxHops - len(viaIn)
	viaOut := FormatVia(append(append([]string(nil), viaIn...), f.viaName))
	fed := string(ModeNone)
	if f.cfg.ForwardAuto && len(viaIn)+1 < f.cfg.MaxHops {
		fed = string(ModeAuto)
	}

	// Local search runs beside the fan-out; it is not bounded by the budget.
	type localResult struct {
		hits []Hit
		next string
		err  error
	}
	localCh := make(chan localResult, 1)
	if st.Local.Done {
		localCh <- localResult{}
	} else {
		go func() {
			hits, next, err := local(ctx, q, st.Local.Token)
			localCh <- localResult{hits, next, err}
		}()
	}

	var targets []target
	var learned []Registry // registries referred to rather than federated to
	for _, r := range f.book.Registries() {
		switch {
		case !f.mayFederate(r):
			learned = append(learned, r)
		case !continuing:
			targets = append(targets, target{reg: r, depth: 1})
		}
	}
	if continuing {
		for _, s := range st.Upstream {
			how := LearnedConfigured
			if s.Learned {
				how = LearnedUpstream
			}
			targets = append(targets, target{reg: Registry{Endpoint: s.Endpoint, Learned: how}, from: s, depth: max(s.Depth, 1)})
		}
	}

	bctx, cancel := context.WithTimeout(ctx, f.cfg.Budget)
	defer cancel()
	results := make(chan callResult, maxCalls)
	sem := make(chan struct{}, f.cfg.Concurrency)
	var g errgroup.Group
	outcomes := make([]Outcome, 0, len(targets))
	answers := map[int]callResult{}
	queried := map[string]bool{}
	inflight := 0
	launch := func(t target) {
		idx := len(outcomes)
		outcomes = append(outcomes, Outcome{Registry: t.reg.Endpoint})
		queried[EndpointKey(t.reg.Endpoint)] = true
		switch {
		case looped || visited(t.reg.Endpoint):
			outcomes[idx].Status, outcomes[idx].Error = StatusSkipped, "loop"
			return
		case t.depth > hopsLeft:
			outcomes[idx].Status, outcomes[idx].Error = StatusSkipped, "hop limit"
			return
		}
		bs := f.state(t.reg.Endpoint)
		if ok, why := bs.breaker.allow(f.cfg.Now()); !ok {
			outcomes[idx].Status, outcomes[idx].Error = StatusSkipped, why
			return
		}
		inflight++
		g.Go(func() error {
			results <- f.call(bctx, sem, idx, t, q, fed, viaOut)
			return nil
		})
	}
	for _, t := range targets {
		launch(t)
	}
	targetOf := append([]target(nil), targets...)

	receive := func(r callResult) {
		inflight--
		outcomes[r.idx] = r.outcome
		if !r.ok {
			return
		}
		answers[r.idx] = r
		t := targetOf[r.idx]
		for _, reg := range r.ans.registries {
			k := EndpointKey(reg.Endpoint)
			if queried[k] || visited(reg.Endpoint) || k == EndpointKey(f.cfg.Name) {
				continue
			}
			ep, err := f.book.learnedEndpoint(reg.Endpoint)
			follow := err == nil && !continuing && t.depth+1 <= hopsLeft && len(outcomes) < maxCalls && f.mayFederate(reg)
			if !follow {
				if err == nil {
					learned = append(learned, reg)
				}
				continue
			}
			reg.Endpoint = ep
			nt := target{reg: reg, depth: t.depth + 1}
			targetOf = append(targetOf, nt)
			launch(nt)
		}
	}
wait:
	for inflight > 0 {
		select {
		case r := <-results:
			receive(r)
		case <-bctx.Done():
			break wait
		}
	}
	cancel() // stragglers: their calls are bound to bctx and end now
	for inflight > 0 {
		r := <-results
		if r.ok {
			r.ok = false
			r.outcome.Status, r.outcome.Error, r.outcome.Results = StatusTimeout, "budget exhausted", 0
		}
		receive(r)
	}
	_ = g.Wait()

	lr := <-localCh
	if lr.err != nil {
		return Response{}, fmt.Errorf("local search: %w", lr.err)
	}

	// Sources in fusion order: local first, then upstreams in fan-out order.
	var sources []source
	sources = append(sources, source{from: st.Local, hits: skip(lr.hits, st.Local.Offset), next: lr.next, order: 0})
	if st.Local.Done {
		sources[0].from.Done = true
	}
	for idx := range outcomes {
		r, ok := answers[idx]
		if !ok {
			continue
		}
		t := targetOf[idx]
		from := t.from
		from.Endpoint, from.Learned, from.Depth = t.reg.Endpoint, !t.reg.Trusted(), t.depth
		sources = append(sources, source{from: from, hits: skip(r.ans.hits, t.from.Offset), next: r.ans.next, order: len(sources)})
	}

	seen := seenSet(st.Seen)
	page := fuse(sources, seen, q.PageSize)
	emitted := map[string]bool{}
	var keys []string
	resp := Response{Upstreams: outcomes}
	for _, h := range page {
		k := canonicalID(h.Identifier)
		emitted[k] = true
		keys = append(keys, seenKey(k))
		resp.Results = append(resp.Results, f.present(h))
	}

	// Continuation: every source where it stopped.
	next := pageState{Query: queryHash(q), Seen: appendSeen(st.Seen, keys)}
	more := false
	for i, s := range sources {
		ns := advance(s, emitted, seen)
		if i == 0 {
			next.Local = ns
		} else if !ns.Done {
			next.Upstream = append(next.Upstream, ns)
		}
		if !ns.Done {
			more = true
		}
	}
	if more {
		resp.PageToken = encodeToken(f.cfg.TokenKey, next)
	}
	var refs []Registry
	for _, r := range learned {
		if !queried[EndpointKey(r.Endpoint)] {
			refs = append(refs, r)
		}
	}
	resp.Referrals = f.referrals(refs, q.Text, viaIn)
	return resp, nil
}

// call performs one upstream search within ctx (the budget), speaking the
// shape the upstream accepts.
func (f *Federator) call(ctx context.Context, sem chan struct{}, idx int, t target, q Query, fed, via string) callResult {
	ep := t.reg.Endpoint
	res := callResult{idx: idx, outcome: Outcome{Registry: ep}}
	bs := f.state(ep)
	start := time.Now()
	select {
	case sem <- struct{}{}:
		defer func() { <-sem }()
	case <-ctx.Done():
		bs.breaker.release()
		res.outcome.Status, res.outcome.Error = StatusTimeout, "budget exhausted before the call"
		return res
	}
	client := f.client
	cctx, cancel := context.WithTimeout(ctx, f.cfg.UpstreamTimeout)
	defer cancel()
	sh := bs.getShape()
	body, err := post(cctx, client, ep, requestBody(q, fed, t.from.Token, sh), via)
	var se *statusError
	if sh == shapeV042 && errors.As(err, &se) && (se.code == http.StatusBadRequest || se.code == http.StatusUnprocessableEntity) {
		body, err = post(cctx, client, ep, requestBody(q, fed, t.from.Token, shapeARD), via)
		if err == nil {
			bs.setShape(shapeARD)
			sh = shapeARD
		}
	}
	now := f.cfg.Now()
	var ans answer
	if err == nil {
		ans, err = parseAnswer(body, ep, t.reg.Trusted(), now)
	}
	res.outcome.LatencyMS = time.Since(start).Milliseconds()
	if err != nil {
		res.outcome.Status, res.outcome.Error = StatusError, err.Error()
		if isTimeout(err) {
			res.outcome.Status, res.outcome.Error = StatusTimeout, "timeout"
		}
		if bs.breaker.done(false, now, f.cfg.BreakerFailures, f.cfg.BreakerCooldown) {
			f.log.Warn("upstream circuit opened", "registry", ep, "cooldown", f.cfg.BreakerCooldown, "err", err)
		}
		f.log.Debug("upstream failed", "registry", ep, "status", res.outcome.Status, "err", err, "ms", res.outcome.LatencyMS)
		return res
	}
	if bs.breaker.done(true, now, f.cfg.BreakerFailures, f.cfg.BreakerCooldown) {
		f.log.Info("upstream circuit closed", "registry", ep)
	}
	res.ok = true
	res.ans = ans
	res.outcome.Status, res.outcome.Results, res.outcome.Dropped = StatusOK, len(ans.hits), ans.dropped
	f.log.Debug("upstream answered", "registry", ep, "shape", sh.String(), "results", len(ans.hits),
		"dropped", ans.dropped, "registries", len(ans.registries), "ms", res.outcome.LatencyMS)
	return res
}

func skip(hits []Hit, n int) []Hit {
	if n >= len(hits) {
		return nil
	}
	return hits[max(n, 0):]
}

// fused is one identifier's entry in the fusion.
type fused struct {
	key      string
	hit      Hit
	rrf      float64
	bestRank int
	order    int // source order of the kept copy
}

// fuse merges the sources by reciprocal rank fusion (scores of different
// registries are not comparable, positions are), deduplicates by canonical
// identifier keeping the verified, then the local, then the earliest
// source's copy, leaves out identifiers already shown, and returns the
// first n.
func fuse(sources []source, seen map[string]bool, n int) []Hit {
	byKey := map[string]*fused{}
	var all []*fused
	for _, s := range sources {
		inSource := map[string]bool{}
		rank := 0
		for _, h := range s.hits {
			k := canonicalID(h.Identifier)
			if inSource[k] || seen[seenKey(k)] {
				continue
			}
			inSource[k] = true
			rank++
			fu, ok := byKey[k]
			if !ok {
				fu = &fused{key: k, hit: h, bestRank: rank, order: s.order}
				byKey[k] = fu
				all = append(all, fu)
			} else {
				if (h.Verified && !fu.hit.Verified) || (h.Verified == fu.hit.Verified && h.Local && !fu.hit.Local) {
					fu.hit, fu.order = h, s.order
				}
				fu.bestRank = min(fu.bestRank, rank)
			}
			fu.rrf += 1 / float64(rrfK+rank)
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		switch {
		case a.rrf != b.rrf:
			return a.rrf > b.rrf
		case a.hit.Local != b.hit.Local:
			return a.hit.Local
		case a.bestRank != b.bestRank:
			return a.bestRank < b.bestRank
		case a.order != b.order:
			return a.order < b.order
		}
		return a.key < b.key
	})
	if len(all) > n {
		all = all[:n]
	}
	out := make([]Hit, len(all))
	for i, fu := range all {
		out[i] = fu.hit
	}
	return out
}

// advance returns where source s continues after a page that showed the
// emitted identifiers: past the longest prefix of its hits already shown,
// or at its next page when all were.
func advance(s source, emitted, seen map[string]bool) sourceState {
	ns := s.from
	if ns.Done {
		return ns
	}
	c := 0
	for _, h := range s.hits {
		k := canonicalID(h.Identifier)
		if !emitted[k] && !seen[seenKey(k)] {
			break
		}
		c++
	}
	if c == len(s.hits) {
		ns.Token, ns.Offset, ns.Done = s.next, 0, s.next == ""
		return ns
	}
	ns.Offset += c
	return ns
}

// present returns h as shown to the client: the score clamped to an integer
// in 0..100, source set, and for upstream hits the provenance
// (originService, receivedAt; xu §10).
func (f *Federator) present(h Hit) Hit {
	e := make(map[string]json.RawMessage, len(h.Entry)+4)
	for k, v := range h.Entry {
		e[k] = v
	}
	h.Score = clampScore(h.Score)
	e["score"] = json.RawMessage(strconv.Itoa(int(h.Score)))
	if h.Local {
		if _, ok := e["source"]; !ok && h.Source != "" {
			e["source"] = mustJSON(h.Source)
		}
	} else {
		e["source"] = mustJSON(h.Source)
		e["originService"] = mustJSON(h.OriginService)
		e["receivedAt"] = mustJSON(h.ReceivedAt.UTC().Format(time.RFC3339Nano))
	}
	h.Entry = e
	return h
}

func clampScore(s float64) float64 {
	if math.IsNaN(s) || s < 0 {
		return 0
	}
	if s > 100 {
		return 100
	}
	return math.Round(s)
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
