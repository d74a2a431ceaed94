package searchapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/agentfinder/agentfinder/federation"
)

// searchAnswer is what one search produced, before a binding encodes it in
// its own shape.
type searchAnswer struct {
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
	// page ("" otherwise); bindings with room for it pass it on.
	Reason string
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) error {
	var body searchBody
	raw, err := decodeBody(w, r, &body)
	if err != nil {
		return err
	}
	q, err := parseSearch(&body, raw, true)
	if err != nil {
		return err
	}
	ans, err := s.runSearch(r.Context(), q, federation.ParseVia(r.Header.Values("Via")))
	if err != nil {
		return err
	}
	writeSearch(w, ans)
	return nil
}

// runSearch answers a validated query. It is the one search every binding
// (POST /search, MCP, xu, HAIDIP, ADP) runs: local ranking, relevance
// scores and the cut-off, federation and page tokens are decided here and
// nowhere else. via is the request's Via chain (loop prevention).
func (s *Server) runSearch(ctx context.Context, q *searchQuery, via []string) (*searchAnswer, error) {
	q.access = accessOf(ctx)
	norm := q.normalized("search")
	mode := q.Mode
	if federation.InChain(via, s.viaName, s.publicURL) {
		mode = federation.ModeNone // we are in the chain already: answer locally, never fan out again
	}
	federating := mode != federation.ModeNone && s.cfg.Federation != nil
	lq := q
	if federating {
		// The cut-off applies once the page holds every registry's results.
		c, none := *q, 0
		c.MinScore = &none
		lq = &c
	}
	// local answers one page from the index; the page token is ours. It
	// keeps the page's scoring (lp) for the reason of an empty answer and
	// for scoring upstream results.
	var lp localPage
	local := func(ctx context.Context, _ federation.Query, pageToken string) ([]federation.Hit, string, error) {
		offset := 0
		if pageToken != "" {
			var err error
			if offset, err = s.tokens.decode(norm, pageToken); err != nil {
				return nil, "", err
			}
		}
		page, err := s.localSearch(ctx, lq, offset)
		if err != nil {
			return nil, "", err
		}
		lp = page
		tok := ""
		if page.Next > 0 {
			tok = s.tokens.encode(norm, page.Next)
		}
		return page.Hits, tok, nil
	}
	if !federating {
		hits, tok, err := local(ctx, federation.Query{}, q.PageToken)
		if err != nil {
			return nil, err
		}
		s.metrics.observeSearch(len(hits), nil)
		return &searchAnswer{Hits: hits, Federated: mode != federation.ModeNone, PageToken: tok, Facets: lp.Facets,
			Reason: s.emptyReason(q, hits, lp)}, nil
	}
	fr, err := s.cfg.Federation.Search(ctx, mode, q.federationQuery(), q.PageToken, via, local)
	if err != nil {
		return nil, err
	}
	if lp.Rel == nil && len(fr.Results) > 0 {
		// The local index was done on an earlier page: rank its pool anyway,
		// the scale the page is scored on.
		pq := *lq
		pq.PageSize = 1
		if lp, err = s.localSearch(ctx, &pq, 0); err != nil {
			return nil, err
		}
	}
	if lp.Rel != nil {
		fr.Results, lp.Best = s.rescoreFederated(ctx, lp.Rel, fr.Results, s.cutoff(q, lp.Rel))
	}
	for _, h := range fr.Results {
		fillTrustHealth(h.Entry) // upstream results (local ones have them)
	}
	s.metrics.observeSearch(len(fr.Results), fr.Upstreams)
	return &searchAnswer{Hits: fr.Results, Referrals: fr.Referrals, Upstreams: fr.Upstreams, Federated: true, PageToken: fr.PageToken,
		Facets: lp.Facets, Reason: s.emptyReason(q, fr.Results, lp)}, nil
}
