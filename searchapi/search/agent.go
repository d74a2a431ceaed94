package search

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
)

// internalFields are index fields never shown to clients.
var internalFields = []string{
	normalize.FieldID, normalize.FieldIdentifierKey, normalize.FieldContentHash, normalize.FieldPublisherNames, normalize.FieldSourceCatalog,
	normalize.FieldUpdatedAtTs, normalize.FieldIndexedAtTs, normalize.FieldExpiresAtTs, normalize.FieldToolsKey, "_vectors", "_rankingScore",
	"_rankingScoreDetails", normalize.FieldMatchKeys, normalize.FieldAliasKeys, normalize.FieldUnembedded,
	normalize.FieldDeclaredTools,
}

// Agent returns the stored record of identifier as a caller in the groups
// access sees it: every spelling the index keys as one identifier
// (normalize.SameIdentifier: urn:ai: or urn:air:, the publisher domain in
// any case) finds it, and its "identifier" is the one its winning catalog
// wrote. The record's own provenance is under "provenance", other
// catalogs' claims on the identifier that lost to it under "lostClaims";
// "source" is this registry. A missing record, or one hidden from the
// caller, is a KindNotFound error. Every door's get-by-id calls this.
//
// An identifier that names a copy of an agent merged into another record
// (the same agent reached two ways; see ingest/sameagent.go) is an alias
// of that record: when no record of its own is held, the lookup answers
// with the surviving record, whose "identifier" is its canonical one. The
// alias is read under the same access filter, so it finds only a record
// the caller may see.
func (s *Engine) Agent(ctx context.Context, identifier string, access []string) (map[string]json.RawMessage, error) {
	// One filtered read, whether the record is missing or hidden from the
	// caller: the same answer and the same work for both. The identifier's
	// public record is keyed by its DocID; records only some groups may
	// see carry it as identifierKey (normalize.RecordKey); a record it was
	// merged into carries it among its aliasKeys.
	// The tool documents of the same records (they carry the same keys and
	// access fields) are read at the same time (recordtools.go).
	key := normalize.DocID(identifier)
	keys := filter.And(filter.Or(filter.Eq(normalize.FieldID, key), filter.Eq(normalize.FieldIdentifierKey, key),
		filter.Eq(normalize.FieldAliasKeys, key)), filter.Access(access))
	tools := s.readToolLists(ctx, keys, maxVariants)
	defer tools.wait()
	var docs meilisearch.DocumentsResult
	err := s.index.GetDocumentsWithContext(ctx, &meilisearch.DocumentsQuery{Filter: keys.Filter(), Limit: maxVariants}, &docs)
	if err != nil {
		return nil, err
	}
	doc := pickRecord(docs.Results, identifier)
	if doc == nil {
		doc = pickAlias(docs.Results, key)
	}
	if doc == nil {
		return nil, agentNotFound(identifier) // none, or a key collision or a malformed document: never show another record
	}
	if err := tools.join(doc); err != nil {
		return nil, err
	}
	for _, f := range internalFields {
		delete(doc, f)
	}
	doc[normalize.FieldLostClaims] = publicClaims(doc[normalize.FieldLostClaims])
	if doc[normalize.FieldLostClaims] == nil {
		delete(doc, normalize.FieldLostClaims)
	}
	// The record's provenance moves to "provenance"; "source" is this registry.
	if p, ok := doc["source"]; ok {
		doc["provenance"] = p
	}
	doc["source"] = s.sourceJSON
	fillTrustHealth(doc)
	return doc, nil
}

// maxVariants bounds the records of one identifier a lookup reads: its
// public record and the records of the group sets a caller may be in.
const maxVariants = 8

// pickRecord is the record of identifier a lookup answers with when the
// caller may see several (a public claim and its group's own record): the
// publisher-verified one, else one of the caller's groups, else the public
// one; nil when none is of identifier.
func pickRecord(results meilisearch.Hits, identifier string) map[string]json.RawMessage {
	var best map[string]json.RawMessage
	bestRank := -1
	for _, d := range results {
		var (
			id         string
			verified   bool
			visibility []string
		)
		if json.Unmarshal(d[normalize.FieldIdentifier], &id) != nil || !normalize.SameIdentifier(id, identifier) {
			continue
		}
		_ = json.Unmarshal(d[normalize.FieldPublisherVerified], &verified)
		_ = json.Unmarshal(d[normalize.FieldVisibility], &visibility)
		rank := 0
		if verified {
			rank += 2
		}
		if len(visibility) > 0 {
			rank++
		}
		if rank > bestRank {
			best, bestRank = d, rank
		}
	}
	return best
}

// pickAlias is the record a lookup by key answers with when no record is
// of that identifier: the one whose aliasKeys hold it (a merged-away
// identifier of the same agent), the publisher-verified one first; nil
// when none holds it.
func pickAlias(results meilisearch.Hits, key string) map[string]json.RawMessage {
	var best map[string]json.RawMessage
	bestVerified := false
	for _, d := range results {
		var (
			aliases  []string
			verified bool
		)
		if json.Unmarshal(d[normalize.FieldAliasKeys], &aliases) != nil || !slices.Contains(aliases, key) {
			continue
		}
		_ = json.Unmarshal(d[normalize.FieldPublisherVerified], &verified)
		if best == nil || verified && !bestVerified {
			best, bestVerified = d, verified
		}
	}
	return best
}

// publicClaims is a record's lostClaims as clients see them: without the
// content hash, an internal value of ingest's precedence (it mixes in the
// claim's visibility and trust); nil when there are none.
func publicClaims(raw json.RawMessage) json.RawMessage {
	var claims []map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &claims) != nil || len(claims) == 0 {
		return nil
	}
	for _, c := range claims {
		delete(c, normalize.FieldContentHash)
	}
	b, err := json.Marshal(claims)
	if err != nil {
		return nil
	}
	return b
}

// agentNotFound is the answer for an identifier this registry does not hold
// (or does not show the caller), naming it.
func agentNotFound(identifier string) *Error {
	return &Error{Kind: KindNotFound, Message: fmt.Sprintf("no agent with identifier %q in this registry", identifier)}
}
