package search

import (
	"context"
	"encoding/json"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/filter"
)

// internalFields are index fields never shown to clients.
var internalFields = []string{
	normalize.FieldID, normalize.FieldContentHash, normalize.FieldPublisherNames, normalize.FieldSourceCatalog,
	normalize.FieldUpdatedAtTs, normalize.FieldIndexedAtTs, normalize.FieldExpiresAtTs, "_vectors", "_rankingScore",
	"_rankingScoreDetails", normalize.FieldMatchKeys,
}

// Agent returns the stored record of identifier as a caller in the groups
// access sees it: every spelling the index keys as one identifier
// (normalize.SameIdentifier: urn:ai: or urn:air:, the publisher domain in
// any case) finds it, and its "identifier" is the one its winning catalog
// wrote. The record's own provenance is under "provenance", other
// catalogs' claims on the identifier that lost to it under "lostClaims";
// "source" is this registry. A missing record, or one hidden from the
// caller, is a KindNotFound error. Every door's get-by-id calls this.
func (s *Engine) Agent(ctx context.Context, identifier string, access []string) (map[string]json.RawMessage, error) {
	// One filtered read, whether the record is missing or hidden from the
	// caller: the same answer and the same work for both.
	var docs meilisearch.DocumentsResult
	err := s.index.GetDocumentsWithContext(ctx, &meilisearch.DocumentsQuery{
		Filter: filter.And(filter.Eq(normalize.FieldID, normalize.DocID(identifier)), filter.Access(access)).Filter(),
		Limit:  1,
	}, &docs)
	if err != nil {
		return nil, err
	}
	if len(docs.Results) == 0 {
		return nil, errNotFound
	}
	doc := map[string]json.RawMessage(docs.Results[0])
	var got string
	if json.Unmarshal(doc[normalize.FieldIdentifier], &got) != nil || !normalize.SameIdentifier(got, identifier) {
		return nil, errNotFound // a key collision or a malformed document: never show another record
	}
	for _, f := range internalFields {
		delete(doc, f)
	}
	// The record's provenance moves to "provenance"; "source" is this registry.
	if p, ok := doc["source"]; ok {
		doc["provenance"] = p
	}
	doc["source"] = s.sourceJSON
	fillTrustHealth(doc)
	return doc, nil
}
