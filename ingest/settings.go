package ingest

import (
	"context"
	"slices"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/normalize"
)

// rankingRules: Meilisearch's defaults, with "attribute" moved before
// "proximity". Agent entries are short fields, not prose: a query word found
// in the name or capabilities matters more than two words sitting close
// together in a long description. "sort" comes after the relevance rules so
// an explicit sort only breaks ties when there is a query, and orders
// everything when browsing with an empty query. "exactness" last: exact word
// matches break remaining ties.
var rankingRules = []string{"words", "typo", "attribute", "proximity", "sort", "exactness"}

// typoTolerance keeps typos on (users misspell "calender", "wether") with
// Meilisearch's default word-size thresholds, but off where a typo would
// match the wrong thing: identifiers and publishers are exact names (a typo
// of "acme.test" must not find "acne.test"), and numbers are versions or
// ids. These attributes are still searchable; they just require exact words.
var typoTolerance = meilisearch.TypoTolerance{
	Enabled:             true,
	MinWordSizeForTypos: meilisearch.MinWordSizeForTypos{OneTypo: 5, TwoTypos: 9},
	DisableOnWords:      []string{},
	DisableOnAttributes: []string{normalize.FieldIdentifier, normalize.FieldPublisher},
	DisableOnNumbers:    true,
}

// maxValuesPerFacet is enough for a tag or publisher facet list on a page.
const maxValuesPerFacet = 200

// proximityPrecision "byAttribute": the proximity rule only asks whether
// query words share an attribute, not how many words apart they are. Word
// distances are the most expensive data Meilisearch keeps up to date: with
// "byWord" (the default) a one-document update on a 100,000-record index
// took about 195 ms of Meilisearch task time, with "byAttribute" about
// 135 ms (measured in one run, facetSearch already off). Our fields are short
// and "attribute" already ranks before "proximity", so little is lost.
const proximityPrecision = meilisearch.ByAttribute

// desiredSettings returns the index settings for an embedder of dims
// dimensions (0: none).
func desiredSettings(dims int) *meilisearch.Settings {
	tt := typoTolerance
	s := &meilisearch.Settings{
		RankingRules:         slices.Clone(rankingRules),
		SearchableAttributes: normalize.SearchableFields(),
		FilterableAttributes: normalize.FilterableFields(),
		SortableAttributes:   normalize.SortableFields(),
		TypoTolerance:        &tt,
		Pagination:           &meilisearch.Pagination{MaxTotalHits: normalize.MaxTotalHits},
		Faceting:             &meilisearch.Faceting{MaxValuesPerFacet: maxValuesPerFacet},
		ProximityPrecision:   proximityPrecision,
		// FacetSearch stays false: /explore counts facet values (facet
		// distribution) but nothing searches within them, and keeping the
		// facet-search structures cost about 30 ms per one-document update
		// on a 100,000-record index (225 ms -> 195 ms task time). The field
		// is omitted from a settings update when false, so applySettings
		// writes it on its own.
		FacetSearch: false,
	}
	if dims > 0 {
		s.Embedders = map[string]meilisearch.Embedder{
			normalize.EmbedderName: {Source: meilisearch.UserProvidedEmbedderSource, Dimensions: dims},
		}
	}
	return s
}

// settingsMatch reports whether cur already has every setting of want, so a
// restart does not enqueue a settings task (which would reindex nothing but
// still cost a task and, for embedders, possibly drop vectors).
func settingsMatch(cur, want *meilisearch.Settings) bool {
	sameSet := func(a, b []string) bool {
		a, b = slices.Clone(a), slices.Clone(b)
		slices.Sort(a)
		slices.Sort(b)
		return slices.Equal(a, b)
	}
	if !slices.Equal(cur.RankingRules, want.RankingRules) ||
		!slices.Equal(cur.SearchableAttributes, want.SearchableAttributes) ||
		!sameSet(cur.FilterableAttributes, want.FilterableAttributes) ||
		!sameSet(cur.SortableAttributes, want.SortableAttributes) ||
		want.DisplayedAttributes != nil && !sameSet(cur.DisplayedAttributes, want.DisplayedAttributes) {
		return false
	}
	if cur.ProximityPrecision != want.ProximityPrecision || cur.FacetSearch != want.FacetSearch {
		return false
	}
	if want.PrefixSearch != nil && (cur.PrefixSearch == nil || *cur.PrefixSearch != *want.PrefixSearch) {
		return false
	}
	if cur.Pagination == nil || cur.Pagination.MaxTotalHits != want.Pagination.MaxTotalHits {
		return false
	}
	if cur.Faceting == nil || cur.Faceting.MaxValuesPerFacet != want.Faceting.MaxValuesPerFacet {
		return false
	}
	ct, wt := cur.TypoTolerance, want.TypoTolerance
	if ct == nil || ct.Enabled != wt.Enabled || ct.MinWordSizeForTypos != wt.MinWordSizeForTypos ||
		ct.DisableOnNumbers != wt.DisableOnNumbers || !sameSet(ct.DisableOnAttributes, wt.DisableOnAttributes) ||
		!sameSet(ct.DisableOnWords, wt.DisableOnWords) {
		return false
	}
	return len(want.Embedders) == 0 || embeddersMatch(cur, want)
}

