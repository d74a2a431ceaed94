package ingest

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
)

// One agent, one document. A record names its agent by its identifier,
// and also by its match keys (normalize.MatchKeys: artifact URL, endpoints,
// repository). Two claims whose identifiers differ are one agent when they
// share a key and come from different kinds of source (the publisher's
// catalog, a bare card at a well-known URI, a registry; two bare cards of
// one agent are also one): the catalog entry and the card it points to,
// the registry's copy of a server the publisher lists. Claims of one kind
// with different identifiers stay apart (a catalog's identifiers are the
// publisher's word; a registry's server names are distinct servers even
// when they share a repository), and one catalog's two entries never merge.
// The merged claims are one document, held by the claim precedence ranks
// first (outranks) and keyed by its identifier; the others are its lost
// claims, so its provenance lists every source.

// keysOf splits a claim's joined match keys.
func keysOf(c claim) []string {
	if c.keys == "" {
		return nil
	}
	return strings.Split(c.keys, "\n")
}

// joinKeys joins match keys for a claim (which stays comparable).
func joinKeys(keys []string) string { return strings.Join(keys, "\n") }

// resolve returns the document id that claim in, for the record with
// identifier id (its DocID), joins: its own when a document has that id or
// no other agent matches; else the document of the one agent it shares an
// identifier or, tier by tier (artifact, endpoint, repository), a match
// key with and may merge with. A tier matching two agents is ambiguous and
// merges nothing.
func (ix *Indexer) resolve(id string, in claim) string {
	if _, ok := ix.docs[id]; ok {
		return id
	}
	if g, ok := ix.keys[idKey(id)]; ok && ix.mergeable(g, in) {
		return g
	}
	keys := keysOf(in)
	for tier := 0; tier <= 2; tier++ {
		found := ""
		for _, k := range keys {
			g, ok := ix.keys[k]
			if !ok || normalize.MatchTier(k) != tier || g == found || !ix.mergeable(g, in) {
				continue
			}
			if found != "" {
				return id // two agents match: ambiguous
			}
			found = g
		}
		if found != "" {
			return found
		}
	}
	return id
}

// mergeable reports whether claim in may join the agent of document g: the
// same callers may see both (normalize.RecordKey), no claim on g comes from
// in's catalog under another identifier, and none of in's kind names
// another identifier (bare cards excepted).
func (ix *Indexer) mergeable(g string, in claim) bool {
	m := ix.docs[g]
	if m == nil || m.vis != in.vis {
		return false // a record hidden from some of in's readers (or the other way round) is another record to them
	}
	ok := func(c claim) bool {
		if normalize.SameIdentifier(c.identifier, in.identifier) {
			return true
		}
		if c.catalog == in.catalog {
			return false
		}
		return c.kind != in.kind || in.kind == normalize.SourceCard
	}
	if !ok(m.claim) {
		return false
	}
	for _, c := range m.lost {
		if !ok(c) {
			return false
		}
	}
	return true
}

// idKey is the key under which a claim's own identifier (its DocID) finds
// the agent it was merged into.
func idKey(docID string) string { return "id " + docID }

// indexKeys points every key of the claims on document id (their match
// keys and identifiers) at it, after unindexing what pointed there before.
func (ix *Indexer) indexKeys(id string, m *docMeta) {
	ix.unindexKeys(id, m)
	add := func(c claim) {
		m.keyset = append(m.keyset, idKey(normalize.DocID(c.identifier)))
		m.keyset = append(m.keyset, keysOf(c)...)
	}
	add(m.claim)
	for _, c := range m.lost {
		add(c)
	}
	for _, k := range m.keyset {
		if _, taken := ix.keys[k]; !taken {
			ix.keys[k] = id
		}
	}
}

// unindexKeys removes the keys that point at document id.
func (ix *Indexer) unindexKeys(id string, m *docMeta) {
	for _, k := range m.keyset {
		if ix.keys[k] == id {
			delete(ix.keys, k)
		}
	}
	m.keyset = m.keyset[:0]
}

// stampAliases gives the documents loaded without their alias keys (indexed
// before lookups by a merged-away identifier existed) the keys their lost
// claims call for.
func (ix *Indexer) stampAliases(ctx context.Context) error {
	ids := slices.Sorted(maps.Keys(ix.unaliased))
	for start := 0; start < len(ids); start += chunkDocs {
		part := ids[start:min(start+chunkDocs, len(ids))]
		patch := make([]map[string]any, len(part))
		for i, id := range part {
			keys := ix.unaliased[id]
			if keys == nil {
				keys = []string{} // a patch with null would store null
			}
			patch[i] = map[string]any{normalize.FieldID: id, normalize.FieldAliasKeys: keys}
		}
		if err := ix.st.write(ctx, "stamp alias keys on documents", ix.st.patchTask(ix.index, patch).send); err != nil {
			return err
		}
	}
	if len(ids) > 0 {
		ix.st.logger.Info("alias keys stamped on documents indexed without them", "documents", len(ids))
	}
	ix.unaliased = nil
	return nil
}

