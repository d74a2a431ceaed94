package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meilisearch/meilisearch-go"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/ingest/meilitest"
)

func TestCrawlCommandNoIndex(t *testing.T) {
	web := crawlertest.Web(t, fixtures.Options{})
	dir := t.TempDir()
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte("# fixture seeds\n"+fixtures.HostLinkOnly+"\n\n"+fixtures.HostCatchAll+"  # html everywhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{
		"--seed", fixtures.HostAcme, "--seeds", seeds, "--no-index",
	}
	base = append(base, newFixturesInfo(web, false).Flags...)
	noEnv := func(string) (string, bool) { return "", false }

	t.Run("json", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		if code := crawlMain(t.Context(), append(base, "--json"), noEnv, &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		var rep struct {
			Catalogs []struct {
				URL      string            `json:"url"`
				Via      string            `json:"via"`
				Status   string            `json:"status"`
				Reason   string            `json:"reason"`
				Records  int               `json:"records"`
				Problems []json.RawMessage `json:"problems"`
			} `json:"catalogs"`
			Registries []map[string]any `json:"registries"`
			Totals     map[string]any   `json:"totals"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatalf("report is not JSON: %v\n%s", err, stdout.String())
		}
		vias := map[string]bool{}
		var notJSON bool
		for _, c := range rep.Catalogs {
			if c.Problems == nil {
				t.Errorf("%s: problems missing (want [])", c.URL)
			}
			if c.Status == "ok" {
				vias[c.Via] = true
			}
			if strings.Contains(c.URL, fixtures.HostCatchAll) && c.Reason == "not_json" {
				notJSON = true
			}
		}
		for _, via := range []string{"wellknown", "linktag", "collection"} {
			if !vias[via] {
				t.Errorf("no ok catalog via %s in %+v", via, rep.Catalogs)
			}
		}
		if !notJSON {
			t.Errorf("catch-all host not reported not_json")
		}
		if len(rep.Registries) == 0 || rep.Totals["seeds"] != float64(3) {
			t.Errorf("registries %v, totals %v", rep.Registries, rep.Totals)
		}
	})

	t.Run("summary", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		if code := crawlMain(t.Context(), base, noEnv, &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		out := stdout.String()
		for _, want := range []string{"VIA", "wellknown", "linktag", "not_json", "registries:", "3 seeds"} {
			if !strings.Contains(out, want) {
				t.Errorf("summary lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("nothing readable exits 1", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		args := append(slices.Clone(base[4:]), "--seed", "nowhere.test") // the network flags, no seeds
		if code := crawlMain(t.Context(), args, noEnv, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "every catalog failed") {
			t.Errorf("exit %d, stderr %q; want 1 and a reason", code, stderr.String())
		}
	})

	t.Run("usage", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		if code := crawlMain(t.Context(), []string{"--no-index"}, noEnv, &stdout, &stderr); code != 2 {
			t.Fatalf("no seeds: exit %d, want 2", code)
		}
		if code := crawlMain(t.Context(), []string{"--seed", "a.test", "--allow-cidr", "nope"}, noEnv, &stdout, &stderr); code != 2 {
			t.Fatalf("bad --allow-cidr: exit %d, want 2", code)
		}
	})
}

func TestCrawlCommandIndexes(t *testing.T) {
	srv, index := meilitest.Index(t, "crawlcmd")
	web := crawlertest.Web(t, fixtures.Options{})
	args := []string{
		"--seed", fixtures.HostAcme, "--index", index, "--no-embeddings",
	}
	args = append(args, newFixturesInfo(web, false).Flags...)
	env := func(k string) (string, bool) {
		if k == "MEILI_API_KEY" {
			return srv.APIKey, srv.APIKey != ""
		}
		return "", false
	}
	noEnv := func(string) (string, bool) { return "", false }
	documents := func(t *testing.T) int64 {
		var res meilisearch.DocumentsResult
		if err := srv.Client.Index(index).GetDocuments(&meilisearch.DocumentsQuery{Limit: 100}, &res); err != nil {
			t.Fatal(err)
		}
		return res.Total
	}

	t.Run("meili-url", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		if code := crawlMain(t.Context(), append(args, "--meili-url", srv.URL), env, &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		if n := documents(t); n < 10 {
			t.Fatalf("index %s holds %d documents after crawling %s, want its catalogs' entries", index, n, fixtures.HostAcme)
		}
	})

	// A data directory held by a process with a managed Meilisearch (the
	// test server stands in for it): crawl indexes through that server
	// instead of starting a second one on the same database.
	t.Run("reuses the data directory holder's meilisearch", func(t *testing.T) {
		if srv.APIKey == "" {
			t.Skip("the test Meilisearch has no key to publish")
		}
		task, err := srv.Client.DeleteIndex(index)
		if err != nil {
			t.Fatal(err)
		}
		if err := meilitest.Wait(srv.Client, task.TaskUID); err != nil { // else the crawl may see it vanish mid-setup
			t.Fatal(err)
		}
		dir := t.TempDir()
		holder, err := lockDataDir(dir, "agentfinder serve")
		if err != nil {
			t.Fatal(err)
		}
		defer holder.release()
		if err := os.MkdirAll(filepath.Join(dir, "meili"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "meili", "master.key"), []byte(srv.APIKey+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := holder.setMeiliURL(srv.URL); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		if code := crawlMain(t.Context(), append(args, "--data-dir", dir), noEnv, &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		if !strings.Contains(stderr.String(), "data directory in use") {
			t.Errorf("log does not say it reused the holder's Meilisearch:\n%s", stderr.String())
		}
		if n := documents(t); n < 10 {
			t.Fatalf("index %s holds %d documents after crawling through the holder's Meilisearch", index, n)
		}
	})

	t.Run("refuses a data directory held without a meilisearch", func(t *testing.T) {
		dir := t.TempDir()
		holder, err := lockDataDir(dir, "agentfinder serve")
		if err != nil {
			t.Fatal(err)
		}
		defer holder.release()
		var stdout, stderr bytes.Buffer
		if code := crawlMain(t.Context(), append(args, "--data-dir", dir), noEnv, &stdout, &stderr); code == 0 {
			t.Fatal("crawl ran on a data directory another process holds")
		}
		want := fmt.Sprintf("is in use by agentfinder serve (pid %d", os.Getpid())
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not name the holder (%q):\n%s", want, stderr.String())
		}
	})
}

func TestCrawlOutcome(t *testing.T) {
	for _, c := range []struct {
		totals crawler.Totals
		want   string
	}{
		{crawler.Totals{Seeds: 1, Catalogs: 3, OK: 1, Failed: 2}, ""},
		{crawler.Totals{Seeds: 1, Catalogs: 1, NotModified: 1}, ""},
		{crawler.Totals{Seeds: 2, Catalogs: 2, Failed: 2}, "every catalog failed (2 of 2)"},
		{crawler.Totals{Seeds: 2}, "no catalog found for 2 seeds"},
	} {
		err := crawlOutcome(&crawler.Report{Totals: c.totals})
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.totals, err, c.want)
		}
	}
}

func TestCrawlProgressLine(t *testing.T) {
	p := newCrawlProgress(io.Discard, 3)
	p.add("https://acme.test:8443/.well-known/ai-catalog.json", 5)
	p.add("https://api.acme.test/catalogs/more.json", 2)
	if got, want := p.describe(), "crawling api.acme.test: 7 records (3 seeds)"; got != want {
		t.Errorf("progress %q, want %q", got, want)
	}
}
