package search

import (
	"context"
	"encoding/json"

	"github.com/agentfinder/agentfinder/federation"
)

// Answer is what one search produced, before a door encodes it in its own
// shape (Encode writes POST /search's).
type Answer struct {
	Hits      []federation.Hit
	Referrals []json.RawMessage
	Upstreams []federation.Outcome
	// Federated is true when the mode asked or named other registries
	// (auto, referrals): POST /search then reports upstreams.
	Federated bool
	PageToken string
	// Facets counts the values of the query's Facets fields over the local
	// candidates (nil when it named none).
	Facets map[string]map[string]int
	// Reason says why Hits is empty when the cut-off emptied the first
	// page ("" otherwise); doors with room for it pass it on.
	Reason string
}

// Search answers a validated query. It is the one search every door
// (POST /search, MCP, xu, HAIDIP, ADP, the site) runs: local ranking,
// relevance scores and the cut-off, federation and page tokens are decided
// here and nowhere else. via is the request's Via chain (loop prevention);
// q.Access must hold the caller's groups.
func (s *Engine) Search(ctx context.Context, q *Query, via []string) (*Answer, error) {
	mode := q.Mode
	if federation.InChain(via, s.viaName, s.publicURL) {
		mode = federation.ModeNone // we are in the chain already: answer locally, never fan out again
	}
	run := s.newRun(q, mode != federation.ModeNone && s.cfg.Federation != nil)
	if !run.federating {
		hits, tok, err := run.local(ctx, federation.Query{}, q.PageToken)
		if err != nil {
			return nil, err
		}
		s.observe(len(hits), nil)
		return &Answer{Hits: hits, Federated: mode != federation.ModeNone, PageToken: nextToken(hits, tok), Facets: run.page.Facets,
			Reason: s.emptyReason(q, hits, run.page)}, nil
	}
	fr, err := s.cfg.Federation.Search(ctx, mode, q.federationQuery(), q.PageToken, via, run.local)
	if err != nil {
		return nil, err
	}
	if err := run.rescore(ctx, &fr); err != nil {
		return nil, err
	}
	s.observe(len(fr.Results), fr.Upstreams)
	return &Answer{Hits: fr.Results, Referrals: fr.Referrals, Upstreams: fr.Upstreams, Federated: true, PageToken: nextToken(fr.Results, fr.PageToken),
		Facets: run.page.Facets, Reason: s.emptyReason(q, fr.Results, run.page)}, nil
}

// searchRun is the state of one search: the query as asked (q), the
// query the local index answers (lq: without the cut-off when federating,
// which applies once the page holds every registry's results), the key
// its page tokens are bound to, and the local page once answered, whose
// scoring gives the reason of an empty answer and scores upstream results.
type searchRun struct {
	s          *Engine
	q, lq      *Query
	norm       string
	federating bool
	page       localPage
}

func (s *Engine) newRun(q *Query, federating bool) *searchRun {
	run := &searchRun{s: s, q: q, lq: q, norm: q.normalized("search"), federating: federating}
	if federating {
		c, none := *q, 0
		c.MinScore = &none
		run.lq = &c
	}
	return run
}

// local answers one page from the index (a federation.LocalSearch); the page
// token is ours.
func (run *searchRun) local(ctx context.Context, _ federation.Query, pageToken string) ([]federation.Hit, string, error) {
	offset := 0
	if pageToken != "" {
		var err error
		if offset, err = run.s.tokens.decode(run.norm, pageToken); err != nil {
			return nil, "", err
		}
	}
	page, err := run.s.localSearch(ctx, run.lq, offset)
	if err != nil {
		return nil, "", err
	}
	run.page = page
	tok := ""
	if page.Next > 0 {
		tok = run.s.tokens.encode(run.norm, page.Next)
	}
	return page.Hits, tok, nil
}

// rescore puts a federated page on this registry's scale (rescoreFederated)
// and fills in the trust and health upstream results lack.
func (run *searchRun) rescore(ctx context.Context, fr *federation.Response) error {
	s := run.s
	if run.page.Rel == nil && len(fr.Results) > 0 {
		// The local index was done on an earlier page: rank its pool anyway,
		// the scale the page is scored on.
		pq := *run.lq
		pq.PageSize = 1
		page, err := s.localSearch(ctx, &pq, 0)
		if err != nil {
			return err
		}
		run.page = page
	}
	if run.page.Rel != nil {
		fr.Results, run.page.Best = s.rescoreFederated(ctx, run.page.Rel, fr.Results, s.cutoff(run.q, run.page.Rel))
	}
	for _, h := range fr.Results {
		fillTrustHealth(h.Entry) // upstream results (local ones have them)
	}
	return nil
}

// nextToken is the token of the page after one holding hits: none when the
// page is empty (the cut-off emptied it, and later pages score lower still).
func nextToken(hits []federation.Hit, tok string) string {
	if len(hits) == 0 {
		return ""
	}
	return tok
}
