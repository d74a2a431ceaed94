package federation

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"
)

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

// localResult is what the local search of an auto search returned.
type localResult struct {
	hits []Hit
	next string
	err  error
}

// auto answers a search in auto mode: the local search runs beside a
// fan-out to the upstreams (followed to the registries they name while hops
// and calls allow) bounded by the budget; then the local and upstream lists
// are fused into one page, with a token to continue each where it stopped,
// and the registries not queried become referrals.
func (f *Federator) auto(ctx context.Context, q Query, st pageState, continuing bool, via []string, local LocalSearch) (Response, error) {
	viaIn := ParseVia(via)
	localCh := make(chan localResult, 1)
	if st.Local.Done {
		localCh <- localResult{}
	} else {
		// Local search is not bounded by the budget.
		go func() {
			hits, next, err := local(ctx, q, st.Local.Token)
			localCh <- localResult{hits, next, err}
		}()
	}

	bctx, cancel := context.WithTimeout(ctx, f.cfg.Budget)
	defer cancel()
	fo := f.newFanout(bctx, q, continuing, viaIn)
	for _, t := range f.targets(st, continuing, fo) {
		fo.launch(t)
	}
	fo.collect(cancel)

	lr := <-localCh
	if lr.err != nil {
		return Response{}, fmt.Errorf("local search: %w", lr.err)
	}
	resp := f.page(q, st, fo.sources(st.Local, lr))
	resp.Upstreams = fo.outcomes
	resp.Referrals = f.referrals(fo.unqueried(), q.Text, viaIn)
	return resp, nil
}

// fanout is the upstream side of one auto search: the calls it launched,
// their answers and the registries it learned of on the way.
type fanout struct {
	f          *Federator
	ctx        context.Context // the budget
	q          Query
	continuing bool
	inVia      map[string]bool // EndpointKey and host of each Via name
	looped     bool            // this registry is in the chain already
	hopsLeft   int
	fed        string // the federation mode upstreams are asked for
	viaOut     string // the Via header upstreams get

	results  chan callResult
	sem      chan struct{}
	g        errgroup.Group
	outcomes []Outcome
	targetOf []target // by outcome index
	answers  map[int]callResult
	queried  map[string]bool // by EndpointKey
	learned  []Registry      // registries referred to rather than federated to
	inflight int
}

func (f *Federator) newFanout(ctx context.Context, q Query, continuing bool, viaIn []string) *fanout {
	fo := &fanout{
		f: f, ctx: ctx, q: q, continuing: continuing,
		inVia:    map[string]bool{},
		looped:   InChain(viaIn, f.viaName, f.cfg.Name),
		hopsLeft: f.cfg.MaxHops - len(viaIn),
		fed:      string(ModeNone),
		viaOut:   FormatVia(append(append([]string(nil), viaIn...), f.viaName)),
		results:  make(chan callResult, maxCalls),
		sem:      make(chan struct{}, f.cfg.Concurrency),
		answers:  map[int]callResult{},
		queried:  map[string]bool{},
	}
	for _, v := range viaIn {
		fo.inVia[EndpointKey(v)] = true
	}
	if f.cfg.ForwardAuto && len(viaIn)+1 < f.cfg.MaxHops {
		fo.fed = string(ModeAuto)
	}
	return fo
}

