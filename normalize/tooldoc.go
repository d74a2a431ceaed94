package normalize

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The tools index: a second index beside each records index, holding one
// document per record whose tools are known (ToolDocument). Its one
// searchable field is the distinct words of the record's tools (ToolWords);
// the records index does not search the tools' text, so a search's term
// sub-queries rank documents without the tools' words, and one more
// sub-query of the same multi-search, over the tools index, finds the
// servers whose tools answer a request. A tool document carries its
// record's filterable fields too, so that the one filter of a search
// (access, liveness, expiry, type, publisher, ...) applies to it exactly
// as to its record: ingest writes, patches and deletes the two together.
// It carries the record's tool list too (FieldTools, stored, not
// searched), whose one home it is (RecordDocument), and which of the
// tool words each tool holds (FieldToolWordSets): a search's tools queries
// read the words and word sets, which tell the tools matching it; the
// lists are read for the servers a page names a tool of, and searchapi
// joins them back on every whole record it shows.
// And the list its server card declares when that is not the one shown
// (FieldDeclaredTools, stored, never searched nor retrieved by searches):
// ingest's fallback when the endpoint stops listing.

// ToolsIndex is the uid of the tools index beside the records index index.
func ToolsIndex(index string) string { return index + "_tools" }

// FieldToolWords is the tools index's searchable field: ToolWords of the
// record's tools.
const FieldToolWords = "toolWords"

// ToolWords returns the distinct words (Words) of the ToolText of every
// tool of ts, in the order they first appear, separated by spaces ("" for
// none): what the tools index searches, each word once a server. Its
// length is bounded by the tool list's own bounds.
func ToolWords(ts *ToolSet) string {
	words, _ := ToolWordsAndSets(ts)
	return words
}

// ToolDisplayedFields are the members of a tool document a search of the
// tools index retrieves, and the only ones it can (the index's displayed
// attributes, ingest's ToolsIndexSettings): the identifier a tool hit is
// joined on, its ToolWords and ToolWordSets, and the tags a preference
// boosts. Meilisearch turns every displayed member of each hit into JSON,
// whatever the search retrieves, and the tool lists are most of a tool
// document: they are read by the documents route (by id or filter, under
// the caller's access), which the displayed attributes do not limit. A
// member a search is to retrieve from the tools index must be added here.
func ToolDisplayedFields() []string {
	return []string{FieldIdentifier, FieldToolWords, FieldToolWordSets, FieldTags}
}

// FieldToolDocVersion is the tools index's member telling which
// ToolDocVersion wrote a tool document (absent: 1, before the documents
// carried the tool lists).
const FieldToolDocVersion = "toolDocVersion"

// ToolDocVersion is the version of what ToolDocument writes: a tool
// document of an older version is written again from its record when
// ingest starts. (2: with the tool list; 3: with the ToolsKey; 4: with the
// declared tools, FieldDeclaredTools, which records stored before; 5: with
// the tools' word sets, FieldToolWordSets.)
const ToolDocVersion = 5

// ToolDocField reports whether a tool document carries the record field
// field (a top-level document member or a dotted path below one): the
// document's id and identifier and every filterable field.
func ToolDocField(field string) bool {
	root, _, _ := strings.Cut(field, ".")
	return toolDocRoots()[root]
}

// toolDocRoots are the top-level members a tool document keeps of its
// record.
var toolDocRoots = sync.OnceValue(func() map[string]bool {
	roots := map[string]bool{FieldID: true, FieldIdentifier: true}
	for _, f := range FilterableFields() {
		r, _, _ := strings.Cut(f, ".")
		roots[r] = true
	}
	return roots
})

// ToolDocument returns the tools index document of d: its id, identifier
// and filterable fields and its tools (FieldTools), as d holds them, the
// tools its server card declares (FieldDeclaredTools) when they are not
// those it shows (StoredDeclared reads them back), the ToolWords and
// ToolWordSets (ToolWordsAndSets) and ToolsKey of its tools, and its
// ToolDocVersion.
// It returns nil and no error when d lists no tools (a record without tools
// has no tool document), and an error when d cannot be encoded: the caller
// then keeps the tool document it has rather than reading "no tools".
func ToolDocument(d *Document) (map[string]json.RawMessage, error) {
	if d.Tools == nil || len(d.Tools.Items) == 0 {
		return nil, nil
	}
	c := *d
	c.Vectors = nil
	key := ToolsKey(d.Tools)
	if d.DeclaredTools == d.Tools || ToolsKey(d.DeclaredTools) == key {
		c.DeclaredTools = nil // the list shown: not stored twice
	}
	raw, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("tool document of %s: %w", d.ID, err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, fmt.Errorf("tool document of %s: %w", d.ID, err)
	}
	for k := range all {
		if !ToolDocField(k) && k != FieldTools && k != FieldDeclaredTools {
			delete(all, k)
		}
	}
	words, sets := ToolWordsAndSets(d.Tools)
	all[FieldToolWords], err = json.Marshal(words)
	if err != nil {
		return nil, fmt.Errorf("tool document of %s: %w", d.ID, err)
	}
	all[FieldToolWordSets], _ = json.Marshal(sets) // digits and spaces: always encodes
	all[FieldToolDocVersion] = json.RawMessage(strconv.Itoa(ToolDocVersion))
	all[FieldToolsKey], _ = json.Marshal(key) // a string always encodes
	return all, nil
}

// StoredDeclared returns the tools a record's server card declares, as its
// tool document holds them (tools, its FieldTools; declared, its
// FieldDeclaredTools): declared when it holds them, else its tools when
// they are the declared ones (ToolDocument stores them once), else nil.
func StoredDeclared(tools, declared *ToolSet) *ToolSet {
	if declared != nil {
		return declared
	}
	if tools != nil && tools.Source == ToolsDeclared {
		return tools
	}
	return nil
}

// ToolSearchableFields returns the tools index's searchable attributes (a
// copy).
func ToolSearchableFields() []string { return slices.Clone(toolSearchableFields) }

var toolSearchableFields = []string{FieldToolWords}

// RecordDocument returns what the records index stores of d: d without its
// tools, whose one home is the tools index (ToolDocument), and with their
// ToolsKey. A search's queries over the records then read smaller
// documents; searchapi joins the tools back on every whole record it
// shows, and ingest keeps them in memory (embeddings, the tool document)
// and in the tools index. The tools its server card declares
// (Document.DeclaredTools) are left out too: the tool document keeps them
// (ToolDocument), never read by searches, for ingest to fall back on when
// the record's endpoint stops listing.
func RecordDocument(d *Document) *Document {
	c := *d
	c.ToolsKey = ToolsKey(d.Tools)
	c.Tools, c.DeclaredTools = nil, nil
	return &c
}

// FieldToolsKey is the member of a stored record and of its tool document
// holding ToolsKey of the record's tools: the two are in step when they
// hold the same.
const FieldToolsKey = "toolsKey"

// ToolsKey is the content hash of the tool list ts ("" when it lists no
// tools).
func ToolsKey(ts *ToolSet) string {
	if ts == nil || len(ts.Items) == 0 {
		return ""
	}
	b, err := json.Marshal(ts)
	if err != nil {
		return ""
	}
	return ContentHash(b)
}
