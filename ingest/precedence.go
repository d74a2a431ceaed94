package ingest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/agentfinder/agentfinder/normalize"
)

// claim is one catalog's record for an identifier, reduced to what
// precedence compares. Two catalogs claim the same identifier when their
// spellings share a document key (normalize.DocID): urn:ai: and urn:air:, or
// a publisher domain in another case, name one record.
type claim struct {
	catalog    string // the catalog that listed it
	identifier string // as that catalog wrote it
	hash       string // content hash of the record
	signed     bool   // the record's trust level is signed (a valid signature by its publisher)
	verified   bool
	seq        int64 // ADP seq; 0 when not given
	updatedTs  int64 // updatedAt in Unix seconds; 0 when not given
	stale      bool  // the catalog's records are marked stale
	// unconfirmed: the latest crawl of the catalog's seed did not fetch it
	// (Indexer.confirmed), set when precedence compares.
	unconfirmed bool
	kind        string // the kind of source (normalize.SourceKind)
	keys        string // its match keys (normalize.MatchKeys), joined by joinKeys
	vis         string // who may see it (visKey); claims of different visibility never share a document
}

// key is the document key of c's own record (normalize.RecordKey).
func (c claim) key() string {
	var groups []string
	if c.vis != "" {
		groups = strings.Split(c.vis, ",")
	}
	return normalize.RecordKey(c.identifier, groups)
}

// visKey is a record's visibility as one comparable string ("" public).
func visKey(visibility []string) string { return strings.Join(normalize.Groups(visibility), ",") }

// kindOf reads a stored source kind: documents stored before kinds were
// kept all came from catalogs.
func kindOf(k string) string {
	if k == "" {
		return normalize.SourceCatalog
	}
	return k
}

// Reasons precedence gives for a decision, as they appear in Conflict.Reason
// and in a stored record's lostClaims.
const (
	reasonStale       = "stale"
	reasonUnconfirmed = "not confirmed by the latest crawl"
	reasonSigned      = "signed by the publisher"
	reasonVerified    = "verified publisher"
	reasonSource      = "publisher's catalog"
	reasonSeq         = "seq"
	reasonUpdated     = "updatedAt"
	reasonCatalog     = "catalog URL"
	reasonHash        = "content hash"
)

// outranks decides between two claims on one identifier from different
// catalogs. It is a total order on claims: the first rule that tells them
// apart decides, and every rule reads only the claims themselves, never
// which one arrived first or when, so the same claims always resolve to the
// same record and a re-crawl never moves a record between claimants.
//
//  1. A live claim beats one whose catalog's records are marked stale.
//     A confirmed claim beats one whose catalog the latest crawl of its
//     seed did not fetch (gone, moved, no longer linked: it is old news
//     however its URL sorts).
//  2. A claim signed by its publisher (trust level signed) beats one that
//     is not: only the publisher's key makes it, wherever it is hosted.
//  3. A verified publisher (the catalog was fetched from the identifier's
//     domain or a subdomain of it) beats an unverified one.
//  4. The kind of source: a catalog's entry beats a bare card at a
//     well-known URI, which beats a registry's copy (normalize.SourceRank):
//     what the publisher lists stands over what others say of it.
//  5. The higher ADP seq wins; a claim without seq ranks below any seq.
//  6. The newer updatedAt wins; a claim without updatedAt ranks below any.
//  7. The catalog URL that sorts first (byte order) wins.
//  8. The content hash that sorts first wins.
//
// It reports whether a outranks b and the rule that decided (one of the
// reason constants; "" when the claims are equal, which two catalogs never
// are).
func outranks(a, b claim) (bool, string) {
	if a.stale != b.stale {
		return !a.stale, reasonStale
	}
	if a.unconfirmed != b.unconfirmed {
		return !a.unconfirmed, reasonUnconfirmed
	}
	if a.signed != b.signed {
		return a.signed, reasonSigned
	}
	if a.verified != b.verified {
		return a.verified, reasonVerified
	}
	if ra, rb := normalize.SourceRank(a.kind), normalize.SourceRank(b.kind); ra != rb {
		return ra > rb, reasonSource
	}
	if a.seq != b.seq {
		return a.seq > b.seq, reasonSeq
	}
	if a.updatedTs != b.updatedTs {
		return a.updatedTs > b.updatedTs, reasonUpdated
	}
	if a.catalog != b.catalog {
		return a.catalog < b.catalog, reasonCatalog
	}
	if a.hash != b.hash {
		return a.hash < b.hash, reasonHash
	}
	return false, ""
}

// supersedes reports whether in, a new version of the record from the
// catalog that holds it, may replace cur. A catalog's own update always
// does, except a stale update (xu §9): a lower seq or an older updatedAt
// than the record held, when both give one, never replaces a newer record.
func supersedes(in, cur claim) (bool, string) {
	if in.seq > 0 && cur.seq > 0 && in.seq != cur.seq {
		return in.seq > cur.seq, reasonSeq
	}
	if in.updatedTs > 0 && cur.updatedTs > 0 && in.updatedTs != cur.updatedTs {
		return in.updatedTs > cur.updatedTs, reasonUpdated
	}
	return true, ""
}

// lostClaims are the claims on one identifier that lost to the stored
// record, at most one per catalog, sorted by catalog URL.
type lostClaims []claim

// with returns ls with c in place of any claim from c's catalog.
func (ls lostClaims) with(c claim) lostClaims {
	out := ls.without(c.catalog)
	i, _ := slices.BinarySearchFunc(out, c.catalog, func(x claim, cat string) int { return cmp.Compare(x.catalog, cat) })
	return slices.Insert(out, i, c)
}