// droppedEmbedder reports whether cur has an embedder want does not name.
func droppedEmbedder(cur, want *meilisearch.Settings) bool {
	for name := range cur.Embedders {
		if _, ok := want.Embedders[name]; !ok {
			return true
		}
	}
	return false
}

// embeddersMatch reports whether cur has exactly want's embedders.
func embeddersMatch(cur, want *meilisearch.Settings) bool {
	if len(cur.Embedders) != len(want.Embedders) {
		return false
	}
	for name, w := range want.Embedders {
		c, ok := cur.Embedders[name]
		if !ok || c.Source != w.Source || c.Dimensions != w.Dimensions {
			return false
		}
	}
	return true
}

// settingsChange is what applySettings did: whether it wrote settings,
// whether it added or resized an embedder (the documents need new
// vectors), and the userProvided embedders it found and left alone (want
// names none: see applySettings).
type settingsChange struct {
	changed, embeddersChanged bool
	kept                      []string
	// storeTask is the uid of the vector store change enqueued (0: none).
	storeTask int64
}

// applySettings brings index's settings to want, writing only what differs.
// Embedders belong to the writers that embed: when want names none (a
// writer without the model, such as a crawl beside a serve that embeds),
// the index's embedders stay as they are and their names come back in
// kept, for the writer's documents to opt out of (Meilisearch 1.21 refuses
// a document without vectors for a userProvided embedder). When want adds
// or resizes an embedder, beforeEmbedders runs first (if set): Meilisearch
// refuses a userProvided embedder while documents lack vectors for it, so
// the caller opts existing documents out with null vectors.
//
// store, when not empty, is the vector store the index's embedders should
// use (see vectorStore and setVectorStore): it is set while the index has
// no embedder (before one is added, or after the embedders of an old
// layout are reset) or, for an index whose embedder stays, moved only when
// that embedder holds vectors.
func (s *store) applySettings(ctx context.Context, index string, want *meilisearch.Settings, store string, beforeEmbedders func(ctx context.Context) error) (settingsChange, error) {
	var cur *meilisearch.Settings
	err := s.retry(ctx, "get settings of "+index, func(ctx context.Context) error {
		var err error
		cur, err = s.client.Index(index).GetSettingsWithContext(ctx)
		return err
	})
	if err != nil {
		return settingsChange{}, err
	}
	res := settingsChange{kept: keptEmbedders(cur, want)}
	if settingsMatch(cur, want) {
		if store != "" {
			res.storeTask, err = s.setVectorStore(ctx, index, store, len(cur.Embedders) > 0)
		}
		return res, err
	}
	res.changed = true
	res.embeddersChanged = !embeddersMatch(cur, want) && len(want.Embedders) > 0
	if res.embeddersChanged && beforeEmbedders != nil {
		if err := beforeEmbedders(ctx); err != nil {
			return settingsChange{}, err
		}
	}
	if len(want.Embedders) > 0 && droppedEmbedder(cur, want) {
		// A settings update merges embedders: one want no longer names
		// (the layout's previous name, normalize.EmbedderName) must be
		// reset, or every start would find the settings changed.
		err := s.write(ctx, "reset embedders of "+index, func(ctx context.Context) (*meilisearch.TaskInfo, error) {
			return s.client.Index(index).ResetEmbeddersWithContext(ctx)
		})
		if err != nil {
			return settingsChange{}, err
		}
		cur.Embedders = nil
	}
	if store != "" && len(want.Embedders) > 0 {
		if res.storeTask, err = s.setVectorStore(ctx, index, store, len(cur.Embedders) > 0); err != nil {
			return settingsChange{}, err
		}
	}
	// want.Embedders nil is left out of the update, which keeps the
	// index's embedders.
	err = s.write(ctx, "update settings of "+index, func(ctx context.Context) (*meilisearch.TaskInfo, error) {
		return s.client.Index(index).UpdateSettingsWithContext(ctx, want)
	})
	if err != nil {
		return settingsChange{}, err
	}
	if cur.FacetSearch != want.FacetSearch {
		// UpdateSettings drops facetSearch when it is false (omitempty).
		err = s.write(ctx, "update facet search of "+index, func(ctx context.Context) (*meilisearch.TaskInfo, error) {
			return s.client.Index(index).UpdateFacetSearchWithContext(ctx, want.FacetSearch)
		})
		if err != nil {
			return settingsChange{}, err
		}
	}
	return res, nil
}

// keptEmbedders names cur's userProvided embedders when want names no
// embedder (they stay; documents must opt out of them), sorted; nil
// otherwise. Embedders of other sources embed documents themselves.
func keptEmbedders(cur, want *meilisearch.Settings) []string {
	if len(want.Embedders) > 0 {
		return nil
	}
	var kept []string
	for name, e := range cur.Embedders {
		if e.Source == meilisearch.UserProvidedEmbedderSource {
			kept = append(kept, name)
		}
	}
	slices.Sort(kept)
	return kept
}
