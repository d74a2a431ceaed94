package crawler

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/normalize"
)

// Report is what one Crawl call did. Its JSON form is the one `agentfinder
// crawl --json` prints: {"catalogs": [...], "registries": [...], "totals": {...}}.
type Report struct {
	Catalogs   []CatalogReport `json:"catalogs"`
	Registries []Registry      `json:"registries"`
	Totals     Totals          `json:"totals"`
}

// CatalogReport is one fetched (or failed) catalog, as handed to the sink.
type CatalogReport struct {
	URL      string                `json:"url"`
	Via      string                `json:"via"`
	Path     []string              `json:"path,omitempty"`
	Status   normalize.FetchStatus `json:"status"`
	Reason   string                `json:"reason,omitempty"`
	Error    string                `json:"error,omitempty"`
	Records  int                   `json:"records"`
	Problems []normalize.Problem   `json:"problems"`
	// MaxAge is the refresh hint from Cache-Control max-age (0 if none);
	// the scheduler may use it. JSON: whole seconds, omitted when zero.
	MaxAge time.Duration `json:"-"`
	// Refresh is the soonest refresh the catalog asks for: MaxAge or the
	// time until the first of its records expires, whichever comes first
	// (0 if none; a failed catalog asks for none). Not in JSON.
	Refresh time.Duration `json:"-"`
}

// refreshOf is CatalogReport.Refresh of res at now.
func refreshOf(res *normalize.CatalogResult, now time.Time) time.Duration {
	if res.Status == normalize.StatusFailed {
		return 0
	}
	soon := max(res.MaxAge, 0)
	for _, r := range res.Records {
		if r.ExpiresAt == "" {
			continue
		}
		if at, err := time.Parse(time.RFC3339, r.ExpiresAt); err == nil && at.After(now) {
			if d := at.Sub(now); soon == 0 || d < soon {
				soon = d
			}
		}
	}
	return soon
}

// MarshalJSON writes MaxAge as "maxAge" in seconds.
func (c CatalogReport) MarshalJSON() ([]byte, error) {
	type plain CatalogReport
	return json.Marshal(struct {
		plain
		MaxAge int64 `json:"maxAge,omitempty"`
	}{plain(c), int64(c.MaxAge / time.Second)})
}

// Registry is a search endpoint found while crawling, for federation: from
// a _search._agents SVCB record (Via "dns") or a catalog entry of type
// application/ai-registry+json (Via "catalog").
type Registry struct {
	URL         string `json:"url"`
	Via         string `json:"via"`
	Domain      string `json:"domain,omitempty"`  // seed domain, for Via "dns"
	Catalog     string `json:"catalog,omitempty"` // listing catalog, for Via "catalog"
	Identifier  string `json:"identifier,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	// Description and Tags of the catalog entry, for ranking referrals.
	Description string   `json:"-"`
	Tags        []string `json:"-"`
}

// Registry.Via values.
const (
	RegistryViaDNS     = "dns"
	RegistryViaCatalog = "catalog"
)

// Totals sums a crawl.
type Totals struct {
	Seeds       int   `json:"seeds"`
	Catalogs    int   `json:"catalogs"`
	OK          int   `json:"ok"`
	NotModified int   `json:"notModified"`
	Failed      int   `json:"failed"`
	Records     int   `json:"records"`
	Problems    int   `json:"problems"`
	Registries  int   `json:"registries"`
	Requests    int64 `json:"requests"`
	// NotFound counts well-known probes answered 404 or 410 (not reported
	// as catalogs: most domains have no ard.json).
	NotFound int `json:"notFound"`
	// Skipped counts links not followed: beyond MaxDepth or the per-seed cap.
	Skipped    int `json:"skipped"`
	SinkErrors int `json:"sinkErrors,omitempty"`
	// ByVia counts catalogs per via and status.
	ByVia map[string]map[string]int `json:"byVia"`
	// Reasons counts failed catalogs per reason.
	Reasons map[string]int `json:"reasons"`
}

// Validator is the state kept per catalog URL fetched successfully: the
// conditional GET validators (either may be empty), the final URL, and the
// links, so a 304 still leads to the catalogs the unchanged document names.
// A well-known URL with state that now answers 404 is reported as failed
// instead of being ignored like a first-time probe.
type Validator struct {
	ETag         string           `json:"etag,omitempty"`
	LastModified string           `json:"lastModified,omitempty"`
	URL          string           `json:"url,omitempty"` // final URL after redirects
	Links        []normalize.Link `json:"links,omitempty"`
	// Groups is the visibility the catalog's records were handed on with
	// (its seed's groups); the validator stands only for a crawl that gives
	// the same, so marking or unmarking a seed refetches its catalogs.
	Groups []string `json:"groups,omitempty"`
	// Until, when set, is when the catalog's trust verdict may change
	// though its bytes do not (a signature expires, a signer's DID document
	// is due to be fetched again): the validator is not used after it, so
	// the catalog is fetched and checked whole.
	Until time.Time `json:"until,omitzero"`
}

// finish sorts and sums the report.
func (r *Report) finish() {
	slices.SortFunc(r.Catalogs, func(a, b CatalogReport) int {
		if c := strings.Compare(a.URL, b.URL); c != 0 {
			return c
		}
		return strings.Compare(a.Via, b.Via)
	})
	// Sorted by URL then Via, so CompactFunc (which drops adjacent
	// duplicates only) leaves one registry per URL and Via.
	slices.SortFunc(r.Registries, func(a, b Registry) int {
		if c := strings.Compare(a.URL, b.URL); c != 0 {
			return c
		}
		return strings.Compare(a.Via, b.Via)
	})
	r.Registries = slices.CompactFunc(r.Registries, func(a, b Registry) bool { return a.URL == b.URL && a.Via == b.Via })
	if r.Registries == nil {
		r.Registries = []Registry{}
	}
	if r.Catalogs == nil {
		r.Catalogs = []CatalogReport{}
	}
	t := &r.Totals
	t.ByVia = map[string]map[string]int{}
	t.Reasons = map[string]int{}
	t.Catalogs = len(r.Catalogs)
	t.Registries = len(r.Registries)
	for _, c := range r.Catalogs {
		switch c.Status {
		case normalize.StatusOK:
			t.OK++
		case normalize.StatusNotModified:
			t.NotModified++
		case normalize.StatusFailed:
			t.Failed++
			t.Reasons[c.Reason]++
		}
		t.Records += c.Records
		t.Problems += len(c.Problems)
		if t.ByVia[c.Via] == nil {
			t.ByVia[c.Via] = map[string]int{}
		}
		t.ByVia[c.Via][string(c.Status)]++
	}
}