// without returns ls without the claim from catalog (a new slice when one
// was removed, so a caller's copy stays as it was).
func (ls lostClaims) without(catalog string) lostClaims {
	i := slices.IndexFunc(ls, func(x claim) bool { return x.catalog == catalog })
	if i < 0 {
		return ls
	}
	return slices.Concat(ls[:i], ls[i+1:])
}

// find returns the claim from catalog.
func (ls lostClaims) find(catalog string) (claim, bool) {
	i := slices.IndexFunc(ls, func(x claim) bool { return x.catalog == catalog })
	if i < 0 {
		return claim{}, false
	}
	return ls[i], true
}

// stored turns the losing claims into the record's lostClaims field, each
// with the rule by which it loses to winner.
func (ls lostClaims) stored(winner claim) []normalize.Claim {
	if len(ls) == 0 {
		return nil
	}
	out := make([]normalize.Claim, len(ls))
	for i, c := range ls {
		_, reason := outranks(winner, c)
		out[i] = normalize.Claim{Identifier: c.identifier, Catalog: c.catalog, Reason: reason,
			Signed: c.signed, PublisherVerified: c.verified, Seq: c.seq, UpdatedAtTs: c.updatedTs, ContentHash: c.hash,
			Kind: c.kind, Keys: keysOf(c)}
	}
	return out
}

// loadLostClaims reads a stored lostClaims field back.
func loadLostClaims(stored []normalize.Claim) lostClaims {
	var ls lostClaims
	for _, c := range stored {
		ls = ls.with(claim{catalog: c.Catalog, identifier: c.Identifier, hash: c.ContentHash,
			signed: c.Signed, verified: c.PublisherVerified, seq: c.Seq, updatedTs: c.UpdatedAtTs, kind: kindOf(c.Kind), keys: joinKeys(c.Keys)})
	}
	return ls
}

// conflictProblem is the problem a losing write reports on its catalog.
func conflictProblem(c Conflict) normalize.Problem {
	var why string
	switch c.Reason {
	case reasonStale:
		why = "the catalog of this write is stale"
	case reasonUnconfirmed:
		why = "the latest crawl of this write's seed did not reach its catalog"
	case reasonSigned:
		why = "the record held is signed by its publisher and this one is not"
	case reasonVerified:
		why = "the record held is from a verified publisher and this one is not"
	case reasonSource:
		why = "the record held is the same agent as listed by its publisher's catalog (a catalog beats a bare card, a card a registry's copy)"
	case reasonSeq:
		why = "this write has a lower seq than the record held"
	case reasonUpdated:
		why = "this write has an older (or no) updatedAt than the record held"
	case reasonCatalog:
		why = "both are equally verified and recent; the catalog URL that sorts first wins"
	default:
		why = "both are equally verified and recent and come from one catalog; the content hash that sorts first wins"
	}
	return normalize.Problem{
		Path:     fmt.Sprintf("$.entries[?(@.identifier==%q)]", c.Identifier),
		Code:     normalize.CodeConflict,
		Severity: normalize.SeverityWarning,
		Message:  fmt.Sprintf("%s: kept the record from %s, not the one from %s: %s", c.Identifier, c.Kept, c.Lost, why),
	}
}

// settle applies the precedence rules to in, a catalog's record for document
// id (doc, ready to write): it becomes the stored record, or a lost claim
// shown on the stored one and reported as a conflict. It returns the id of
// the document that holds the agent now: the winner's own (DocID of its
// identifier), which moves when a claim with another identifier wins.
func (ix *Indexer) settle(b *batch, ri int, ar *ApplyResult, id string, in claim, doc *normalize.Document) string {
	cur, exists := ix.docs[id]
	in.unconfirmed = !ix.confirmed(in.catalog)
	if exists {
		ix.refreshConfirmed(cur)
	}
	switch {
	case !exists:
		ix.own(id, &docMeta{claim: in})
	case cur.catalog == in.catalog:
		if cur.hash == in.hash {
			ar.Unchanged++
			if cur.stale {
				cur.stale = false
				b.flag(id, false)
				ar.Recovered++
			}
			return id
		}
		if ok, reason := supersedes(in, cur.claim); !ok {
			ar.conflict(Conflict{Identifier: in.identifier, Kept: cur.catalog, Lost: in.catalog, Reason: reason})
			return id
		}
		ix.own(id, &docMeta{claim: in, lost: cur.lost})
	default:
		if ok, reason := outranks(in, cur.claim); !ok {
			ar.conflict(Conflict{Identifier: in.identifier, Kept: cur.catalog, Lost: in.catalog, Reason: reason})
			if old, had := cur.lost.find(in.catalog); !had || old != in {
				cur.lost = cur.lost.with(in)
				ix.indexKeys(id, cur)
				ix.source(in.catalog).lost[id] = struct{}{}
				b.showLost(id, cur)
			}
			return id
		}
		ix.st.logger.Debug("record taken over", "identifier", in.identifier, "from", cur.catalog, "to", in.catalog)
		m := &docMeta{claim: in, lost: cur.lost.without(in.catalog).with(cur.claim)}
		if own := in.key(); own != id {
			// Another identifier wins the agent: its document replaces id's.
			ix.forget(id)
			b.remove(id, ri)
			id = own
		}
		ix.own(id, m)
	}
	setLost(doc, ix.docs[id].lost.stored(in))
	b.upsert(id, doc, ri)
	ar.Upserted++
	return id
}

// conflict records a losing write.
func (ar *ApplyResult) conflict(c Conflict) {
	ar.Conflicts = append(ar.Conflicts, c)
	ar.Problems = append(ar.Problems, conflictProblem(c))
}
