package score

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
)

// providerOf names who publishes a dumped document for the provider rules
// TestFitWorlds measures (FIT_PROVIDER), by the first of the sources how
// lists (comma separated) that gives one: "served" the provider the search
// crowds by (normalize.ProviderKey of the publisher and the endpoints'
// hosts), "provider" the artifact's provider organisation, "host" the
// registrable domain of an endpoint, "namespace" an MCP registry name's
// reverse-DNS namespace ("io.github.owner" of "io.github.owner/server", the
// publisher a registry walk gives it: the eval publishes the registry's
// servers from one fixture host), "publisher" the catalog's domain. ""
// when none does.
func providerOf(provider string, hosts []string, name, publisher, how string) string {
	var endpoints []string
	for _, h := range hosts {
		endpoints = append(endpoints, "https://"+h+"/")
	}
	for _, src := range strings.Split(how, ",") {
		key := ""
		switch src {
		case "served":
			key = normalize.ProviderKey(publisher, endpoints)
		case "provider":
			key = strings.ToLower(strings.TrimSpace(provider))
		case "host":
			key = normalize.ProviderKey("", endpoints)
		case "namespace":
			if ns, _, ok := strings.Cut(name, "/"); ok && strings.Contains(ns, ".") && !strings.Contains(ns, " ") {
				key = strings.ToLower(ns)
			}
		case "publisher":
			key = publisher
		}
		if key != "" {
			return src + ":" + key
		}
	}
	return ""
}

// weighProviders lowers each hit's semantic similarity by w times the
// natural log of how many documents its provider publishes (count; 1 for
// none) and fuses the hits again as query.Fuse does, best first: the
// provider-count weight TestFitWorlds measures (FIT_PROVIDER_WEIGHT).
func weighProviders(q *fitDumpQuery, w float64, count func(id string) int) {
	for i := range q.Hits {
		h := &q.Hits[i]
		if n := count(h.ID); n > 1 && h.Semantic > 0 {
			d := w * math.Log(float64(n))
			h.Semantic -= d
			h.Score -= 0.8 * d
		}
	}
	slices.SortStableFunc(q.Hits, func(a, b fitHit) int { return cmp.Compare(b.Score, a.Score) })
}
