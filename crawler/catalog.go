package crawler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/agentfinder/agentfinder/normalize"
)

// registryType is the canonical media type of a registry entry.
const registryType = "application/ai-registry+json"

// artifactParallelism bounds artifact fetches of one catalog.
const artifactParallelism = 4

// catalog fetches one catalog, normalizes it, enriches its entries, hands
// the result to the sink and queues the catalogs it links to.
func (s *session) catalog(ctx context.Context, t task) {
	now := s.c.cfg.Now()
	s.mu.Lock()
	seed := s.seeds[t.seed]
	s.mu.Unlock()
	cr := normalize.CatalogResult{Catalog: t.url, Via: t.via, Path: t.path, Seed: seed, FetchedAt: now}
	fail := func(reason, msg string) {
		cr.Status, cr.Reason, cr.Error = normalize.StatusFailed, reason, msg
	}
	v, hasV := s.conditional(t)
	var vp *Validator
	if hasV {
		vp = &v
	}
	k := kindCatalog
	if t.card {
		k = kindCard
	}
	res, err := s.get(ctx, t.url, k, vp)
	var links []normalize.Link
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return // cancelled: report nothing rather than a false failure
		}
		fail(Reason(err), err.Error())
	case res.Status == http.StatusNotModified && hasV:
		cr.Status = normalize.StatusNotModified
		if v.URL != "" {
			cr.Catalog = v.URL
		}
		cr.MaxAge = maxAge(res.Header)
		links = v.Links
	case t.probe && !hasV && (res.Status == http.StatusNotFound || res.Status == http.StatusGone):
		// Nothing here and never was: most domains have no ard.json. A
		// well-known catalog this crawler fetched before and that is now
		// gone is reported below, so ingest can count the failures.
		s.mu.Lock()
		s.notFound++
		s.mu.Unlock()
		return
	case res.Status < 200 || res.Status > 299:
		cr.Catalog = res.URL
		fail(ReasonHTTPStatus, fmt.Sprintf("HTTP %d", res.Status))
	default:
		if !s.claimFinal(t.url, res.URL) {
			return // a redirect led to a catalog this crawl already has
		}
		cr.Catalog = res.URL
		cr.MaxAge = maxAge(res.Header)
		if !t.card {
			links = s.parse(ctx, &cr, t, res)
		} else if s.parseCard(&cr, t, res, hasV) {
			s.mu.Lock()
			s.notFound++
			s.mu.Unlock()
			return
		}
	}

	s.markVisibility(&cr, t)
	if cr.Status == normalize.StatusFailed {
		s.c.log.Info("catalog failed", "url", cr.Catalog, "via", cr.Via, "reason", cr.Reason, "err", cr.Error)
	}
	s.c.metrics.catalog(&cr)
	s.hand(ctx, cr)
	s.mu.Lock()
	s.report.Catalogs = append(s.report.Catalogs, CatalogReport{
		URL: cr.Catalog, Via: cr.Via, Path: cr.Path, Status: cr.Status, Reason: cr.Reason, Error: cr.Error,
		Records: len(cr.Records), Problems: nonNil(cr.Problems), MaxAge: cr.MaxAge, Refresh: refreshOf(&cr, s.c.cfg.Now()),
	})
	for _, r := range cr.Registries {
		if r.URL != "" {
			s.report.Registries = append(s.report.Registries, Registry{
				URL: r.URL, Via: RegistryViaCatalog, Catalog: cr.Catalog, Identifier: r.Identifier, DisplayName: r.DisplayName,
				Description: r.Description, Tags: r.Tags,
			})
		}
	}
	s.mu.Unlock()
	s.follow(t, cr.Catalog, links)
}

// conditional returns the validator a fetch of t may send: only one kept for
// a crawl that handed the records on with the same seed groups, since the
// index holds them for those readers and a 304 would leave them so; and,
// for a signed catalog, only until its trust verdict may change.
func (s *session) conditional(t task) (Validator, bool) {
	v, ok := s.c.validator(t.url)
	if !ok || !slices.Equal(v.Groups, s.groups[t.seed]) || (!v.Until.IsZero() && !s.c.cfg.Now().Before(v.Until)) {
		return Validator{}, false
	}
	return v, true
}

// markVisibility gives every record and registry of a marked seed's catalog
// the seed's groups; a plain seed's stay public.
func (s *session) markVisibility(cr *normalize.CatalogResult, t task) {
	g := s.groups[t.seed]
	if len(g) == 0 {
		return
	}
	for i := range cr.Records {
		cr.Records[i].Visibility = g
	}
	for i := range cr.Registries {
		cr.Registries[i].Visibility = g
	}
}

// follow queues the catalogs that catalog (fetched for t) links to, within
// the depth bound.
func (s *session) follow(t task, catalog string, links []normalize.Link) {
	for _, l := range links {
		p := l.Path
		if len(p) == 0 {
			p = append(slices.Clone(t.path), catalog)
		}
		if len(p) > s.c.cfg.MaxDepth {
			s.mu.Lock()
			s.skipped++
			s.mu.Unlock()
			continue
		}
		via := l.Via
		if via == "" {
			via = normalize.ViaNested
		}
		s.pushCatalog(task{url: l.URL, via: via, path: p, seed: t.seed})
	}
}

