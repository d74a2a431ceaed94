package registryapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/filter"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// Page sizes of a list.
const (
	defaultLimit = 30
	maxLimit     = 100
	// maxNameMatches bounds the name matches a search lists first.
	maxNameMatches = 100
)

// listRequest is GET {v}/servers's parameters, validated.
type listRequest struct {
	cursor         cursor
	limit          int
	search         string
	updatedSince   time.Time
	version        string // "" (or latest): each server's latest; else that exact version
	includeDeleted bool
	access         []string
}

// parseList validates GET {v}/servers's query.
func parseList(r *http.Request) (listRequest, error) {
	q := r.URL.Query()
	lr := listRequest{limit: defaultLimit, search: strings.TrimSpace(q.Get("search")), access: door.AccessOf(r.Context())}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			return lr, door.Invalid("limit must be an integer from 1 to %d", maxLimit)
		}
		lr.limit = n
	}
	if v := q.Get("updated_since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return lr, door.Invalid("updated_since must be an RFC 3339 date-time, such as 2025-08-07T13:15:04Z")
		}
		lr.updatedSince = t
	}
	if v := q.Get("version"); v != "" && v != "latest" {
		lr.version = v
	}
	if v := q.Get("include_deleted"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return lr, door.Invalid("include_deleted must be true or false")
		}
		lr.includeDeleted = b
	}
	c, err := parseCursor(q.Get("cursor"), lr.search != "")
	if err != nil {
		return lr, err
	}
	lr.cursor = c
	return lr, nil
}

// filter is the listing's own filter: MCP servers, at the version asked,
// changed since updated_since (published or indexed then).
func (lr listRequest) filter() filter.Expr {
	f := filter.Any(normalize.FieldType, filter.TypeSpellings(normalize.TypeMCP))
	if lr.version != "" {
		f = filter.And(f, filter.Eq(normalize.FieldVersion, lr.version))
	}
	if !lr.updatedSince.IsZero() {
		f = filter.And(f, filter.Or(filter.Since(normalize.FieldUpdatedAtTs, lr.updatedSince), filter.Since(normalize.FieldIndexedAtTs, lr.updatedSince)))
	}
	return f
}

// handleList answers GET {v}/servers: every MCP server in identifier
// order, or, with search, the name matches first and then the rest of the
// ranked search.
func (d *Door) handleList(w http.ResponseWriter, r *http.Request) error {
	lr, err := parseList(r)
	if err != nil {
		return err
	}
	var items []record
	var next cursor
	if lr.search == "" {
		items, next, err = d.walk(r.Context(), lr)
	} else {
		items, next, err = d.searchPage(r.Context(), lr)
	}
	if err != nil {
		return err
	}
	out := ServerList{Servers: make([]ServerResponse, 0, len(items)), Metadata: ListMetadata{NextCursor: next.String()}}
	for _, rec := range items {
		out.Servers = append(out.Servers, d.response(rec))
	}
	out.Metadata.Count = len(out.Servers)
	door.WriteJSON(w, http.StatusOK, out)
	return nil
}

// walk lists a page of every server in identifier order after the cursor.
func (d *Door) walk(ctx context.Context, lr listRequest) ([]record, cursor, error) {
	page, err := d.engine.List(ctx, search.Listing{Filter: lr.filter(), Size: lr.limit + 1, IncludeStale: lr.includeDeleted,
		Access: lr.access, ByIdentifier: true, After: lr.cursor.after, Attributes: extraAttributes})
	if err != nil {
		return nil, cursor{}, err
	}
	items := records(page.Items)
	if len(items) <= lr.limit {
		return items, cursor{}, nil
	}
	items = items[:lr.limit]
	return items, cursor{phase: phaseWalk, after: items[len(items)-1].Identifier}, nil
}

// searchPage lists a page of a search: the servers whose name holds the
// text first, then the engine's ranked results for it (name matches left
// out), filling each page.
func (d *Door) searchPage(ctx context.Context, lr listRequest) ([]record, cursor, error) {
	names, err := d.names(ctx, lr)
	if err != nil {
		return nil, cursor{}, err
	}
	c := lr.cursor
	var items []record
	if c.phase != phaseRanked {
		from := min(c.offset, len(names))
		to := min(from+lr.limit, len(names))
		items = names[from:to]
		if to < len(names) {
			return items, cursor{phase: phaseNames, offset: to}, nil
		}
		c = cursor{phase: phaseRanked}
	}
	return d.fillRanked(ctx, lr, names, items, c)
}

// names are the name matches of lr's search, in identifier order.
func (d *Door) names(ctx context.Context, lr listRequest) ([]record, error) {
	items, err := d.engine.NameMatches(ctx, search.NameMatch{Text: lr.search, Filter: lr.filter(), Limit: maxNameMatches,
		Access: lr.access, Attributes: extraAttributes})
	if err != nil {
		return nil, err
	}
	return records(items), nil
}

// maxRankedPages bounds the engine's pages one list page reads.
const maxRankedPages = 3

