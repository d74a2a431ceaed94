package ingest

import (
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