// claimFinal marks the final URL of a redirected fetch as visited; false
// means another task already fetched that catalog.
func (s *session) claimFinal(orig, final string) bool {
	if orig == final {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.visited[final] {
		return false
	}
	s.visited[final] = true
	return true
}

// parse turns a 2xx body into records, problems and links, fetching
// artifacts for enrichment. It returns the links to follow.
func (s *session) parse(ctx context.Context, cr *normalize.CatalogResult, t task, res *fetched) []normalize.Link {
	ct := res.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	jsonType := mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
	looks := looksLikeJSON(res.Body)
	if !jsonType && !looks {
		cr.Status, cr.Reason = normalize.StatusFailed, ReasonNotJSON
		cr.Error = fmt.Sprintf("not a catalog: %s body", orNone(mt))
		return nil
	}
	trust := s.verdicts(ctx, res.Body, cr.FetchedAt)
	r := normalize.Catalog(res.Body, normalize.Options{
		Origin: res.URL, Via: t.via, Path: t.path, MaxDepth: s.c.cfg.MaxDepth, Now: cr.FetchedAt, Trust: trust,
	})
	var problems []normalize.Problem
	if !jsonType {
		problems = append(problems, normalize.Problem{
			Path: "$", Code: normalize.CodeUnexpectedMediaType, Severity: normalize.SeverityWarning,
			Message: fmt.Sprintf("JSON served as %s", orNone(mt)),
		})
	}
	problems = append(problems, r.Problems...)
	problems = append(problems, trust.Problems()...)
	cr.Problems = problems
	if r.Manifest == nil {
		cr.Status = normalize.StatusFailed
		cr.Reason = ReasonInvalidJSON
		if !looks {
			cr.Reason = ReasonNotJSON
		}
		cr.Error = "not a catalog document"
		return nil
	}
	cr.Status = normalize.StatusOK
	cr.Records = r.Records
	cr.Rejected = r.Rejected
	cr.Links = r.Links
	if !s.c.cfg.DisableEnrichment && len(r.Artifacts) > 0 {
		cr.Problems = append(cr.Problems, s.enrich(ctx, cr.Records, r.Artifacts)...)
	}
	cr.Problems = append(cr.Problems, s.attest(ctx, cr.Records)...)
	for _, rec := range cr.Records {
		if normalize.CanonicalType(rec.Type) == registryType {
			cr.Registries = append(cr.Registries, rec)
		}
	}
	et, lm := res.Header.Get("ETag"), res.Header.Get("Last-Modified")
	var until time.Time
	if trust != nil {
		until = trust.Until
	}
	// Kept even without ETag/Last-Modified: the state also says this URL
	// held a catalog, and which catalogs it links.
	s.c.setValidator(t.url, Validator{ETag: et, LastModified: lm, URL: res.URL, Links: r.Links, Groups: s.groups[t.seed], Until: until})
	return r.Links
}

// enrich fetches each artifact (same robots, limits and guard as catalogs)
// and lets normalize map it into its record. A failed fetch is a warning
// problem; the record stays as the catalog described it.
func (s *session) enrich(ctx context.Context, recs []normalize.Record, arts []normalize.Artifact) []normalize.Problem {
	idx := make(map[string]int, len(recs))
	for i, r := range recs {
		if _, dup := idx[r.Identifier]; !dup {
			idx[r.Identifier] = i
		}
	}
	var (
		mu       sync.Mutex
		problems []normalize.Problem
		claimed  = map[int]bool{}
		g        errgroup.Group
	)
	g.SetLimit(artifactParallelism)
	for _, a := range arts {
		i, ok := idx[a.Identifier]
		if !ok || claimed[i] || a.URL == "" {
			continue
		}
		claimed[i] = true
		g.Go(func() error {
			path := fmt.Sprintf("entries[identifier=%s].url", a.Identifier)
			warn := func(msg string) {
				mu.Lock()
				problems = append(problems, normalize.Problem{
					Path: path, Code: normalize.CodeInvalidArtifact, Severity: normalize.SeverityWarning, Message: msg,
				})
				mu.Unlock()
			}
			res, err := s.getAccept(ctx, a.URL, kindArtifact, nil, acceptFor(a.Accept))
			switch {
			case err != nil:
				if !errors.Is(err, context.Canceled) && !a.Guessed {
					warn(fmt.Sprintf("fetch artifact: %s: %v", Reason(err), err))
				}
				return nil
			case a.Guessed && (res.Status == http.StatusNotFound || res.Status == http.StatusGone):
				return nil // no full card at the conventional place: the inline one stands
			case res.Status < 200 || res.Status > 299:
				warn(fmt.Sprintf("fetch artifact %s: HTTP %d", a.URL, res.Status))
				return nil
			}
			ps := normalize.Enrich(&recs[i], res.Header.Get("Content-Type"), res.Body)
			if p := s.checkArtifact(&recs[i], res.Body); p != nil {
				ps = append(ps, *p)
			}
			mu.Lock()
			problems = append(problems, ps...)
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	return problems
}

func looksLikeJSON(b []byte) bool {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

func orNone(mt string) string {
	if mt == "" {
		return "untyped"
	}
	return mt
}

func nonNil(p []normalize.Problem) []normalize.Problem {
	if p == nil {
		return []normalize.Problem{}
	}
	return p
}
