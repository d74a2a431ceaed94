package crawler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/crawler/sigcheck"
	"github.com/agentfinder/agentfinder/normalize"
)

// Check normalizes one catalog body fetched from origin the way a crawl
// would, without a sink: its signatures are checked (the signers' DID
// documents fetched through this crawler), its artifacts are fetched for
// enrichment and checked against their digests, and its attestations'
// digests are checked (unless the Config turns these off). The result's
// problems include every trust problem; each record's Trust has its level.
func (c *Crawler) Check(ctx context.Context, body []byte, origin string) normalize.Result {
	s := c.newSession(ctx)
	now := c.cfg.Now()
	trust := s.verdicts(ctx, body, now)
	r := normalize.Catalog(body, normalize.Options{Origin: origin, Via: normalize.ViaSeed, MaxDepth: c.cfg.MaxDepth, Now: now, Trust: trust})
	r.Problems = append(r.Problems, trust.Problems()...)
	if !c.cfg.DisableEnrichment && len(r.Artifacts) > 0 {
		r.Problems = append(r.Problems, s.enrich(ctx, r.Records, r.Artifacts)...)
	}
	r.Problems = append(r.Problems, s.attest(ctx, r.Records)...)
	return r
}

// docFetcher fetches one document through the crawl's own fetcher (robots.txt,
// host patterns, limits, retries, the network guard): DID documents for
// sigcheck, attestation documents for their digests.
type docFetcher struct {
	s *session
	k kind
}

// Fetch returns the body of a 2xx answer.
func (f docFetcher) Fetch(ctx context.Context, u string) ([]byte, error) {
	res, err := f.s.get(ctx, u, f.k, nil)
	if err != nil {
		return nil, err
	}
	if res.Status < 200 || res.Status > 299 {
		return nil, fmt.Errorf("get %s: HTTP %d", res.URL, res.Status)
	}
	return res.Body, nil
}

// verdicts checks the signatures and inline digests of a catalog body; nil
// when verification is off or there is nothing to check.
func (s *session) verdicts(ctx context.Context, body []byte, now time.Time) *normalize.TrustVerdicts {
	if s.c.verifier == nil {
		return nil
	}
	v := s.c.verifier.Catalog(ctx, docFetcher{s, kindDID}, body, now)
	if v == nil {
		return nil
	}
	if v.Catalog != nil {
		s.c.metrics.trustCheck(v.Catalog.Problems)
	}
	for _, e := range v.Entries {
		s.c.metrics.trustCheck(e.Problems)
	}
	return v
}

// checkArtifact compares a fetched artifact with the digest its entry
// declares; a mismatch (or a refused algorithm) fails the record's trust.
func (s *session) checkArtifact(rec *normalize.Record, body []byte) *normalize.Problem {
	if s.c.verifier == nil {
		return nil
	}
	d := sigcheck.ArtifactDigest(rec)
	if d == "" {
		return nil
	}
	p := sigcheck.CheckDigest(d, body, fmt.Sprintf("entries[identifier=%s].digest", rec.Identifier), "the artifact at "+rec.URL)
	s.c.metrics.trustCheck(problemList(p))
	if p != nil {
		normalize.FailTrust(rec, *p)
	}
	return p
}

// attest fetches the attestation documents the records' trust manifests
// point to with a digest (https URLs only; at most MaxAttestations per
// catalog) and checks each; a mismatch fails that record's trust. A fetch
// that fails is a warning: nothing was learnt about the digest.
func (s *session) attest(ctx context.Context, recs []normalize.Record) []normalize.Problem {
	if s.c.verifier == nil {
		return nil
	}
	var out []normalize.Problem
	budget := s.c.cfg.MaxAttestations
	f := docFetcher{s, kindAttest}
	for i := range recs {
		if budget <= 0 {
			break
		}
		for _, a := range sigcheck.Attestations(&recs[i], budget) {
			if !strings.HasPrefix(a.URI, "https://") {
				continue // data: and other URIs are not fetched
			}
			budget--
			body, err := f.Fetch(ctx, a.URI)
			if err != nil {
				if !errors.Is(err, context.Canceled) {
					out = append(out, normalize.Problem{Path: a.Path, Code: normalize.CodeInvalidArtifact, Severity: normalize.SeverityWarning,
						Message: fmt.Sprintf("attestation %s not checked: %v", a.URI, err)})
				}
				continue
			}
			p := a.Check(body)
			s.c.metrics.trustCheck(problemList(p))
			if p != nil {
				normalize.FailTrust(&recs[i], *p)
				out = append(out, *p)
			}
		}
	}
	return out
}

func problemList(p *normalize.Problem) []normalize.Problem {
	if p == nil {
		return nil
	}
	return []normalize.Problem{*p}
}
