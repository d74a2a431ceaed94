package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/fixtures/mcpregistry"
	"github.com/agentfinder/agentfinder/normalize"
)

const (
	regHost    = "registry.walk.test"
	legacyHost = "legacy.walk.test"
)

// registryStack is a stack whose web serves a fixture MCP registry (the
// real records over v0.1) and one in the first API's shape.
type registryStack struct {
	*stack
	reg *mcpregistry.Registry
}

func newRegistryStack(t *testing.T, name string) *registryStack {
	t.Helper()
	reg, err := mcpregistry.New(mcpregistry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := mcpregistry.New(mcpregistry.Config{Legacy: true})
	if err != nil {
		t.Fatal(err)
	}
	st := newStack(t, name, stackOptions{
		webOpts: fixtures.Options{NoWorld: true, Handlers: map[string]http.Handler{regHost: reg, legacyHost: legacy}},
		crawler: func(c *crawler.Config) {
			quickRetries(c)
			c.RegistryPageSize = 50
		},
	})
	return &registryStack{stack: st, reg: reg}
}

// walk crawls one registry seed and returns its report entry.
func (rs *registryStack) walk(t *testing.T, host string) crawler.CatalogReport {
	t.Helper()
	rep := rs.crawl(t, []string{"registry https://" + host})
	for _, c := range rep.Catalogs {
		if c.Via == normalize.ViaRegistry {
			return c
		}
	}
	t.Fatalf("no registry walk in the report: %+v", rep.Catalogs)
	return crawler.CatalogReport{}
}

// identifiers returns the identifiers the index holds, sorted.
func (rs *registryStack) identifiers(t *testing.T) []string {
	t.Helper()
	var res meilisearch.DocumentsResult
	if err := rs.s.Client.Index(rs.index).GetDocumentsWithContext(t.Context(), &meilisearch.DocumentsQuery{
		Limit: 5000, Fields: []string{normalize.FieldIdentifier}}, &res); err != nil {
		t.Fatalf("documents: %v", err)
	}
	var out []string
	for _, h := range res.Results {
		var id string
		_ = json.Unmarshal(h["identifier"], &id)
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func (rs *registryStack) doc(t *testing.T, identifier string) *normalize.Document {
	t.Helper()
	var d normalize.Document
	if err := rs.s.Client.Index(rs.index).GetDocumentWithContext(t.Context(), normalize.DocID(identifier), nil, &d); err != nil {
		return nil
	}
	return &d
}

// listQueries returns the queries of the list requests host received.
func listQueries(w *fixtures.Web, host string) []url.Values {
	var out []url.Values
	for _, r := range w.RequestsFor(host) {
		if strings.HasSuffix(r.Path, "/servers") {
			q, _ := url.ParseQuery(r.RawQuery)
			out = append(out, q)
		}
	}
	return out
}

// TestRegistryWalk: a full walk indexes one record per server name, under
// the name; a later walk asks only for changes (updated_since) and applies
// them: a new server, a new latest version, a deprecated server kept and
// marked, a deleted one removed, everything else untouched.
func TestRegistryWalk(t *testing.T) {
	rs := newRegistryStack(t, "registry-walk")
	c := rs.walk(t, regHost)
	names := rs.reg.Names()
	if c.Status != normalize.StatusOK || c.Records != len(names) || len(c.Problems) != 7 {
		t.Fatalf("full walk: %s %s %s, %d records (want %d), %d problems (want the 7 servers without a name)",
			c.Status, c.Reason, c.Error, c.Records, len(names), len(c.Problems))
	}
	if got := rs.identifiers(t); !slices.Equal(got, names) {
		t.Fatalf("index holds %d identifiers, the registry lists %d names", len(got), len(names))
	}
	d := rs.doc(t, "io.github.21st-dev/magic-mcp")
	if d == nil || d.Publisher != "github.com/21st-dev" || d.Trust == nil || d.Trust.Level != normalize.TrustRegistry ||
		d.Source.Via != normalize.ViaRegistry || len(d.Data) == 0 || d.Type != normalize.TypeMCP {
		t.Fatalf("magic-mcp: %+v", d)
	}
	res, err := rs.s.Client.Index(rs.index).SearchWithContext(t.Context(), "airtable", &meilisearch.SearchRequest{Limit: 5})
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("search airtable: %v, %d hits", err, len(res.Hits))
	}

	ch := rs.reg.Change(3)
	rs.w.ResetRequests()
	if c := rs.walk(t, regHost); c.Status != normalize.StatusOK {
		t.Fatalf("incremental walk: %+v", c)
	}
	qs := listQueries(rs.w, regHost)
	if len(qs) != 1 || qs[0].Get("updated_since") == "" {
		t.Fatalf("incremental walk asked %v; want one page with updated_since", qs)
	}
	for _, n := range ch.Updated {
		if d := rs.doc(t, n); d == nil || !strings.HasPrefix(d.Version, "10") || len(d.Versions) != 2 {
			t.Errorf("updated %s: %+v", n, d)
		}
	}
	if d := rs.doc(t, ch.Deprecated[0]); d == nil || d.Status != normalize.RegistryDeprecated {
		t.Errorf("deprecated %s: %+v", ch.Deprecated[0], d)
	}
	if d := rs.doc(t, ch.Deleted[0]); d != nil {
		t.Errorf("deleted %s is still indexed", ch.Deleted[0])
	}
	if d := rs.doc(t, ch.New[0]); d == nil {
		t.Errorf("new %s is not indexed", ch.New[0])
	}
	if got, want := rs.identifiers(t), rs.reg.Names(); !slices.Equal(got, want) {
		t.Errorf("after the changes the index holds %d identifiers, the registry lists %d names", len(got), len(want))
	}
}

// TestRegistryWalkResumes: a walk that fails half way deletes nothing and
// the next run goes on from its cursor; a 429 burst is waited out; a
// cursor loop and a garbage answer stop a walk without losing a record.
func TestRegistryWalkResumes(t *testing.T) {
	rs := newRegistryStack(t, "registry-resume")
	rs.reg.FailAfter(3)
	c := rs.walk(t, regHost)
	if c.Status != normalize.StatusFailed || c.Records == 0 {
		t.Fatalf("walk failing after 3 pages: %+v", c)
	}
	half := rs.identifiers(t)
	if len(half) != c.Records {
		t.Fatalf("%d records handed on, %d indexed", c.Records, len(half))
	}

	rs.reg.Heal()
	rs.reg.TooMany(2)
	rs.w.ResetRequests()
	if c := rs.walk(t, regHost); c.Status != normalize.StatusOK {
		t.Fatalf("resumed walk: %+v", c)
	}
	qs := listQueries(rs.w, regHost)
	if len(qs) == 0 || qs[0].Get("cursor") == "" || qs[0].Get("updated_since") != "" {
		t.Fatalf("resumed walk started with %v; want the failed walk's cursor", qs)
	}
	if got := rs.identifiers(t); !slices.Equal(got, rs.reg.Names()) || len(got) <= len(half) {
		t.Fatalf("after resuming: %d identifiers, want %d", len(got), len(rs.reg.Names()))
	}
	if n := rs.w.RequestsFor(regHost); countStatus(n, http.StatusTooManyRequests) != 2 {
		t.Errorf("the 429 burst was not met (%d answers 429)", countStatus(n, http.StatusTooManyRequests))
	}

	all := rs.identifiers(t)
	for name, misbehave := range map[string]func(){
		"garbage":     func() { rs.reg.Garbage("<html>not a server list</html>") },
		"not a list":  func() { rs.reg.Garbage(`{"servers": {"a": 1}}`) },
		"failing now": func() { rs.reg.FailAfter(0) },
	} {
		rs.reg.Change(2)
		misbehave()
		if c := rs.walk(t, regHost); c.Status != normalize.StatusFailed {
			t.Errorf("%s: walk %+v, want failed", name, c)
		}
		rs.reg.Heal()
		if got := rs.identifiers(t); !slices.Equal(got, all) {
			t.Errorf("%s: the index changed (%d identifiers, had %d)", name, len(got), len(all))
		}
		rs.walk(t, regHost) // catch up
		all = rs.identifiers(t)
	}

	// A full walk (new groups: other readers) that meets a cursor loop.
	rs.reg.LoopAfter(2)
	rep := rs.crawl(t, []string{"registry https://" + regHost + " groups=dev"})
	if c := rep.Catalogs[0]; c.Status != normalize.StatusFailed || c.Reason != crawler.ReasonCursorLoop {
		t.Errorf("cursor loop: %+v", c)
	}
	if got := rs.identifiers(t); len(got) != len(all) {
		t.Errorf("a looping walk changed the index: %d identifiers, had %d", len(got), len(all))
	}
}

func countStatus(reqs []fixtures.Request, status int) int {
	n := 0
	for _, r := range reqs {
		if r.Status == status {
			n++
		}
	}
	return n
}

// TestRegistryLegacyShape: a registry with only /v0/servers, answering in
// the first API's snake_case shape, is walked too.
func TestRegistryLegacyShape(t *testing.T) {
	rs := newRegistryStack(t, "registry-legacy")
	c := rs.walk(t, legacyHost)
	if c.Status != normalize.StatusOK || c.Records != 464 {
		t.Fatalf("legacy walk: %+v", c)
	}
	d := rs.doc(t, "io.github.21st-dev/magic-mcp")
	if d == nil || len(d.Bindings) != 1 || d.Bindings[0].Package != "npm/@21st-dev/magic@0.0.46" {
		t.Fatalf("magic-mcp from the legacy shape: %+v", d)
	}
}