// fillRanked fills items up to the page size from the engine's ranked
// search for lr's text, from where c points (a page token and how many of
// that page's results were listed already), leaving out names.
func (d *Door) fillRanked(ctx context.Context, lr listRequest, names, items []record, c cursor) ([]record, cursor, error) {
	for range maxRankedPages {
		if len(items) == lr.limit {
			return items, c, nil
		}
		ans, err := d.rankedPage(ctx, lr, c.token)
		if err != nil {
			return nil, cursor{}, err
		}
		for i := c.skip; i < len(ans.Hits); i++ {
			if len(items) == lr.limit {
				return items, cursor{phase: phaseRanked, token: c.token, skip: i}, nil
			}
			rec := recordOf(ans.Hits[i].Entry)
			if !rec.isMCP() || slices.ContainsFunc(names, func(n record) bool { return n.Identifier == rec.Identifier }) || !lr.changedSince(rec) {
				continue
			}
			items = append(items, rec)
		}
		if ans.PageToken == "" {
			return items, cursor{}, nil
		}
		c = cursor{phase: phaseRanked, token: ans.PageToken}
	}
	return items, c, nil
}

// rankedPage is the page of the engine's search for lr's text that token
// names ("" the first).
func (d *Door) rankedPage(ctx context.Context, lr listRequest, token string) (*search.Answer, error) {
	q := &search.Query{Text: lr.search, Mode: federation.ModeNone, PageSize: lr.limit, PageToken: token,
		IncludeStale: lr.includeDeleted, Access: lr.access, Attributes: extraAttributes}
	if err := q.AddFilter("type", []string{normalize.TypeMCP}); err != nil {
		return nil, err
	}
	if lr.version != "" {
		if err := q.AddFilter("version", []string{lr.version}); err != nil {
			return nil, err
		}
	}
	return d.engine.Search(ctx, q, nil)
}

// changedSince reports whether rec passes updated_since (the ranked search
// has no filter for it).
func (lr listRequest) changedSince(rec record) bool {
	if lr.updatedSince.IsZero() {
		return true
	}
	for _, ts := range []string{rec.UpdatedAt, rec.IndexedAt} {
		if t, err := time.Parse(time.RFC3339, ts); err == nil && !t.Before(lr.updatedSince) {
			return true
		}
	}
	return false
}

// records reads engine items, keeping MCP servers only.
func records(items []map[string]json.RawMessage) []record {
	out := make([]record, 0, len(items))
	for _, it := range items {
		if rec := recordOf(it); rec.isMCP() {
			out = append(out, rec)
		}
	}
	return out
}

// lookup finds the server a name names, as the caller may see it: a
// record whose identifier is the name (an MCP registry's), else the
// catalog entry whose built name it is.
func (d *Door) lookup(ctx context.Context, name string, access []string) (record, error) {
	item, err := d.engine.Agent(ctx, name, access)
	if err == nil {
		if rec := recordOf(item); rec.isMCP() {
			return rec, nil
		}
		return record{}, errServerNotFound
	}
	if search.KindOf(err) != search.KindNotFound {
		return record{}, err
	}
	publisher := namespaceDomain(name)
	f := filter.And(filter.Any(normalize.FieldType, filter.TypeSpellings(normalize.TypeMCP)), filter.Eq(normalize.FieldPublisherNames, publisher))
	after := ""
	for range maxLookupPages {
		page, err := d.engine.List(ctx, search.Listing{Filter: f, Size: maxLimit, Access: access, ByIdentifier: true, After: after, Attributes: extraAttributes})
		if err != nil {
			return record{}, err
		}
		for _, rec := range records(page.Items) {
			if rec.Name() == name {
				return rec, nil
			}
		}
		if len(page.Items) < maxLimit {
			break
		}
		after = recordOf(page.Items[len(page.Items)-1]).Identifier
	}
	return record{}, errServerNotFound
}

// maxLookupPages bounds the pages of one publisher's servers a lookup by
// built name reads.
const maxLookupPages = 20

// Cursor phases: walking every server, listing a search's name matches,
// then its ranked results.
const (
	phaseWalk   = "k"
	phaseNames  = "n"
	phaseRanked = "r"
)

// cursor is where a list continues; its String is opaque to clients.
type cursor struct {
	phase  string
	after  string // phaseWalk: the last identifier listed
	offset int    // phaseNames: name matches listed so far
	token  string // phaseRanked: the engine's page token ("" for the first page)
	skip   int    // phaseRanked: results of that page listed already
}

// String is the cursor as clients hold it; "" when there is no next page.
func (c cursor) String() string {
	var v string
	switch c.phase {
	case "":
		return ""
	case phaseWalk:
		v = c.after
	case phaseNames:
		v = strconv.Itoa(c.offset)
	case phaseRanked:
		v = strconv.Itoa(c.skip) + ":" + c.token
	}
	return base64.RawURLEncoding.EncodeToString([]byte(c.phase + ":" + v))
}

// parseCursor reads a client's cursor; searching says whether the list has
// a search (a cursor of the other kind is refused).
func parseCursor(s string, searching bool) (cursor, error) {
	if s == "" {
		return cursor{}, nil
	}
	bad := door.Invalid("cursor is not one this registry returned; use metadata.nextCursor as given")
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, bad
	}
	phase, v, ok := strings.Cut(string(raw), ":")
	if !ok || (phase == phaseWalk) == searching {
		return cursor{}, bad
	}
	c := cursor{phase: phase}
	switch phase {
	case phaseWalk:
		c.after = v
	case phaseNames:
		if c.offset, err = strconv.Atoi(v); err != nil || c.offset < 0 {
			return cursor{}, bad
		}
	case phaseRanked:
		skip, token, ok := strings.Cut(v, ":")
		if c.skip, err = strconv.Atoi(skip); !ok || err != nil || c.skip < 0 {
			return cursor{}, bad
		}
		c.token = token
	default:
		return cursor{}, bad
	}
	return c, nil
}
