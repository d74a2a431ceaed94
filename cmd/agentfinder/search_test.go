package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestSearchCommand(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/search" {
			http.Error(w, "wrong endpoint", http.StatusNotFound)
			return
		}
		b, _ := io.ReadAll(r.Body)
		got = nil
		_ = json.Unmarshal(b, &got)
		if strings.Contains(string(b), "bad") {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"code":"invalid_request","message":"federation must be auto","correlationId":"c1"}}`)
			return
		}
		io.WriteString(w, `{"results":[{"identifier":"urn:ai:acme.test:agent:flights","displayName":"Flight Booker","type":"application/a2a-agent-card+json","score":97,"source":"http://127.0.0.1:8080/"}],
			"referrals":[{"identifier":"urn:ai:hub.test:registry:main","displayName":"Hub","type":"application/ai-registry","url":"https://hub.test/search"}],"pageToken":"tok"}`)
	}))
	defer srv.Close()
	env := func(string) (string, bool) { return "", false }

	for _, tc := range []struct {
		name      string
		args      []string
		code      int
		out       []string
		wantQuery map[string]any
	}{
		{"table", []string{"--server", srv.URL, "book", "a", "flight", "--type", "application/a2a-agent-card+json"}, 0,
			[]string{" 97  Flight Booker  [a2a-agent-card]  trust -  health -", "urn:ai:acme.test:agent:flights  from http://127.0.0.1:8080/", "Referrals:", "https://hub.test/search", "--page-token tok"},
			map[string]any{"text": "book a flight", "type": "application/a2a-agent-card+json"}},
		{"wide", []string{"--server", srv.URL, "--wide", "book", "a", "flight"}, 0,
			[]string{"SCORE", "IDENTIFIER", "97", "urn:ai:acme.test:agent:flights", "Flight Booker", "application/a2a-agent-card+json"},
			map[string]any{"text": "book a flight"}},
		{"json", []string{"--server", srv.URL, "--json", "--publisher", "acme.test", "--compliance", "hipaa", "--federation", "none", "flights"}, 0,
			[]string{`"identifier":"urn:ai:acme.test:agent:flights"`},
			map[string]any{"text": "flights", "publisher": "acme.test", "compliance": "hipaa", "federation": "none"}},
		{"server error", []string{"--server", srv.URL, "bad"}, 1, []string{"invalid_request", "c1"}, nil},
		{"no text", []string{"--server", srv.URL}, 2, []string{"missing search TEXT"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := searchMain(t.Context(), tc.args, env, &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tc.code, stderr.String())
			}
			all := stdout.String() + stderr.String()
			for _, want := range tc.out {
				if !strings.Contains(all, want) {
					t.Errorf("output lacks %q:\n%s", want, all)
				}
			}
			if tc.wantQuery != nil {
				q, _ := got["query"].(map[string]any)
				for k, v := range tc.wantQuery {
					if q[k] != v {
						t.Errorf("query.%s = %v, want %v (sent %v)", k, q[k], v, got)
					}
				}
				if got["pageSize"] != float64(10) {
					t.Errorf("pageSize = %v", got["pageSize"])
				}
			}
		})
	}
}

func TestCLIEnvironment(t *testing.T) {
	c := newCLI("x", "")
	addr := c.fs.String("addr", "127.0.0.1:8080", "listen address")
	seeds := &stringList{}
	c.fs.Var(seeds, "seed", "seed")
	flagWins := c.fs.String("schedule", "@every 1h", "schedule")
	url := c.fs.String("meili-url", "", "meilisearch")
	c.setEnv("meili-url", "MEILI_URL")
	env := map[string]string{
		"AGENTFINDER_ADDR":     "0.0.0.0:9000",
		"AGENTFINDER_SEED":     "a.test, b.test\nc.test",
		"AGENTFINDER_SCHEDULE": "@every 5m",
		"MEILI_URL":            "http://m:7700",
	}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if err := c.parse([]string{"--schedule", "@every 2s", "pos1", "--", "--not-a-flag"}, getenv); err != nil {
		t.Fatal(err)
	}
	if *addr != "0.0.0.0:9000" || *flagWins != "@every 2s" || *url != "http://m:7700" {
		t.Fatalf("addr %q schedule %q meili %q", *addr, *flagWins, *url)
	}
	if strings.Join(*seeds, "|") != "a.test|b.test|c.test" {
		t.Fatalf("seeds from env = %q", *seeds)
	}
	if strings.Join(c.args, "|") != "pos1|--not-a-flag" {
		t.Fatalf("positional = %q", c.args)
	}
	var help bytes.Buffer
	c.usage(&help)
	for _, want := range []string{"--addr", "AGENTFINDER_ADDR", "MEILI_URL", "default 127.0.0.1:8080"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// TestSearchCommandExtensions: the request extensions have flags, the table
// has a description column and the evidence, and referral rows line up.
func TestSearchCommandExtensions(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = nil
		_ = json.Unmarshal(b, &got)
		io.WriteString(w, `{"results":[{"identifier":"urn:ai:acme.test:agent:oncall","displayName":"On-call Copilot","description":"Pages the right engineer\nand drafts the incident timeline.","type":"application/a2a-agent-card+json","score":91,"source":"http://127.0.0.1:8080/",
			"trust":{"level":"signed","signer":"did:web:acme.test"},"health":{"status":"auth_required"},
			"evidence":{"matchedTags":["sre"],"matchedExamples":[{"text":"who is on call for payments","score":0.8}],"matchedTerms":["incident"],"scoreComponents":{"keyword":0.7,"semantic":0.9},"freshness":{}}}],
			"referrals":[{"identifier":"urn:ai:hub.test:registry:main","displayName":"Hub","type":"application/ai-registry","url":"https://hub.test/search"},
			{"identifier":"urn:ai:a-much-longer-name.test:registry:x","displayName":"Long Registry Name","type":"application/ai-registry","url":"https://long.test/search"}]}`)
	}))
	defer srv.Close()
	env := func(string) (string, bool) { return "", false }
	var stdout, stderr bytes.Buffer
	args := []string{"--server", srv.URL, "--tag", "sre", "--tag", "on-call", "--prefer-tag", "pager", "--verified-only", "--signed-only", "--live-only", "--evidence", "--stale", "incident", "response"}
	if code := searchMain(t.Context(), args, env, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	q, _ := got["query"].(map[string]any)
	if fmt.Sprint(q["requiredTags"]) != "[sre on-call]" || fmt.Sprint(q["preferredTags"]) != "[pager]" || q["verifiedOnly"] != true ||
		q["signedOnly"] != true || q["liveOnly"] != true || got["includeEvidence"] != true || got["includeStale"] != true {
		t.Errorf("request %v", got)
	}
	out := stdout.String()
	for _, want := range []string{"trust signed  health auth_required", "Pages the right engineer and drafts", "why: terms incident; tags sre; 1 example; keyword 0.7 semantic 0.9", "example: who is on call for payments"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	_, refs, _ := strings.Cut(out, "Referrals:\n")
	lines := strings.Split(strings.TrimRight(refs, "\n"), "\n")
	if len(lines) != 2 || strings.Index(lines[0], "https://") != strings.Index(lines[1], "https://") {
		t.Errorf("referral URLs do not line up:\n%s", refs)
	}
}

// TestSearchFitsColumns: without --wide every line of the answer fits 100
// columns, however long the names, descriptions and evidence; --wide keeps
// them whole on one row.
func TestSearchFitsColumns(t *testing.T) {
	long := strings.Repeat("very long words ", 30)
	body := fmt.Sprintf(`{"results":[{"identifier":"urn:ai:a-rather-long-publisher-domain.example.test:department:team:%s","displayName":%q,"description":%q,
		"type":"application/a2a-agent-card+json","score":88,"source":"https://registry.example.test/catalogs/a/very/long/path/ai-catalog.json",
		"trust":{"level":"signed"},"health":{"status":"up"},"evidence":{"matchedTags":["a","b"],"matchedExamples":[{"text":%q}],"matchedTerms":["x"],"scoreComponents":{"keyword":0.5}}}]}`,
		strings.Repeat("x", 60), long, long, long)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }))
	defer srv.Close()
	env := func(string) (string, bool) { return "", false }
	for _, c := range []struct {
		args    []string
		longest func(int) bool
	}{
		{[]string{"--server", srv.URL, "--evidence", "q"}, func(n int) bool { return n <= 100 }},
		{[]string{"--server", srv.URL, "--evidence", "--wide", "q"}, func(n int) bool { return n > 400 }},
	} {
		var stdout, stderr bytes.Buffer
		if code := searchMain(t.Context(), c.args, env, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr.String())
		}
		longest := 0
		for _, l := range strings.Split(stdout.String(), "\n") {
			longest = max(longest, len([]rune(l)))
		}
		if !c.longest(longest) {
			t.Errorf("%v: longest line %d columns:\n%s", c.args, longest, stdout.String())
		}
	}
}
