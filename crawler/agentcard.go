package crawler

import (
	"fmt"
	"mime"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
)

// agentCardPaths are the well-known URIs of an A2A agent card, tried on
// every seed domain beside the catalogs: the current name, and the one A2A
// 0.2 used that many agents still serve.
var agentCardPaths = []string{"/.well-known/agent-card.json", "/.well-known/agent.json"}

// agentCardURLs returns the well-known agent card URLs of a domain.
func agentCardURLs(domain string) []string {
	out := make([]string, 0, len(agentCardPaths))
	for _, p := range agentCardPaths {
		out = append(out, "https://"+domain+p)
	}
	return out
}

// parseCard turns a 2xx answer at a well-known card URI into a result of
// one record (see normalize.Card), or problems and a failed status when the
// card is broken. It reports none when the answer is no card at all and
// was never one (a site answering every path with its HTML page): like a
// 404 there, nothing to report.
func (s *session) parseCard(cr *normalize.CatalogResult, t task, res *fetched, hadValidator bool) (none bool) {
	mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	jsonType := mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
	if !jsonType && !looksLikeJSON(res.Body) {
		if !hadValidator {
			return true
		}
		cr.Status, cr.Reason = normalize.StatusFailed, ReasonNotJSON
		cr.Error = fmt.Sprintf("not an agent card: %s body", orNone(mt))
		return false
	}
	r := normalize.Card(res.Body, normalize.Options{Origin: res.URL, Via: t.via, Path: t.path, Now: cr.FetchedAt})
	cr.Problems = r.Problems
	if len(r.Records) == 0 {
		cr.Status, cr.Reason, cr.Error = normalize.StatusFailed, ReasonInvalidJSON, "not an agent card"
		return false
	}
	cr.Status = normalize.StatusOK
	cr.Records = r.Records
	s.c.setValidator(t.url, Validator{ETag: res.Header.Get("ETag"), LastModified: res.Header.Get("Last-Modified"), URL: res.URL, Groups: s.groups[t.seed]})
	return false
}