// A claim can bridge two agents that may not be one (a registry copy
// sharing an endpoint with one publisher's entry and a repository with
// another's): it belongs with the agent it matches more strongly. When it
// was merged first into the weaker match (its stronger one was not indexed
// yet), rebridge moves it when the stronger one arrives, so the index is
// the same whichever order the sources were crawled in.

// noLink is linkTier's answer for two claims that share nothing.
const noLink = 3

// linkTier is how strongly two claims are one agent: -1 for the same
// identifier, else the strongest tier (normalize.MatchTier) of a match key
// they share, else noLink.
func linkTier(a, b claim) int {
	if normalize.SameIdentifier(a.identifier, b.identifier) {
		return -1
	}
	best := noLink
	bk := keysOf(b)
	for _, k := range keysOf(a) {
		if t := normalize.MatchTier(k); t < best && slices.Contains(bk, k) {
			best = t
		}
	}
	return best
}

// compatible reports whether claim c may be one agent with in: the same
// identifier, or another catalog of another kind (bare cards excepted).
func compatible(c, in claim) bool {
	if normalize.SameIdentifier(c.identifier, in.identifier) {
		return true
	}
	if c.catalog == in.catalog {
		return false
	}
	return c.kind != in.kind || in.kind == normalize.SourceCard
}

// rebridge moves to in's agent (document own) a lost claim of another
// agent that in matches more strongly than that claim is bound to its
// agent, when in would hold the agent they make, and returns whether it
// moved one. The claim leaves its old document (its lost claims are
// rewritten) and becomes a lost claim of in's; when in has no document yet,
// the claim stands in memory as its holder, so settle's takeover writes
// in's document with it.
func (ix *Indexer) rebridge(b *batch, own string, in claim) bool {
	target := ix.docs[own]
	if target != nil && target.catalog != in.catalog {
		return false // another catalog holds own: settle decides between them
	}
	g, x, ok := ix.bridged(own, in, target)
	if !ok {
		return false
	}
	gm := ix.docs[g]
	gm.lost = gm.lost.without(x.catalog)
	delete(ix.source(x.catalog).lost, g)
	ix.indexKeys(g, gm)
	b.showLost(g, gm)
	x.vis = gm.vis
	if target == nil {
		ix.own(own, &docMeta{claim: x})
		return true
	}
	target.lost = target.lost.with(x)
	ix.own(own, target)
	b.showLost(own, target)
	return true
}

// bridged finds the document g and its lost claim x that in should take:
// in may not join g's agent, x shares a match key with in of a stronger
// tier than any link x has to g's other claims, g's other claims stay one
// agent without x, x may be one with in and with target's claims, and in
// outranks x.
func (ix *Indexer) bridged(own string, in claim, target *docMeta) (string, claim, bool) {
	keys := keysOf(in)
	for tier := 0; tier <= 2; tier++ {
		for _, k := range keys {
			g, found := ix.keys[k]
			if !found || g == own || normalize.MatchTier(k) != tier {
				continue
			}
			gm := ix.docs[g]
			if gm == nil || gm.vis != in.vis || ix.mergeable(g, in) {
				continue // in joins no other agent here, or may join this one whole
			}
			for _, x := range gm.lost {
				if linkTier(in, x) == tier && ix.movable(gm, x, in, target) {
					return g, x, true
				}
			}
		}
	}
	return "", claim{}, false
}

// movable reports whether x, a lost claim of gm matched by in, should move
// to in's agent (whose document is target, or none yet).
func (ix *Indexer) movable(gm *docMeta, x, in claim, target *docMeta) bool {
	if !compatible(x, in) {
		return false
	}
	if target != nil {
		for _, c := range target.lost {
			if !compatible(c, x) {
				return false
			}
		}
	}
	rest := append(lostClaims{gm.claim}, gm.lost.without(x.catalog)...)
	bond := noLink
	for _, c := range rest {
		bond = min(bond, linkTier(x, c))
	}
	if linkTier(in, x) >= bond || !connected(rest) {
		return false
	}
	a, b := in, x
	a.unconfirmed, b.unconfirmed = !ix.confirmed(a.catalog), !ix.confirmed(b.catalog)
	wins, _ := outranks(a, b)
	return wins
}

// connected reports whether claims, the first being a document's holder,
// are all linked to it through one another.
func connected(claims lostClaims) bool {
	reached := map[int]bool{0: true}
	for grew := true; grew; {
		grew = false
		for i, c := range claims {
			if reached[i] {
				continue
			}
			for j := range reached {
				if linkTier(c, claims[j]) < noLink {
					reached[i], grew = true, true
					break
				}
			}
		}
	}
	return len(reached) == len(claims)
}
