package web

import (
	"net/url"
	"strconv"
	"time"

	"github.com/agentfinder/agentfinder/searchapi/door"
)

// Page is what every page's layout needs.
type Page struct {
	// Title is the document title (the site name is appended).
	Title string
	// Query fills the search box in the header.
	Query string
	// Federation is the federation choice the header form keeps ("" is auto).
	Federation string
	// Hidden are the filters the header form carries to the next search.
	Hidden []Param
	// Section marks the current navigation entry: "search" or "about".
	Section string
}

// Param is one URL query parameter.
type Param struct{ Name, Value string }

// SearchView is the home page (Searched false) and the results page.
type SearchView struct {
	Page
	Searched bool
	Results  []Result
	// Facets are the filter groups with counts, in display order.
	Facets []FacetGroup
	// Toggles are the on/off filters: verified publishers, signed, live.
	Toggles []FacetValue
	// Active lists the filters in force, each with a link that removes it.
	Active    []FacetValue
	Referrals []Referral
	Upstreams []Upstream
	// Notice is a message above the results (a dead upstream, the last page).
	Notice string
	// PageNum is the 1-based page shown; Prev and Next link its neighbours
	// ("" when there is none).
	PageNum    int
	Prev, Next string
	// Start is the number of the page's first result.
	Start int
	// Count says how many results the search has ("3 results", "more
	// than 10 results"); "" before a search.
	Count string
	// Examples are searches offered on the home page.
	Examples []FacetValue
	// Stats is the home page's one-line summary of the index ("" when the
	// index could not say).
	Stats string
}

// FacetGroup is one facet: a heading and its values.
type FacetGroup struct {
	Name   string // "Type", "Publisher", ...
	Param  string // URL parameter it sets
	Values []FacetValue
}

// FacetValue is one choice: its label, count, whether it is in force, and
// the URL that toggles it.
type FacetValue struct {
	Label    string
	Count    int
	Selected bool
	URL      string
}

// Referral is a registry to try ("also try these registries").
type Referral struct {
	Name, Description, URL string // URL is "" when not http(s)
}

// Upstream is one upstream registry's outcome in a federated search.
type Upstream struct {
	Registry  string
	Status    string // ok, timeout, error, skipped
	Results   int
	LatencyMS int64
	Error     string
}

// Failed reports an upstream that did not answer well.
func (u Upstream) Failed() bool { return u.Status != "ok" }

// Result is one search result as the page shows it. Every string is
// catalog text, escaped by the templates; URLs are "" unless http(s).
type Result struct {
	Identifier  string
	Name        string
	Description string // one line
	TypeLabel   string
	TypeClass   string
	DetailURL   string // this registry's page for it ("" for upstream hits)
	Publisher   string
	Verified    bool
	// Trust and Health are the record's trust and endpoint health, shown
	// beside the relevance they do not enter.
	Trust      TrustView
	Health     HealthView
	Compliance []string
	Tags       []string
	// Capabilities are the published capabilities.
	Capabilities []string
	// Match is the representative query or example that matched, with the
	// query's words marked; MatchKind says which of the two it is.
	Match     []Segment
	MatchKind string
	// Source names the registry that supplied the result; SourceURL links it.
	Source, SourceURL string
	// Indexed is the freshness in words ("3 hours ago"); IndexedAt is the
	// same moment for a <time> element.
	Indexed   string
	IndexedAt string
	// Relevance is the supplying registry's score, 0-100: how well the entry
	// matches the words, not how far it can be trusted.
	Relevance int
	Local     bool
}

// TrustView is a record's trust as the pages show it.
type TrustView struct {
	Level string // signed, domain or none
	Label string // in words
	// Short is what a result line says: the level when it adds to the
	// publisher's verified mark (signed, or a check that failed), else "".
	Short    string
	Signer   string   // the DID that signed (level signed) or failed to
	Checked  string   // how long ago it was checked ("" when unknown)
	At       string   // the same moment for a <time> element
	Problems []string // what failed, in words with the code
}

// HealthView is a record's endpoint health as the pages show it.
type HealthView struct {
	Status  string // up, down, auth_required, not_mcp, template or unknown
	Label   string // in words
	Checked string // how long ago it was probed ("" when never)
	At      string
	Latency int64 // ms, for up
	Detail  string
}