// targets returns the upstreams a search starts with: the book's federated
// registries on a first page, where the token says on a later one. The
// book's registries that are only referred to go to fo.learned.
func (f *Federator) targets(st pageState, continuing bool, fo *fanout) []target {
	var targets []target
	for _, r := range f.book.Registries() {
		switch {
		case !f.mayFederate(r):
			fo.learned = append(fo.learned, r)
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
	return targets
}

// visited reports whether an upstream is in the chain: Via names its
// endpoint or its host.
func (fo *fanout) visited(endpoint string) bool {
	return fo.inVia[EndpointKey(endpoint)] || fo.inVia[strings.ToLower(hostOf(endpoint))]
}

// launch records t's outcome slot and calls it, unless it loops, is past
// the hop limit or its breaker is open.
func (fo *fanout) launch(t target) {
	idx := len(fo.outcomes)
	fo.outcomes = append(fo.outcomes, Outcome{Registry: t.reg.Endpoint})
	fo.targetOf = append(fo.targetOf, t)
	fo.queried[EndpointKey(t.reg.Endpoint)] = true
	switch {
	case fo.looped || fo.visited(t.reg.Endpoint):
		fo.outcomes[idx].Status, fo.outcomes[idx].Error = StatusSkipped, "loop"
		return
	case t.depth > fo.hopsLeft:
		fo.outcomes[idx].Status, fo.outcomes[idx].Error = StatusSkipped, "hop limit"
		return
	}
	bs := fo.f.state(t.reg.Endpoint)
	if ok, why := bs.breaker.allow(fo.f.cfg.Now()); !ok {
		fo.outcomes[idx].Status, fo.outcomes[idx].Error = StatusSkipped, why
		return
	}
	fo.inflight++
	fo.g.Go(func() error {
		fo.results <- fo.f.call(fo.ctx, fo.sem, idx, t, fo.q, fo.fed, fo.viaOut)
		return nil
	})
}

// receive records one call's outcome and answer, and follows the
// registries the answer names (on a first page, within hops and calls) or
// learns them for referral.
func (fo *fanout) receive(r callResult) {
	fo.inflight--
	fo.outcomes[r.idx] = r.outcome
	if !r.ok {
		return
	}
	fo.answers[r.idx] = r
	t := fo.targetOf[r.idx]
	for _, reg := range r.ans.registries {
		k := EndpointKey(reg.Endpoint)
		if fo.queried[k] || fo.visited(reg.Endpoint) || k == EndpointKey(fo.f.cfg.Name) {
			continue
		}
		ep, err := fo.f.book.learnedEndpoint(reg.Endpoint)
		follow := err == nil && !fo.continuing && t.depth+1 <= fo.hopsLeft && len(fo.outcomes) < maxCalls && fo.f.mayFederate(reg)
		if !follow {
			if err == nil {
				fo.learned = append(fo.learned, reg)
			}
			continue
		}
		reg.Endpoint = ep
		fo.launch(target{reg: reg, depth: t.depth + 1})
	}
}

// collect receives answers until none is in flight or the budget ends;
// then cancel ends the stragglers, whose answers count as timeouts.
func (fo *fanout) collect(cancel context.CancelFunc) {
wait:
	for fo.inflight > 0 {
		select {
		case r := <-fo.results:
			fo.receive(r)
		case <-fo.ctx.Done():
			break wait
		}
	}
	cancel() // stragglers: their calls are bound to the budget and end now
	for fo.inflight > 0 {
		r := <-fo.results
		if r.ok {
			r.ok = false
			r.outcome.Status, r.outcome.Error, r.outcome.Results = StatusTimeout, "budget exhausted", 0
		}
		fo.receive(r)
	}
	_ = fo.g.Wait()
}

// sources returns the ranked lists to fuse, in fusion order: local first,
// then the upstreams that answered, in fan-out order.
func (fo *fanout) sources(localFrom sourceState, lr localResult) []source {
	sources := []source{{from: localFrom, hits: skip(lr.hits, localFrom.Offset), next: lr.next, order: 0}}
	if localFrom.Done {
		sources[0].from.Done = true
	}
	for idx := range fo.outcomes {
		r, ok := fo.answers[idx]
		if !ok {
			continue
		}
		t := fo.targetOf[idx]
		from := t.from
		from.Endpoint, from.Learned, from.Depth = t.reg.Endpoint, !t.reg.Trusted(), t.depth
		sources = append(sources, source{from: from, hits: skip(r.ans.hits, t.from.Offset), next: r.ans.next, order: len(sources)})
	}
	return sources
}

// unqueried returns the learned registries no call of this search went to.
func (fo *fanout) unqueried() []Registry {
	var refs []Registry
	for _, r := range fo.learned {
		if !fo.queried[EndpointKey(r.Endpoint)] {
			refs = append(refs, r)
		}
	}
	return refs
}

// page fuses sources into one page of q and the token continuing every
// source where it stopped.
func (f *Federator) page(q Query, st pageState, sources []source) Response {
	seen := seenSet(st.Seen)
	page := fuse(sources, seen, q.PageSize)
	emitted := map[string]bool{}
	var keys []string
	var resp Response
	for _, h := range page {
		k := canonicalID(h.Identifier)
		emitted[k] = true
		keys = append(keys, seenKey(k))
		resp.Results = append(resp.Results, f.present(h))
	}
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
	return resp
}
