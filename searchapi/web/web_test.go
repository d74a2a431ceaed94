package web

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTypeLabel(t *testing.T) {
	for _, tc := range []struct{ in, label, class string }{
		{"application/a2a-agent-card+json", "A2A agent", "a2a"},
		{"application/a2a-agent-card+json; version=0.3", "A2A agent", "a2a"},
		{"application/mcp-server-card+json", "MCP server", "mcp"},
		{"application/ai-skill+md", "skill", "skill"},
		{"application/ai-catalog+json", "bundle", "bundle"},
		{"application/ai-registry", "registry", "registry"},
		{"application/x-unknown+json", "application/x-unknown+json", "other"},
		{"", "unknown type", "other"},
	} {
		if l, c := TypeLabel(tc.in); l != tc.label || c != tc.class {
			t.Errorf("TypeLabel(%q) = %q, %q; want %q, %q", tc.in, l, c, tc.label, tc.class)
		}
	}
}

func TestAgo(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Hour, "just now"},
		{20 * time.Second, "just now"},
		{time.Minute, "1 minute ago"},
		{30 * time.Minute, "30 minutes ago"},
		{3 * time.Hour, "3 hours ago"},
		{47 * time.Hour, "47 hours ago"},
		{72 * time.Hour, "3 days ago"},
		{90 * 24 * time.Hour, "3 months ago"},
		{800 * 24 * time.Hour, "2 years ago"},
	} {
		if got := Ago(now.Add(-tc.d), now); got != tc.want {
			t.Errorf("Ago(-%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
	if got := Ago(time.Time{}, now); got != "at an unknown time" {
		t.Errorf("Ago(zero) = %q", got)
	}
}

func TestOneLine(t *testing.T) {
	if got := OneLine("a\n  b\tc", 10); got != "a b c" {
		t.Errorf("OneLine collapses to %q", got)
	}
	long := strings.Repeat("word ", 60)
	got := OneLine(long, 50)
	if !strings.HasSuffix(got, "…") || len([]rune(got)) > 51 || strings.HasSuffix(strings.TrimSuffix(got, "…"), " ") {
		t.Errorf("OneLine(long, 50) = %q", got)
	}
}

func TestHighlight(t *testing.T) {
	match := func(w string) bool { return w == "flight" || w == "tokyo" }
	var b strings.Builder
	for _, s := range Highlight("Book a Flight to Tokyo, now!", match) {
		if s.Hit {
			b.WriteString("[" + s.Text + "]")
		} else {
			b.WriteString(s.Text)
		}
	}
	if got, want := b.String(), "Book a [Flight] to [Tokyo], now!"; got != want {
		t.Errorf("Highlight = %q, want %q", got, want)
	}
}

// TestHealthLabel: a record probed but neither up nor down is not called
// unchecked; one never probed is.
func TestHealthLabel(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var x entry
	x.Health.Status = "unknown"
	if v := x.healthView(now); v.Label != "endpoint not checked" || v.Checked != "" {
		t.Errorf("never probed: %+v", v)
	}
	x.Health.CheckedAt, x.Health.Detail = now.Add(-2*time.Minute), "a2a: HTTP 404"
	if v := x.healthView(now); v.Label != "endpoint not confirmed" || v.Checked == "" || v.Detail != "a2a: HTTP 404" {
		t.Errorf("probed, failing: %+v", v)
	}
}

func TestWithout(t *testing.T) {
	if got := without([]string{"a", "b", "c"}, []string{"b"}); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("without = %v", got)
	}
}

func TestToggleParam(t *testing.T) {
	v := url.Values{"q": {"weather"}, "type": {"a", "b"}, "page": {"3"}}
	if got := ToggleParam(v, "type", "a"); got != "/?q=weather&type=b" {
		t.Errorf("remove: %s", got)
	}
	if got := ToggleParam(v, "type", "c"); got != "/?q=weather&type=a&type=b&type=c" {
		t.Errorf("add: %s", got)
	}
	if got := SetParam(v, "verified", "1"); got != "/?q=weather&type=a&type=b&verified=1" {
		t.Errorf("set: %s", got)
	}
	if got := PageURL(v, 1); got != "/?q=weather&type=a&type=b" {
		t.Errorf("page 1: %s", got)
	}
	if v.Get("page") != "3" || len(v["type"]) != 2 {
		t.Errorf("the URL values were changed: %v", v)
	}
}

// TestRenderEscapes renders a result holding markup through the real
// templates: it comes out as text.
func TestRenderEscapes(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]json.RawMessage{
		"identifier":  json.RawMessage(`"urn:ai:x.example:agent:a"`),
		"displayName": json.RawMessage(`"<script>alert(1)</script>"`),
		"description": json.RawMessage(`"<img src=x onerror=alert(2)>"`),
		"source":      json.RawMessage(`"javascript:alert(3)"`),
		"score":       json.RawMessage(`250`),
	}
	res := NewResult(e, false, time.Now(), func(string) bool { return false })
	if res.SourceURL != "" || res.Relevance != 100 {
		t.Errorf("source URL %q, relevance %d", res.SourceURL, res.Relevance)
	}
	w := httptest.NewRecorder()
	if err := r.Render(w, 200, "search", SearchView{Page: Page{Query: "q"}, Searched: true, Results: []Result{res}, PageNum: 1, Start: 1}); err != nil {
		t.Fatal(err)
	}
	body := w.Body.String()
	if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") || strings.Contains(body, `href="javascript`) {
		t.Errorf("markup from an entry became HTML:\n%s", body)
	}
	if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the name is not shown as text")
	}
	if w.Header().Get("Content-Security-Policy") != ContentSecurityPolicy {
		t.Errorf("CSP %q", w.Header().Get("Content-Security-Policy"))
	}
}

func TestResultCount(t *testing.T) {
	for _, c := range []struct {
		shown int
		more  bool
		want  string
	}{{0, false, "0 results"}, {1, false, "1 result"}, {7, false, "7 results"}, {10, true, "more than 10 results"}} {
		if got := resultCount(c.shown, c.more); got != c.want {
			t.Errorf("resultCount(%d, %v) = %q, want %q", c.shown, c.more, got, c.want)
		}
	}
}
