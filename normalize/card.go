package normalize

import (
	"encoding/json"
	"fmt"
	"strings"
)

// VariantWellKnownCard marks a record read from an A2A agent card published
// on its own at a well-known URI rather than listed by a catalog.
const VariantWellKnownCard = "a2a-wellknown-card"

// Card reads an A2A agent card fetched on its own, from a domain's
// /.well-known/agent-card.json (or the older agent.json), into one record.
// The record's identifier and url are the card's URL (opts.Origin): a card
// names no identifier of its own and Agent Finder mints none for it. Its
// publisher is the host the card was fetched from, so it is verified by
// construction. A document that is not a JSON object, or a card without a
// name, yields an error problem and no record; anything else wrong in the
// card is a warning beside the record. It never panics, whatever body holds.
func Card(body []byte, opts Options) Result {
	var res Result
	body = TrimBOM(body)
	fail := func(code, format string, args ...any) Result {
		res.Problems = append(res.Problems, Problem{Path: "$", Code: code, Severity: SeverityError, Message: fmt.Sprintf(format, args...)})
		return res
	}
	if !json.Valid(body) {
		var probe json.RawMessage
		return fail(CodeInvalidJSON, "agent card is not JSON: %s", syntaxError(body, json.Unmarshal(body, &probe)))
	}
	if firstByte(body) != '{' {
		return fail(CodeNotAnObject, "agent card is a JSON %s, not an object", jsonKind(body))
	}
	card, _ := decodeAny(body).(map[string]any)
	if name, _ := card["name"].(string); strings.TrimSpace(name) == "" {
		return fail(CodeMissingField, "agent card has no name; not an A2A agent card")
	}
	host := originHost(opts.Origin)
	rec := Record{
		Identifier:        opts.Origin,
		Type:              TypeA2A,
		URL:               opts.Origin,
		Publisher:         host,
		PublisherVerified: host != "",
		Variants:          []string{VariantWellKnownCard},
		Source:            Source{Catalog: opts.Origin, Via: opts.Via, Path: append([]string(nil), opts.Path...), FetchedAt: opts.Now},
		ContentHash:       ContentHash(body),
	}
	res.Problems = append(res.Problems, mapArtifact(&rec, TypeA2A, body, true)...)
	if rec.DisplayName == "" {
		rec.DisplayName = host
	}
	rec.Status = "active"
	rec.Trust = trustFor(&rec, "$", opts.Trust)
	res.Records = []Record{rec}
	return res
}