// DetailView is an entry's page.
type DetailView struct {
	Page
	Result
	FullDescription string
	ArtifactURL     string
	Version         string
	UpdatedAt       string
	Status          string
	Bindings        []door.Binding
	Skills          []string
	Examples        []string
	Queries         []string
	Attestations    []Attestation
	TrustIdentity   string
	TrustJSON       string // the trust manifest, indented
	Provenance      Provenance
	Use             UseIt
	// Tools are the server's tools (read from its endpoint, or declared
	// by its server card), and ToolsNote says which and when.
	Tools      []ToolView
	ToolsNote  string
	RecordJSON string // the whole record, indented
	JSONURL    string // curl command target
}

// ToolView is one tool on an entry's page. Its text is the server's:
// the template escapes it like any text.
type ToolView struct {
	Name, Description string
	Params            []string
	Hints             string // "read-only", "destructive"
	Marked            bool   // its text tries to instruct the reader
}

// Attestation is one trust manifest attestation.
type Attestation struct {
	Type, URL string
}

// Provenance says where the record came from.
type Provenance struct {
	Catalog    string
	CatalogURL string
	Via        string
	Path       []string
	Fetched    string
	FetchedAt  string
}

// UseIt is the "use it" box: how to connect to the entry.
type UseIt struct {
	// MCPConfig is a ready-to-paste MCP client configuration of local
	// commands, as every client takes ("" when the entry lists no remote
	// or package); remotes go through the mcp-remote bridge.
	MCPConfig string
	// RemoteConfig is the same for clients that connect to remote servers
	// themselves ("type": "http"); "" when the entry has no remote.
	RemoteConfig string
	// CardURL and Endpoints are an A2A agent's card and endpoints.
	CardURL   string
	Endpoints []string
	// MCPServers counts the servers in MCPConfig.
	MCPServers int
	// Install lists what to install first (a crate, a bundle to download).
	Install []string
	// Kind is "mcp", "a2a" or "" (nothing to show beyond the artifact link).
	Kind string
}

// AboutView is the "about this registry" page.
type AboutView struct {
	Page
	Name       string
	URN        string
	PublicURL  string
	Entries    int
	Publishers int
	Types      []FacetValue
	Seeds      []string
	LastCrawl  string
	// LastCrawlAt is LastCrawl for a <time> element.
	LastCrawlAt string
	Upstreams   []string
	// IndexDown is set when the index could not be counted.
	IndexDown  bool
	SearchURL  string
	OpenAPIURL string
	CatalogURL string
	AgentsURL  string
	MCPURL     string // "" when the server has no MCP endpoint
	Auth       string // whether the API needs a credential, in a sentence
}

// ErrorView is a page for a request that could not be answered.
type ErrorView struct {
	Page
	Status        int
	Heading       string
	Message       string
	CorrelationID string
}

// SetParam returns the query string of v with name set to value (removed
// when value is ""), and "page" dropped: any change starts at page one.
func SetParam(v url.Values, name, value string) string {
	c := cloneValues(v)
	c.Del("page")
	if value == "" {
		c.Del(name)
	} else {
		c.Set(name, value)
	}
	return "/?" + c.Encode()
}

// ToggleParam returns the URL of v with value added to or removed from the
// repeated parameter name, and "page" dropped.
func ToggleParam(v url.Values, name, value string) string {
	c := cloneValues(v)
	c.Del("page")
	vals := c[name]
	kept := vals[:0:0]
	found := false
	for _, x := range vals {
		if x == value {
			found = true
			continue
		}
		kept = append(kept, x)
	}
	if !found {
		kept = append(kept, value)
	}
	if len(kept) == 0 {
		c.Del(name)
	} else {
		c[name] = kept
	}
	return "/?" + c.Encode()
}

// PageURL returns the URL of page n of v's search.
func PageURL(v url.Values, n int) string {
	c := cloneValues(v)
	if n <= 1 {
		c.Del("page")
	} else {
		c.Set("page", strconv.Itoa(n))
	}
	return "/?" + c.Encode()
}

func cloneValues(v url.Values) url.Values {
	c := make(url.Values, len(v))
	for k, vals := range v {
		if len(vals) > 0 {
			c[k] = append([]string(nil), vals...)
		}
	}
	return c
}

// isoTime formats t for a <time datetime> attribute ("" for zero).
func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
