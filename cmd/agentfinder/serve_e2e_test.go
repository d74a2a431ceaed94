package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/federation"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/fixtures/logbuf"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
	"github.com/agentfinder/agentfinder/normalize"
	"github.com/agentfinder/agentfinder/scheduler"
)

const (
	e2eHost     = "e2e-shop.test" // a catalog the test edits and breaks
	e2eNewHost  = "e2e-late.test" // a seed added by reload
	e2eToken    = "e2e-admin-token"
	e2eSchedule = "@every 2s"
	wellKnown   = "/.well-known/ai-catalog.json"
)

// shopCatalog is e2eHost's catalog; version 2 edits one entry and removes another.
func shopCatalog(version int) []byte {
	type entry map[string]any
	entries := []entry{
		{"identifier": "urn:ai:e2e-shop.test:agent:quokka-invoicer", "displayName": "Quokka Invoicer",
			"type": "application/a2a-agent-card+json", "url": "https://e2e-shop.test/agents/invoicer.json",
			"description": "Drafts and sends invoices for small shops.", "tags": []string{"billing"}, "updatedAt": "2026-01-01T00:00:00Z"},
		{"identifier": "urn:ai:e2e-shop.test:agent:wombat-stocktaker", "displayName": "Wombat Stocktaker",
			"type": "application/a2a-agent-card+json", "url": "https://e2e-shop.test/agents/stock.json",
			"description": "Counts inventory and reorders stock.", "tags": []string{"inventory"}, "updatedAt": "2026-01-01T00:00:00Z"},
		{"identifier": "urn:ai:e2e-shop.test:agent:numbat-courier", "displayName": "Numbat Courier",
			"type": "application/a2a-agent-card+json", "url": "https://e2e-shop.test/agents/courier.json",
			"description": "Books parcel pickups with local couriers.", "tags": []string{"shipping"}, "updatedAt": "2026-01-01T00:00:00Z"},
	}
	if version == 2 {
		entries[0]["description"] = "Drafts invoices and chases overdue payments with platypus reminders."
		entries[0]["updatedAt"] = "2026-02-01T00:00:00Z"
		entries = entries[:2] // numbat-courier removed
	}
	b, _ := json.MarshalIndent(map[string]any{"specVersion": "1.0", "host": map[string]any{"displayName": "E2E Shop"}, "entries": entries}, "", "  ")
	return b
}

func lateCatalog() []byte {
	return []byte(`{"specVersion": "1.0", "entries": [{"identifier": "urn:ai:e2e-late.test:agent:echidna-scheduler",
	  "displayName": "Echidna Scheduler", "type": "application/a2a-agent-card+json", "url": "https://e2e-late.test/agents/s.json",
	  "description": "Schedules meetings across time zones."}]}`)
}

// e2e is one serve process under test.
type e2e struct {
	t       testing.TB
	web     *fixtures.Web
	meili   *meilitest.Server
	index   string
	dataDir string
	seeds   string // seeds file
	args    []string

	client *http.Client
	srv    *server
	cancel context.CancelFunc
	done   chan int // nil while serve is not running
	logs   *logbuf.Buffer
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	web := crawlertest.Web(t, fixtures.Options{})
	web.SetFile(e2eHost, wellKnown, shopCatalog(1))
	return newE2EOn(t, web, append(web.Seeds(), e2eHost))
}

