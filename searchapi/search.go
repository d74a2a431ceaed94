package searchapi

import (
	"context"
	"net/http"

	"github.com/agentfinder/agentfinder/federation"
)

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
	norm := q.normalized("search")
	via := federation.ParseVia(r.Header.Values("Via"))
	mode := q.Mode
	if federation.InChain(via, s.viaName, s.publicURL) {
		mode = federation.ModeNone // we are in the chain already: answer locally, never fan out again
	}
	// local answers one page from the index; the page token is ours.
	local := func(ctx context.Context, _ federation.Query, pageToken string) ([]federation.Hit, string, error) {
		offset := 0
		if pageToken != "" {
			var err error
			if offset, err = s.tokens.decode(norm, pageToken); err != nil {
				return nil, "", err
			}
		}
		hits, next, err := s.localSearch(ctx, q, offset)
		if err != nil {
			return nil, "", err
		}
		tok := ""
		if next > 0 {
			tok = s.tokens.encode(norm, next)
		}
		return hits, tok, nil
	}
	if mode == federation.ModeNone || s.cfg.Federation == nil {
		hits, tok, err := local(r.Context(), federation.Query{}, q.PageToken)
		if err != nil {
			return err
		}
		s.metrics.observeSearch(len(hits), nil)
		writeSearch(w, hits, nil, nil, mode != federation.ModeNone, tok)
		return nil
	}
	fr, err := s.cfg.Federation.Search(r.Context(), mode, q.federationQuery(), q.PageToken, via, local)
	if err != nil {
		return err
	}
	s.metrics.observeSearch(len(fr.Results), fr.Upstreams)
	writeSearch(w, fr.Results, fr.Referrals, fr.Upstreams, true, fr.PageToken)
	return nil
}
