package normalize

import (
	"maps"
	"slices"
	"strings"
)

// The index contract: what ingest writes into Meilisearch and searchapi
// reads back, kept here, in the one package both import, so that the two
// cannot drift. Adding a filter field means one entry in FilterFields: ingest
// makes it filterable, the filter language of GET /agents accepts it.

// Index field names used in filters and sorts.
const (
	FieldID                = "id"
	FieldIdentifierKey     = "identifierKey"
	FieldIdentifier        = "identifier"
	FieldDisplayName       = "displayName"
	FieldType              = "type"
	FieldTags              = "tags"
	FieldSkills            = "skills"
	FieldCapabilities      = "capabilities"
	FieldProtocols         = "protocols"
	FieldCompliance        = "compliance"
	FieldPublisher         = "publisher"
	FieldPublisherNames    = "publisherNames"
	FieldPublisherVerified = "publisherVerified"
	FieldLanguages         = "languages"
	FieldAuth              = "auth"
	FieldStatus            = "status"
	FieldStale             = "stale"
	FieldSourceCatalog     = "sourceCatalog"
	FieldUpdatedAtTs       = "updatedAtTs"
	FieldIndexedAtTs       = "indexedAtTs"
	FieldExpiresAtTs       = "expiresAtTs"
	FieldContentHash       = "contentHash"
	FieldVersion           = "version"
	FieldLostClaims        = "lostClaims"
	FieldSourceKind        = "sourceKind"
	FieldMatchKeys         = "matchKeys"
	FieldAliasKeys         = "aliasKeys"
	FieldUnembedded        = "unembedded"
	FieldVisibility        = "visibility"
	// FieldTrustLevel and FieldHealthStatus are nested fields of the
	// record's trust and health (Meilisearch filters them by dotted path).
	FieldTrustLevel   = "trust.level"
	FieldHealthStatus = "health.status"
)

// FieldToolNames is the nested field of a record's tools' names (ingest
// reads it to know which records have tools).
const FieldToolNames = "tools.items.name"

// EmbedderName names the Meilisearch userProvided embedder holding each
// document's vectors. The name stands for their layout (below): a new
// layout takes a new name, so that ingest, finding the index's embedder
// changed, re-embeds every document instead of mixing layouts. ("default"
// held one vector per example as well, up to 49 a document.)
const EmbedderName = "entry"

