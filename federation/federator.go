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
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

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
		if err := f.book.AddUpstream(Upstream{URL: u, ForwardAuth: slices.Contains(cfg.ForwardAuthTo, u)}); err != nil {
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
	auth := ""
	if t.reg.Trusted() && t.reg.ForwardAuth {
		auth = credentialOf(ctx)
	}
	body, err := post(cctx, client, ep, requestBody(q, fed, t.from.Token, sh), via, auth)
	var se *statusError
	if sh == shapeV042 && errors.As(err, &se) && (se.code == http.StatusBadRequest || se.code == http.StatusUnprocessableEntity) {
		body, err = post(cctx, client, ep, requestBody(q, fed, t.from.Token, shapeARD), via, auth)
		if err == nil {
			bs.setShape(shapeARD)
			sh = shapeARD
		}
	}
	now := f.cfg.Now()
	var ans answer
	if err == nil {
		ans, err = parseAnswer(body, ep, t.reg.Trusted(), now)
		ans.hits = slices.DeleteFunc(ans.hits, func(h Hit) bool { return !q.admits(h) })
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
