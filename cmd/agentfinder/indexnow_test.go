package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

const (
	pingKey   = "e2e-shop-key-0001"
	otherHost = "e2e-other.test" // not crawled by the registry under test
	otherKey  = "e2e-other-key-0001"
)

// ping sends an IndexNow ping (GET when body is nil) and returns the status
// and the Retry-After header.
func (e *e2e) ping(q url.Values, body any) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url("/indexnow?"+q.Encode()), nil)
	if body != nil {
		b, _ := json.Marshal(body)
		req, err = http.NewRequest(http.MethodPost, e.url("/indexnow"), bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("ping: %v", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

func TestIndexNowPing(t *testing.T) {
	web := crawlertest.Web(t, fixtures.Options{NoWorld: true})
	web.SetFile(e2eHost, wellKnown, shopCatalog(1))
	web.SetFile(e2eHost, "/"+pingKey+".txt", []byte(pingKey+"\n"))
	web.SetFile(e2eHost, "/mismatch-key-01.txt", []byte("some-other-key\n"))
	web.SetFile(otherHost, wellKnown, lateCatalog())
	web.SetFile(otherHost, "/"+otherKey+".txt", []byte(otherKey))
	web.SetFile(otherHost, "/redirect-key-01.txt", []byte("redirect-key-01"))
	web.Script(e2eHost, "/redirect-key-01.txt", fixtures.Behavior{Redirect: "https://" + otherHost + "/redirect-key-01.txt"})

	e := newE2EOn(t, web, []string{e2eHost})
	for i, a := range e.args {
		if a == "--schedule" {
			e.args[i+1] = "@every 1h" // only pings make it crawl again
		}
	}
	e.args = append(e.args, "--indexnow-per-minute", "4", "--log-level", "info")
	e.start()
	e.waitFor("the first crawl", 30*time.Second, func() (bool, string) {
		return e.doc("urn:ai:e2e-shop.test:agent:numbat-courier") != nil, "not indexed yet"
	})
	catalogURL := "https://" + e2eHost + wellKnown
	get := func(u, key string) url.Values { return url.Values{"url": {u}, "key": {key}} }

	// A valid ping: the edited entry is searchable and the removed one gone,
	// an hour before the schedule would have come back.
	web.SetFile(e2eHost, wellKnown, shopCatalog(2))
	if code, _ := e.ping(get(catalogURL, pingKey), nil); code != http.StatusOK {
		t.Fatalf("valid ping: %d, want 200", code)
	}
	e.waitFor("the pinged change", 30*time.Second, func() (bool, string) {
		got := e.search("platypus reminders")
		return contains(got, "urn:ai:e2e-shop.test:agent:quokka-invoicer") &&
			e.doc("urn:ai:e2e-shop.test:agent:numbat-courier") == nil, strings.Join(got, ",")
	})

	// Refusals: nothing is crawled for them, and the budget is not spent.
	before := e.srv.indexer.Stats().Results
	refusals := []struct {
		name string
		q    url.Values
		body any
		want int
	}{
		{"no key", url.Values{"url": {catalogURL}}, nil, 400},
		{"bad key format", get(catalogURL, "short"), nil, 422},
		{"wrong key", get(catalogURL, "wrong-key-0001"), nil, 403},
		{"key file holds another key", get(catalogURL, "mismatch-key-01"), nil, 403},
		{"key file redirects to another host", get(catalogURL, "redirect-key-01"), nil, 403},
		{"key on another host", nil, map[string]any{"host": e2eHost, "key": otherKey,
			"keyLocation": "https://" + otherHost + "/" + otherKey + ".txt", "urlList": []string{catalogURL}}, 422},
		{"URL on another host", nil, map[string]any{"host": e2eHost, "key": pingKey,
			"urlList": []string{"https://" + otherHost + wellKnown}}, 422},
		{"host not crawled here", get("https://"+otherHost+wellKnown, otherKey), nil, 403},
		{"not JSON", nil, "[1,2]", 400},
		// Four key files were fetched for this host: the budget of 4 a
		// minute is spent, so a fifth made-up key is not fetched.
		{"made-up keys beyond the fetch budget", get(catalogURL, "made-up-key-0005"), nil, 429},
	}
	for _, r := range refusals {
		if code, _ := e.ping(r.q, r.body); code != r.want {
			t.Errorf("%s: %d, want %d", r.name, code, r.want)
		}
	}
	if e.doc("urn:ai:e2e-late.test:agent:echidna-scheduler") != nil {
		t.Error("a refused ping for a host not crawled here indexed it")
	}

	// A ping for a broken catalog: the crawl runs, nothing is lost.
	web.SetFile(e2eHost, wellKnown, []byte(`{"specVersion": "1.0", "entries": [`))
	code, _ := e.ping(nil, map[string]any{"host": e2eHost, "key": pingKey, "urlList": []string{catalogURL}})
	if code != http.StatusOK {
		t.Fatalf("ping for the broken catalog: %d", code)
	}
	e.waitFor("the broken catalog's crawl to be applied", 30*time.Second, func() (bool, string) {
		return e.srv.indexer.Stats().Results > before, "no result yet"
	})
	for _, id := range []string{"urn:ai:e2e-shop.test:agent:quokka-invoicer", "urn:ai:e2e-shop.test:agent:wombat-stocktaker"} {
		if e.doc(id) == nil {
			t.Errorf("%s lost to a broken catalog", id)
		}
	}

	// A ping for the host itself: discovery runs and finds the fixed catalog.
	web.SetFile(e2eHost, wellKnown, shopCatalog(1))
	var out, errOut bytes.Buffer
	if code := pingMain(t.Context(), []string{"https://" + e2eHost + "/", "--key", pingKey, "--server", e.url("")}, noEnv, &out, &errOut); code != 0 {
		t.Fatalf("agentfinder ping for the host: exit %d: %s%s", code, out.String(), errOut.String())
	}
	e.waitFor("the host ping's crawl", 30*time.Second, func() (bool, string) {
		return e.doc("urn:ai:e2e-shop.test:agent:numbat-courier") != nil, "numbat-courier not back"
	})

	// A flood: one ping of the budget of 4 is left, the rest get 429.
	var codes []int
	for range 6 {
		code, retry := e.ping(get(catalogURL, pingKey), nil)
		codes = append(codes, code)
		if code == http.StatusTooManyRequests {
			if n, err := strconv.Atoi(retry); err != nil || n < 1 {
				t.Errorf("429 with Retry-After %q, want whole seconds", retry)
			}
		}
	}
	if want := []int{200, 429, 429, 429, 429, 429}; !slices.Equal(codes, want) {
		t.Errorf("flood answered %v, want %v", codes, want)
	}
	out.Reset()
	errOut.Reset()
	if code := pingMain(t.Context(), []string{catalogURL, "--key", pingKey, "--server", e.url("")}, noEnv, &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "429") || !strings.Contains(errOut.String(), "retry after") {
		t.Errorf("agentfinder ping beyond the budget: exit %d, stderr %q; want 1 and the 429 with its Retry-After", code, errOut.String())
	}

	metrics := e.metricsText()
	for _, want := range []string{
		`agentfinder_indexnow_rejected_total{reason="key_not_found"} 1`,
		`agentfinder_indexnow_rejected_total{reason="key_mismatch"} 1`,
		`agentfinder_indexnow_rejected_total{reason="key_redirect_other_host"} 1`,
		`agentfinder_indexnow_rejected_total{reason="url_not_on_host"} 2`,
		`agentfinder_indexnow_rejected_total{reason="unknown_host"} 1`,
		`agentfinder_indexnow_rate_limited_total 7`,
		`agentfinder_indexnow_pings_total 20`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	if !strings.Contains(metrics, "agentfinder_indexnow_ping_to_searchable_seconds_count ") ||
		strings.Contains(metrics, "agentfinder_indexnow_ping_to_searchable_seconds_count 0\n") {
		t.Error("no ping-to-searchable time observed")
	}
}

func noEnv(string) (string, bool) { return "", false }

// metricsText returns GET /metrics.
func (e *e2e) metricsText() string {
	e.t.Helper()
	resp, err := e.client.Get(e.url("/metrics"))
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// With --indexnow-new-hosts a verified ping for a host the registry does
// not crawl makes it a seed (kept in the data directory) and indexes it.
func TestIndexNowNewHost(t *testing.T) {
	web := crawlertest.Web(t, fixtures.Options{NoWorld: true})
	web.SetFile(otherHost, wellKnown, lateCatalog())
	web.SetFile(otherHost, "/"+otherKey+".txt", []byte(otherKey))
	e := newE2EOn(t, web, nil)
	e.args = append(e.args, "--indexnow-new-hosts", "--log-level", "info")
	e.start()
	if code, _ := e.ping(url.Values{"url": {"https://" + otherHost + "/"}, "key": {"wrong-key-0001"}}, nil); code != http.StatusForbidden {
		t.Fatalf("new host, wrong key: %d, want 403", code)
	}
	if e.srv.sched.Has(otherHost) {
		t.Fatal("a ping whose key did not verify added a seed")
	}
	if code, _ := e.ping(url.Values{"url": {"https://" + otherHost + "/"}, "key": {otherKey}}, nil); code != http.StatusOK {
		t.Fatalf("new host, valid key: %d, want 200", code)
	}
	e.waitFor("the new host's catalog", 30*time.Second, func() (bool, string) {
		return e.doc("urn:ai:e2e-late.test:agent:echidna-scheduler") != nil, "not indexed"
	})
	b, err := os.ReadFile(filepath.Join(e.dataDir, pingedSeedsFile))
	if err != nil || strings.TrimSpace(string(b)) != otherHost {
		t.Fatalf("pinged seeds file = %q, %v; want %s", b, err, otherHost)
	}
}

// TestIndexNowKeepsVisibility: on a seed only the hr group may see, pings
// crawl with the seed's groups: a ping of its catalog re-indexes the
// records still hidden, and with --indexnow-new-hosts a ping of the host
// neither adds it as a public seed nor crawls it as one (nor does a public
// copy of it left in the pinged-seeds file by an earlier run).
func TestIndexNowKeepsVisibility(t *testing.T) {
	web := crawlertest.Web(t, fixtures.Options{NoWorld: true})
	web.SetFile(e2eHost, wellKnown, shopCatalog(1))
	web.SetFile(e2eHost, "/"+pingKey+".txt", []byte(pingKey+"\n"))
	e := newE2EOn(t, web, []string{e2eHost + " groups=hr"})
	for i, a := range e.args {
		if a == "--schedule" {
			e.args[i+1] = "@every 1h" // only pings make it crawl again
		}
	}
	e.args = append(e.args, "--indexnow-new-hosts", "--log-level", "info")
	pinged := filepath.Join(e.dataDir, pingedSeedsFile)
	if err := os.WriteFile(pinged, []byte(e2eHost+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.start()
	const invoicer = "urn:ai:e2e-shop.test:agent:quokka-invoicer"
	visibility := func() []any {
		d := e.docKey(normalize.RecordKey(invoicer, []string{"hr"}))
		v, _ := d["visibility"].([]any)
		return v
	}
	e.waitFor("the first crawl", 30*time.Second, func() (bool, string) {
		return e.docKey(normalize.RecordKey(invoicer, []string{"hr"})) != nil, "not indexed yet"
	})
	if v := visibility(); len(v) != 1 || v[0] != "hr" {
		t.Fatalf("visibility after the seed's crawl: %v", v)
	}
	if e.srv.sched.Has(e2eHost) {
		t.Error("a public copy of the hidden seed from the pinged-seeds file is crawled")
	}

	catalogURL := "https://" + e2eHost + wellKnown
	for i, q := range []url.Values{
		{"url": {catalogURL}, "key": {pingKey}},                 // the catalog itself
		{"url": {"https://" + e2eHost + "/"}, "key": {pingKey}}, // the host (new-hosts is on)
	} {
		version := 2 - i%2 // each ping brings a change to wait for
		web.SetFile(e2eHost, wellKnown, shopCatalog(version))
		if code, _ := e.ping(q, nil); code != http.StatusOK {
			t.Fatalf("ping %v: %d", q, code)
		}
		e.waitFor("the pinged change", 30*time.Second, func() (bool, string) {
			gone := e.docKey(normalize.RecordKey("urn:ai:e2e-shop.test:agent:numbat-courier", []string{"hr"})) == nil
			return gone == (version == 2), fmt.Sprintf("courier gone %v", gone)
		})
		if v := visibility(); len(v) != 1 || v[0] != "hr" {
			t.Errorf("ping %v: visibility %v, want [hr]", q, v)
		}
	}
	if b, _ := os.ReadFile(pinged); strings.Count(string(b), e2eHost) != 1 {
		t.Errorf("pinged seeds file: %q; a configured seed's host was added again", b)
	}
	if e.srv.sched.Has(e2eHost) {
		t.Error("a ping of the hidden seed's host added it as a public seed")
	}
	// A caller without the group finds nothing of it.
	var out struct {
		Results []json.RawMessage `json:"results"`
	}
	req, _ := http.NewRequest(http.MethodPost, e.url("/search"), strings.NewReader(`{"query": {"text": "invoices", "federation": "none"}}`))
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Results) != 0 {
		t.Errorf("anonymous search after the pings: %d results (%v)", len(out.Results), err)
	}
}