// EntryText is the text whose vector stands for the whole entry: its name,
// description, capabilities, skill names and tags, one per line. ingest
// embeds it for the index; searchapi embeds it for other registries'
// results, to score them on the same scale. Relevance tuning changes this
// function; records are re-embedded when their content hash changes.
func EntryText(rec Record) string {
	var b strings.Builder
	line := func(s string) {
		s = strings.TrimSpace(s)
		if s == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	line(rec.DisplayName)
	line(rec.Description)
	line(strings.Join(rec.Capabilities, ", "))
	line(strings.Join(rec.SkillNames, ", "))
	line(strings.Join(rec.Tags, ", "))
	return b.String()
}

// The stored vectors of a document under EmbedderName are, in this order:
// the vector of the entry text (when there is one), then one per text of
// EmbeddedQueries(rec.RepresentativeQueries). Examples (A2A skill examples,
// tool descriptions) get none, and representative queries at most
// MaxEmbeddedQueries: Meilisearch matches a document on its closest
// vector, so every vector more is one more chance to sit near an unrelated
// request, and a card with a dozen varied examples ended in the top 10 of
// a third of all requests (docs/MEASUREMENTS.md, "vectors per document").
// Examples still count by their words (evidence). Then one per text of
// EmbeddedTools(rec.Tools): the tools its endpoint listed, at most
// MaxEmbeddedTools.
const MaxEmbeddedQueries = 4

// EmbeddedQueries returns the representative queries that get a vector of
// their own: the first MaxEmbeddedQueries non-empty ones, trimmed.
func EmbeddedQueries(queries []string) []string {
	return firstNonEmpty(queries, MaxEmbeddedQueries)
}

func firstNonEmpty(texts []string, limit int) []string {
	var out []string
	for _, t := range texts {
		if len(out) == limit {
			break
		}
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// MaxTotalHits is how deep a search or a browse of the index can reach
// (Meilisearch's pagination.maxTotalHits, 1,000 by default).
const MaxTotalHits = 100000

// FieldKind says how a filterable field holds its values.
type FieldKind int

// Field kinds.
const (
	KindString FieldKind = iota // one string per document
	KindList                    // an array of strings
	KindType                    // a media type: a filter matches its spellings
	KindBool                    // true or false
	KindTime                    // Unix seconds; filters take timestamps
)

// FilterField is a field clients may filter on.
type FilterField struct {
	Field string    // the index field
	Kind  FieldKind // how its values are held
	Fold  bool      // values are stored lower-case; filters lower-case theirs
	// Values, when set, is the closed list of values the field holds: a
	// filter naming another is refused rather than matching nothing.
	Values []string
}

// Trust levels and health statuses, the closed lists of their filters.
var (
	TrustLevels    = []string{TrustSigned, TrustDomain, TrustRegistry, TrustNone}
	HealthStatuses = []string{HealthUp, HealthDown, HealthAuthRequired, HealthNotMCP, HealthTemplate, HealthUnknown}
)

// FilterFields are the fields the search APIs filter on, by the name clients
// use for them (the record's own name where it has one). ingest makes every
// Field filterable.
var FilterFields = map[string]FilterField{
	"identifier":        {Field: FieldIdentifier, Kind: KindString},
	"version":           {Field: FieldVersion, Kind: KindString},
	"type":              {Field: FieldType, Kind: KindType},
	"publisher":         {Field: FieldPublisherNames, Kind: KindList, Fold: true},
	"publisherVerified": {Field: FieldPublisherVerified, Kind: KindBool, Fold: true},
	"tags":              {Field: FieldTags, Kind: KindList},
	"skills":            {Field: FieldSkills, Kind: KindList},
	"capabilities":      {Field: FieldCapabilities, Kind: KindList},
	"protocols":         {Field: FieldProtocols, Kind: KindList, Fold: true},
	"compliance":        {Field: FieldCompliance, Kind: KindList, Fold: true},
	"status":            {Field: FieldStatus, Kind: KindString, Fold: true},
	"stale":             {Field: FieldStale, Kind: KindBool, Fold: true},
	"sourceCatalog":     {Field: FieldSourceCatalog, Kind: KindString},
	"updatedAt":         {Field: FieldUpdatedAtTs, Kind: KindTime},
	"indexedAt":         {Field: FieldIndexedAtTs, Kind: KindTime},
	"expiresAt":         {Field: FieldExpiresAtTs, Kind: KindTime},
	"languages":         {Field: FieldLanguages, Kind: KindList, Fold: true},
	"auth":              {Field: FieldAuth, Kind: KindList, Fold: true},
	// trust.level and health: a record without them (indexed before they
	// existed, or from a registry that does not say) counts as
	// Record.TrustLevel and Record.HealthStatus say.
	"trust.level": {Field: FieldTrustLevel, Kind: KindString, Fold: true, Values: TrustLevels},
	"health":      {Field: FieldHealthStatus, Kind: KindString, Fold: true, Values: HealthStatuses},
}

// FacetFields are the fields whose values POST /explore counts, by the name
// clients use for them. Meilisearch counts only filterable fields, so ingest
// makes these filterable too.
var FacetFields = map[string]string{
	"type":         FieldType,
	"publisher":    FieldPublisher,
	"tags":         FieldTags,
	"compliance":   FieldCompliance,
	"protocols":    FieldProtocols,
	"capabilities": FieldCapabilities,
	"skills":       FieldSkills,
	"languages":    FieldLanguages,
	"trust":        FieldTrustLevel,
	"health":       FieldHealthStatus,
}

// TrustLevel is the record's trust level: Trust.Level, or, for a record
// without a trust verdict, TrustDomain when its publisher is verified and
// TrustNone otherwise (the level the crawler would have given it).
func (r Record) TrustLevel() string {
	if r.Trust != nil && r.Trust.Level != "" {
		return r.Trust.Level
	}
	if r.PublisherVerified {
		return TrustDomain
	}
	return TrustNone
}

// HealthStatus is the record's health status: Health.Status, or
// HealthUnknown for a record never probed.
func (r Record) HealthStatus() string {
	if r.Health != nil && r.Health.Status != "" {
		return r.Health.Status
	}
	return HealthUnknown
}

// SortFields are the fields a browse can be ordered by, by the name clients
// use for them.
var SortFields = map[string]string{
	"identifier":  FieldIdentifier,
	"displayName": FieldDisplayName,
	"updatedAt":   FieldUpdatedAtTs,
	"indexedAt":   FieldIndexedAtTs,
}

// AccessFields are filterable index fields that only the server filters
// on (the caller's access, and the keys of a lookup under it), never
// clients: they are not in FilterFields.
var AccessFields = []string{FieldID, FieldIdentifierKey, FieldAliasKeys, FieldVisibility}

// FilterableFields returns the index fields of FilterFields, FacetFields
// and AccessFields, sorted, without repeats.
func FilterableFields() []string {
	out := slices.Clone(AccessFields)
	for _, f := range FilterFields {
		out = append(out, f.Field)
	}
	out = append(out, slices.Collect(maps.Values(FacetFields))...)
	slices.Sort(out)
	return slices.Compact(out)
}

// SortableFields returns the index fields of SortFields, sorted.
func SortableFields() []string {
	return slices.Sorted(maps.Values(SortFields))
}

// searchableFields are the fields Meilisearch searches, in the order Meilisearch's "attribute" ranking
// rule weighs them: a match earlier in the list ranks higher.
//   - displayName first: people search for an agent by its name.
//   - identifier next: a URN or package name typed verbatim should find its entry.
//   - capabilities, skillNames, tags, skills: what the agent does, said tersely
//     by the publisher; the strongest signal after the name.
//   - representativeQueries and examples: phrasings users actually type, so
//     they match queries well but are long and noisy, hence after the terms.
//   - description: long free prose, matches almost anything; weigh it low.
//   - publisher and host.displayName: "acme" should find acme's agents,
//     but a company name in a query is weaker than what the agent does.
//
// A record's tools (its endpoint's tools/list, or its server card's) are
// not searched here: the words of their names, titles and descriptions
// (ToolWords) are the searchable text of the tools index beside it
// (ToolsIndex), which each search queries in the same multi-search. Three
// names no document holds (reservedFields) stand last where the tools'
// fields stood: Meilisearch's attribute rule scores a match by its field's
// rank among all the searchable attributes, so dropping them moved every
// keyword score a little (make eval, the set alone: R@1 0.530 -> 0.527,
// P@5 0.308 -> 0.306; keyword only P@5 0.261 -> 0.249), off the scores the
// relevance model was fitted on.
var searchableFields = []string{
	FieldDisplayName,
	FieldIdentifier,
	FieldCapabilities,
	"skillNames",
	FieldTags,
	FieldSkills,
	"representativeQueries",
	"examples",
	"description",
	FieldPublisher,
	"host.displayName",
	reservedFields[0],
	reservedFields[1],
	reservedFields[2],
}

// reservedFields are searchable attribute names no document holds
// (searchableFields says why).
var reservedFields = [3]string{"reserved1", "reserved2", "reserved3"}

// ReservedField reports whether field is one of the searchable attributes
// no document holds (tests that index with fewer attributes leave them
// out).
func ReservedField(field string) bool {
	return slices.Contains(reservedFields[:], field)
}

// SearchableFields returns the index's searchable attributes in ranking
// order (a copy): ingest applies them, and tests build their indexes with
// them.
func SearchableFields() []string { return slices.Clone(searchableFields) }