// newE2EOn prepares a serve of the given seeds of web, on its own index.
func newE2EOn(t testing.TB, web *fixtures.Web, seeds []string) *e2e {
	t.Helper()
	m := meilitest.Connect(t)
	e := &e2e{t: t, web: web, meili: m, index: meilitest.NewIndexName("e2e_serve"), dataDir: t.TempDir(),
		client: &http.Client{Timeout: 30 * time.Second}}
	t.Cleanup(func() {
		for _, uid := range []string{e.index, e.index + "_sources"} {
			if task, err := m.Client.DeleteIndex(uid); err == nil {
				_ = meilitest.Wait(m.Client, task.TaskUID)
			}
		}
	})
	e.seeds = filepath.Join(e.dataDir, "seeds.txt")
	e.writeSeeds(seeds)
	e.args = []string{
		"--addr", "127.0.0.1:0",
		"--data-dir", e.dataDir,
		"--index", e.index,
		"--schedule", e2eSchedule,
		"--crawl-workers", "8",
		"--seeds", e.seeds,
		"--no-embeddings",
		// No cut-off: these tests probe indexing, federation and the admin
		// API with searches on a few entries, not their relevance
		// (searchapi's relevance tests cover the cut-off).
		"--min-score", "0",
		"--federation-budget", "500ms",
		"--log-level", "debug",
		"--shutdown-timeout", "3s",
	}
	e.args = append(e.args, newFixturesInfo(web, false).Flags...)
	return e
}

func (e *e2e) writeSeeds(seeds []string) {
	e.t.Helper()
	body := "# e2e seeds\n" + strings.Join(seeds, "\n") + "\n"
	if err := os.WriteFile(e.seeds, []byte(body), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// start runs serve in-process and waits until it is ready. The test's
// cleanup stops it (before the data directory is removed) unless the test
// stopped it already.
func (e *e2e) start() {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *server, 1)
	env := map[string]string{
		"MEILI_URL":               e.meili.URL,
		"MEILI_API_KEY":           e.meili.APIKey,
		"AGENTFINDER_ADMIN_TOKEN": e2eToken,
	}
	hooks := serveHooks{
		getenv:    func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		ready:     func(s *server) { ready <- s },
		noSignals: true,
	}
	e.logs = &logbuf.Buffer{}
	logs := e.logs
	e.t.Cleanup(func() {
		if e.t.Failed() {
			out := logs.String()
			if len(out) > 20000 {
				out = "...\n" + out[len(out)-20000:]
			}
			e.t.Logf("serve log:\n%s", out)
		}
	})
	e.cancel = cancel
	done := make(chan int, 1)
	e.done = done
	e.t.Cleanup(func() {
		if e.done == done {
			e.stop()
		}
	})
	go func() { done <- serveMain(ctx, e.args, hooks, io.Discard, e.logs) }()
	select {
	case e.srv = <-ready:
	case code := <-done:
		e.done = nil
		e.t.Fatalf("serve exited with %d before ready:\n%s", code, e.logs.String())
	case <-time.After(60 * time.Second):
		e.t.Fatalf("serve not ready after 60s:\n%s", e.logs.String())
	}
}

// stop cancels serve and waits for a clean exit.
func (e *e2e) stop() {
	e.t.Helper()
	if e.done == nil {
		return
	}
	done := e.done
	e.done = nil
	e.cancel()
	select {
	case code := <-done:
		if code != 0 {
			e.t.Fatalf("serve exited with %d:\n%s", code, e.logs.String())
		}
	case <-time.After(60 * time.Second):
		e.t.Fatalf("serve did not stop within 60s")
	}
}

func (e *e2e) url(p string) string { return "http://" + e.srv.addr + p }

// do sends a request with the admin token and decodes a JSON answer.
func (e *e2e) do(method, p string, body any, out any) int {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.url(p), rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e2eToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, p, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: decode %q: %v", method, p, b, err)
		}
	}
	return resp.StatusCode
}

type adminStatus struct {
	Scheduler scheduler.Status `json:"scheduler"`
}

type seedView struct {
	scheduler.SeedState
	Running bool           `json:"running"`
	Report  crawler.Report `json:"report"`
}

func (e *e2e) status() map[string]seedView {
	e.t.Helper()
	var raw struct {
		Scheduler struct {
			Seeds []seedView `json:"seeds"`
		} `json:"scheduler"`
	}
	if code := e.do(http.MethodGet, "/admin/status", nil, &raw); code != http.StatusOK {
		e.t.Fatalf("GET /admin/status: %d", code)
	}
	out := map[string]seedView{}
	for _, s := range raw.Scheduler.Seeds {
		out[s.Seed] = s
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes.
func (e *e2e) waitFor(what string, limit time.Duration, cond func() (bool, string)) {
	e.t.Helper()
	start := time.Now()
	defer func() { e.t.Logf("waited %v for %s", time.Since(start).Round(time.Millisecond), what) }()
	deadline := time.Now().Add(limit)
	var last string
	for time.Now().Before(deadline) {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		time.Sleep(100 * time.Millisecond)
	}
	e.t.Fatalf("timed out after %v waiting for %s: %s", limit, what, last)
}

// doc returns the indexed document of an identifier, or nil.
func (e *e2e) doc(identifier string) map[string]any {
	e.t.Helper()
	return e.docKey(normalize.DocID(identifier))
}

// docKey returns the indexed document with key id (normalize.RecordKey:
// a record only some groups may see has a key of its own), nil when none.
func (e *e2e) docKey(id string) map[string]any {
	e.t.Helper()
	var d map[string]any
	err := e.meili.Client.Index(e.index).GetDocument(id, nil, &d)
	if err != nil {
		var me *meilisearch.Error
		if errors.As(err, &me) && me.StatusCode == http.StatusNotFound {
			return nil
		}
		e.t.Fatalf("get document %s: %v", id, err)
	}
	return d
}

// search runs POST /search with federation none and returns the identifiers.
func (e *e2e) search(text string) []string {
	e.t.Helper()
	var resp struct {
		Results []struct {
			Identifier string `json:"identifier"`
		} `json:"results"`
	}
	code := e.do(http.MethodPost, "/search", map[string]any{"query": map[string]any{"text": text, "federation": "none"}, "pageSize": 20}, &resp)
	if code != http.StatusOK {
		e.t.Fatalf("POST /search %q: status %d", text, code)
	}
	var ids []string
	for _, r := range resp.Results {
		ids = append(ids, r.Identifier)
	}
	return ids
}

// referenceCrawl crawls a second, identical fixture web with the crawler
// alone and returns the identifiers it found: what serve must index.
func referenceCrawl(t *testing.T, seeds []string) []string {
	t.Helper()
	web := crawlertest.Web(t, fixtures.Options{})
	web.SetFile(e2eHost, wellKnown, shopCatalog(1))
	sink := &crawlertest.Collector{}
	cr, err := crawler.New(crawlertest.Config(web), sink, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	if _, err := cr.Crawl(t.Context(), seeds); err != nil {
		t.Fatalf("reference crawl: %v", err)
	}
	ids := map[string]bool{}
	for _, res := range sink.Results() {
		if res.Status == normalize.StatusOK {
			for _, r := range res.Records {
				ids[r.Identifier] = true
			}
		}
	}
	return sortedKeys(ids)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestServeE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	e := newE2E(t)
	allSeeds := append(e.web.Seeds(), e2eHost)
	// What serve must index: a crawl of an identical web by the crawler
	// alone, run alongside serve's first crawl.
	reference := make(chan []string, 1)
	go func() { reference <- referenceCrawl(t, allSeeds) }()
	e.start()

	// Admin endpoints need the token.
	resp, err := e.client.Get(e.url("/admin/status"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /admin/status without token: %d, want 401", resp.StatusCode)
	}

	// The first crawl of every seed starts right away and indexes every catalog.
	e.waitFor("the first crawl of every seed", 90*time.Second, func() (bool, string) {
		st := e.status()
		for _, sd := range allSeeds {
			if st[sd].Runs < 1 {
				return false, fmt.Sprintf("%s: %+v", sd, st[sd].SeedState)
			}
		}
		return true, ""
	})
	// Every identifier a crawl of the same web yields is indexed.
	var want []string
	select {
	case want = <-reference:
	case <-time.After(120 * time.Second):
		t.Fatal("reference crawl did not finish within 120s")
	}
	if len(want) < 20 {
		t.Fatalf("reference crawl found only %d identifiers", len(want))
	}
	for _, id := range want {
		if strings.HasPrefix(id, "urn:ai:"+fixtures.HostChanging+":") {
			continue // its catalog changes on the second fetch, which serve has made by now
		}
		if e.doc(id) == nil {
			t.Errorf("%s (found by the crawler) is not indexed after the first crawl", id)
		}
	}
	for _, id := range []string{"urn:ai:e2e-shop.test:agent:quokka-invoicer", "urn:ai:e2e-shop.test:agent:numbat-courier"} {
		if e.doc(id) == nil {
			t.Fatalf("%s not indexed after the first crawl", id)
		}
	}
	// Registries learned by crawling (DNS _search._agents and catalog
	// entries) are in the federation book and offered as referrals.
	var st struct {
		Registries []struct {
			Endpoint string `json:"endpoint"`
			Learned  string `json:"learned"`
		} `json:"registries"`
	}
	var raw any
	e.do(http.MethodGet, "/admin/status", nil, &raw)
	checkCamelCase(t, "/admin/status", raw)
	e.do(http.MethodGet, "/admin/status", nil, &st)
	learned := map[string]bool{}
	for _, r := range st.Registries {
		learned[r.Learned] = true
	}
	if !learned[federation.LearnedDNS] || !learned[federation.LearnedCrawled] {
		t.Errorf("registry book after the first crawl: %+v", st.Registries)
	}
	var ref struct {
		Referrals []map[string]any `json:"referrals"`
	}
	e.do(http.MethodPost, "/search", map[string]any{"query": map[string]any{"text": "registry", "federation": "referrals"}}, &ref)
	if len(ref.Referrals) == 0 {
		t.Error("no referrals although the crawl found registries")
	}
	if got := e.search("quokka invoices"); !contains(got, "urn:ai:e2e-shop.test:agent:quokka-invoicer") {
		t.Errorf("search for the invoicer returned %v", got)
	}
	if got := e.search("kubernetes pod logs"); !contains(got, "urn:ai:acme.test:platform:k8s-ops") {
		t.Errorf("search for k8s ops returned %v", got)
	}

	// A catalog that changes is reflected after the next scheduled run.
	changed := time.Now()
	e.web.SetFile(e2eHost, wellKnown, shopCatalog(2))
	e.waitFor("the edited catalog to be reindexed", 60*time.Second, func() (bool, string) {
		d := e.doc("urn:ai:e2e-shop.test:agent:quokka-invoicer")
		desc, _ := d["description"].(string)
		gone := e.doc("urn:ai:e2e-shop.test:agent:numbat-courier") == nil
		return strings.Contains(desc, "platypus") && gone, fmt.Sprintf("description %q, removed entry gone %v", desc, gone)
	})
	if got := e.search("platypus reminders"); !contains(got, "urn:ai:e2e-shop.test:agent:quokka-invoicer") {
		t.Errorf("search for the edited text returned %v", got)
	}
	// The run that read the edit may have started just before it (its
	// robots.txt fetched first, its catalog after the edit), and its records
	// are searchable before the scheduler records its end: what shows a
	// scheduled run picked the edit up is a run that finished after it.
	e.waitFor("the scheduled run that read the edit to finish", 30*time.Second, func() (bool, string) {
		sd := e.status()[e2eHost]
		return sd.LastFinish.After(changed), fmt.Sprintf("%+v", sd.SeedState)
	})
	if sd := e.status()[e2eHost]; sd.Outcome != scheduler.OutcomeOK {
		t.Errorf("the run that picked the edit up: %+v", sd.SeedState)
	}

	// A host that starts failing backs off and keeps its records.
	e.web.Script(e2eHost, wellKnown, fixtures.Behavior{Status: http.StatusInternalServerError})
	e.waitFor("two consecutive failures", 90*time.Second, func() (bool, string) {
		sd := e.status()[e2eHost]
		return sd.Failures >= 2, fmt.Sprintf("%+v", sd.SeedState)
	})
	sd := e.status()[e2eHost]
	if wait := sd.Next.Sub(sd.LastFinish); wait < 4*time.Second {
		t.Errorf("after %d failures the next run is %v after the last: no backoff (schedule 2s)", sd.Failures, wait)
	}
	for _, id := range []string{"urn:ai:e2e-shop.test:agent:quokka-invoicer", "urn:ai:e2e-shop.test:agent:wombat-stocktaker"} {
		if e.doc(id) == nil {
			t.Errorf("%s deleted while its host was failing", id)
		}
	}

	// A reload (SIGHUP) picks up a new seed from the file.
	e.web.SetFile(e2eNewHost, wellKnown, lateCatalog())
	e.writeSeeds(append(allSeeds, e2eNewHost))
	e.srv.reload()
	e.waitFor("the new seed to be crawled", 60*time.Second, func() (bool, string) {
		return e.doc("urn:ai:e2e-late.test:agent:echidna-scheduler") != nil, fmt.Sprintf("%+v", e.status()[e2eNewHost].SeedState)
	})

	// POST /admin/crawl triggers a named seed now; unknown seeds are 404.
	before := e.status()[fixtures.HostAcme].Runs
	var trig struct {
		Triggered []string `json:"triggered"`
	}
	if code := e.do(http.MethodPost, "/admin/crawl?seed="+fixtures.HostAcme, nil, &trig); code != http.StatusAccepted || !contains(trig.Triggered, fixtures.HostAcme) {
		t.Fatalf("POST /admin/crawl: %d %v", code, trig)
	}
	e.waitFor("the triggered crawl", 60*time.Second, func() (bool, string) {
		return e.status()[fixtures.HostAcme].Runs > before, ""
	})
	if code := e.do(http.MethodPost, "/admin/crawl", map[string]any{"seeds": []string{"nowhere.test"}}, nil); code != http.StatusNotFound {
		t.Errorf("POST /admin/crawl of an unknown seed: %d, want 404", code)
	}

	// GET /admin/status?seed= narrows the seeds shown.
	var one struct {
		Outcomes  map[string]int `json:"outcomes"`
		Scheduler struct {
			Seeds []scheduler.SeedStatus `json:"seeds"`
		} `json:"scheduler"`
	}
	e.do(http.MethodGet, "/admin/status?seed="+fixtures.HostAcme, nil, &one)
	if len(one.Scheduler.Seeds) != 1 || one.Scheduler.Seeds[0].Seed != fixtures.HostAcme || one.Outcomes[scheduler.OutcomeOK] == 0 {
		t.Errorf("status for one seed: %+v", one)
	}

	// A restart keeps the scheduler's state (and the index).
	beforeRestart := e.status()
	e.stop()
	state, err := os.ReadFile(filepath.Join(e.dataDir, "scheduler.json"))
	if err != nil {
		t.Fatalf("state file: %v", err)
	}
	if !strings.Contains(string(state), e2eNewHost) || !strings.Contains(string(state), `"extra"`) {
		t.Errorf("state file lacks seeds or validators:\n%.400s", state)
	}
	e.web.Unscript(e2eHost, wellKnown)
	e.start()
	after := e.status()
	for name, b := range beforeRestart {
		a, ok := after[name]
		if !ok {
			t.Errorf("seed %s lost by the restart", name)
			continue
		}
		if a.Runs < b.Runs {
			t.Errorf("seed %s state after restart %+v, before %+v", name, a.SeedState, b.SeedState)
		}
	}
	if e.doc("urn:ai:e2e-late.test:agent:echidna-scheduler") == nil {
		t.Error("index lost records across the restart")
	}
	// The host works again: its records, stale after repeated failures, come back.
	e.waitFor("the recovered host's records in search", 60*time.Second, func() (bool, string) {
		got := e.search("platypus reminders")
		return contains(got, "urn:ai:e2e-shop.test:agent:quokka-invoicer"), fmt.Sprint(got)
	})
}

// TestServeManagedMeilisearch runs serve without MEILI_URL: it starts its
// own Meilisearch under the data dir, reports the missing embedding model in
// /readyz, serves with the crawler off, and stops Meilisearch on shutdown.
func TestServeManagedMeilisearch(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	bin := meilitest.Bin(t)
	dataDir := t.TempDir()
	// A link to the binary, removed later to make restarts fail.
	link := filepath.Join(t.TempDir(), "meilisearch")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	ready := make(chan *server, 1)
	hooks := serveHooks{
		getenv:    func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		ready:     func(s *server) { ready <- s },
		noSignals: true,
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &logbuf.Buffer{}
	done := make(chan int, 1)
	args := []string{"--addr", "127.0.0.1:0", "--data-dir", dataDir, "--model-dir", filepath.Join(dataDir, "no-model"), "--no-crawl",
		"--meili-bin", link, "--meili-restarts", "2"}
	go func() { done <- serveMain(ctx, args, hooks, io.Discard, logs) }()
	var s *server
	select {
	case s = <-ready:
	case code := <-done:
		t.Fatalf("serve exited with %d:\n%s", code, logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("serve not ready after 60s:\n%s", logs.String())
	}
	if s.managed == nil {
		t.Fatal("no managed Meilisearch started without MEILI_URL")
	}
	if _, err := os.Stat(filepath.Join(dataDir, "meili")); err != nil {
		t.Fatalf("managed Meilisearch data not under the data dir: %v", err)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + s.addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var rz struct {
		Status  string            `json:"status"`
		Details map[string]string `json:"details"`
	}
	err = json.NewDecoder(resp.Body).Decode(&rz)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(rz.Details["embeddings"], "off") || rz.Details["crawl"] == "" {
		t.Fatalf("/readyz = %d %+v (%v)", resp.StatusCode, rz, err)
	}
	if n := strings.Count(logs.String(), "embedding model missing"); n != 1 {
		t.Errorf("missing model logged %d times, want once", n)
	}
	// Without AGENTFINDER_ADMIN_TOKEN the admin endpoints do not exist.
	resp, err = client.Get("http://" + s.addr + "/admin/status")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/admin/status without a token configured: %d, want 404", resp.StatusCode)
	}
	// The self catalog of the defaults (public URL http://127.0.0.1:PORT/)
	// passes agentfinder validate.
	var vout, verr bytes.Buffer
	noEnv := func(string) (string, bool) { return "", false }
	if code := validateMain(t.Context(), []string{"--allow-private", "http://" + s.addr + "/.well-known/ai-catalog.json"}, noEnv, &vout, &verr); code != 0 {
		t.Errorf("validate the self catalog: exit %d\n%s%s", code, vout.String(), verr.String())
	}
	// The data directory has one owner: a second serve refuses, naming the
	// holder; a crawl finds the managed Meilisearch to index through.
	var second logbuf.Buffer
	if code := serveMain(t.Context(), args, serveHooks{getenv: hooks.getenv, noSignals: true}, io.Discard, &second); code == 0 ||
		!strings.Contains(second.String(), fmt.Sprintf("in use by agentfinder serve (pid %d", os.Getpid())) {
		t.Errorf("second serve on the same data dir: exit %d, log:\n%s", code, second.String())
	}
	_, err = lockDataDir(dataDir, "agentfinder crawl")
	var busy *dataDirBusyError
	if !errors.As(err, &busy) {
		t.Fatalf("data dir lock while serve runs: %v", err)
	}
	if url, key, err := reuseHolderMeili(t.Context(), busy); err != nil || url != s.meiliURL || key != s.meiliKey {
		t.Errorf("reuse the running Meilisearch: %q, %v; want %s and its key", url, err, s.meiliURL)
	}
	superviseManaged(t, s, link)
	meiliURL := s.meiliURL
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited with %d:\n%s", code, logs.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop")
	}
	if _, err := client.Get(meiliURL + "/health"); err == nil {
		t.Errorf("managed Meilisearch at %s still answers after shutdown", meiliURL)
	}
}

func TestServeHelpListsEveryFlagWithItsVariable(t *testing.T) {
	var stderr bytes.Buffer // the help goes to stdout
	if code := serveMain(t.Context(), []string{"--help"}, serveHooks{}, &stderr, io.Discard); code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	var o serveOptions
	c := serveCLI(&o)
	help := stderr.String()
	c.fs.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(help, "--"+f.Name) || !strings.Contains(help, c.envFor(f.Name)) {
			t.Errorf("--help lacks --%s or %s", f.Name, c.envFor(f.Name))
		}
	})
	for _, env := range []string{"AGENTFINDER_ADMIN_TOKEN", "MEILI_URL", "MEILI_API_KEY", "AGENTFINDER_ADDR", "AGENTFINDER_INDEX"} {
		if !strings.Contains(help, env) {
			t.Errorf("--help lacks %s", env)
		}
	}
}

// startFederatedPair starts two serves on one fixture web: B crawls
// e2e-late.test, A crawls e2e-shop.test and federates to B (--upstream).
// Both stop, A first, when the test ends.
func startFederatedPair(t *testing.T) (a, b *e2e) {
	t.Helper()
	web := crawlertest.Web(t, fixtures.Options{NoWorld: true})
	web.SetFile(e2eHost, wellKnown, shopCatalog(1))
	web.SetFile(e2eNewHost, wellKnown, lateCatalog())

	b = newE2EOn(t, web, []string{e2eNewHost})
	b.start()
	a = newE2EOn(t, web, []string{e2eHost})
	a.args = append(a.args, "--upstream", b.url("/"), "--federation-budget", "5s")
	a.start()
	return a, b
}

// TestServeFederation runs two registries: A federates to B (--upstream).
// B's agent reaches A's clients in auto mode with B as its source, never in
// none mode, and B is offered as a referral.
func TestServeFederation(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	a, b := startFederatedPair(t)
	const bAgent = "urn:ai:e2e-late.test:agent:echidna-scheduler"
	b.waitFor("B to index its agent", 60*time.Second, func() (bool, string) { return b.doc(bAgent) != nil, "" })
	a.waitFor("A to index its agents", 60*time.Second, func() (bool, string) {
		return a.doc("urn:ai:e2e-shop.test:agent:numbat-courier") != nil, ""
	})

	type result struct {
		Identifier string `json:"identifier"`
		Source     string `json:"source"`
	}
	var resp struct {
		Results   []result         `json:"results"`
		Referrals []map[string]any `json:"referrals"`
		Upstreams []struct {
			Registry, Status string
		} `json:"upstreams"`
	}
	ask := func(mode string) {
		t.Helper()
		resp.Results, resp.Referrals, resp.Upstreams = nil, nil, nil
		body := map[string]any{"query": map[string]any{"text": "schedules meetings across time zones", "federation": mode}}
		if code := a.do(http.MethodPost, "/search", body, &resp); code != http.StatusOK {
			t.Fatalf("POST /search (%s): %d", mode, code)
		}
	}
	ask("auto")
	found := false
	for _, r := range resp.Results {
		if r.Identifier == bAgent {
			found = true
			if !strings.HasPrefix(r.Source, strings.TrimSuffix(b.url("/"), "/")) {
				t.Errorf("B's agent has source %q, want B (%s)", r.Source, b.url("/"))
			}
		}
	}
	if !found || len(resp.Upstreams) != 1 || resp.Upstreams[0].Status != "ok" {
		t.Fatalf("auto: B's agent found %v, upstreams %+v, results %+v", found, resp.Upstreams, resp.Results)
	}
	ask("none")
	for _, r := range resp.Results {
		if r.Identifier == bAgent {
			t.Fatalf("federation none returned B's agent: %+v", resp.Results)
		}
	}
	ask("referrals")
	if len(resp.Referrals) == 0 {
		t.Fatalf("referrals mode offered no registry")
	}
}

// superviseManaged kills serve's managed Meilisearch with SIGKILL: /readyz
// shows the outage while /healthz stays up, then Meilisearch is back and an
// agent indexed before is found again. With the binary (link) gone, the
// restarts fail until serve gives up and /healthz fails.
func superviseManaged(t *testing.T, s *server, link string) {
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(path string) (int, map[string]any) {
		t.Helper()
		resp, err := client.Get("http://" + s.addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	managedState := func(readyz map[string]any) string {
		d, _ := readyz["details"].(map[string]any)
		st, _ := d["managedMeilisearch"].(string)
		return st
	}
	poll := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 60s", what)
			}
		}
	}
	found := func() bool {
		t.Helper()
		body := strings.NewReader(`{"query":{"text":"quoll lighthouse keeper","federation":"none"}}`)
		resp, err := client.Post("http://"+s.addr+"/search", "application/json", body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && strings.Contains(string(b), "urn:ai:quoll.test:agent:keeper")
	}
	rec := normalize.Record{Identifier: "urn:ai:quoll.test:agent:keeper", DisplayName: "Quoll Lighthouse Keeper",
		Type: "application/a2a-agent-card+json", URL: "https://quoll.test/keeper.json", Description: "Keeps the lighthouse logs."}
	if err := s.indexer.Put(t.Context(), normalize.CatalogResult{Catalog: "https://quoll.test/.well-known/ai-catalog.json",
		Status: normalize.StatusOK, Records: []normalize.Record{rec}}); err != nil {
		t.Fatal(err)
	}
	if err := s.indexer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !found() {
		t.Fatal("the indexed agent is not found before the crash")
	}

	if err := syscall.Kill(s.managed.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	poll("/readyz to report the outage", func() bool {
		code, body := get("/readyz")
		return code == http.StatusServiceUnavailable && strings.HasPrefix(managedState(body), "restarting: exited (signal: killed)")
	})
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz during a restart it can do itself: %d", code)
	}
	poll("/readyz to be ready again", func() bool {
		code, body := get("/readyz")
		return code == http.StatusOK && strings.HasPrefix(managedState(body), "running: restarted 1 times")
	})
	if !found() {
		t.Fatal("the indexed agent is not found after the restart")
	}
	if v, _ := metricSum(t, s, "agentfinder_meili_managed_restarts_total", nil); v != 1 {
		t.Errorf("agentfinder_meili_managed_restarts_total = %v, want 1", v)
	}

	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(s.managed.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	poll("/healthz to fail once restarts ran out", func() bool {
		code, body := get("/healthz")
		return code == http.StatusServiceUnavailable && body["status"] == "failed"
	})
}

// checkCamelCase fails for a JSON object key anywhere in v that starts
// with a capital letter (a Go field name without a JSON tag) instead of
// camelCase, as in the rest of the API. Keys that are data (seed names,
// outcomes, reasons such as not_json) are lower case and pass.
func checkCamelCase(t *testing.T, where string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if k != "" && unicode.IsUpper(rune(k[0])) {
				t.Errorf("%s: key %q is not camelCase", where, k)
			}
			checkCamelCase(t, where, val)
		}
	case []any:
		for _, val := range x {
			checkCamelCase(t, where, val)
		}
	}
}
