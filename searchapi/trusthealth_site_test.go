package searchapi

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestTrustHealthSite: the search page's "Signed by the publisher" and
// "Endpoint up" toggles are links (every state a URL, no script needed)
// with counts, they filter as signedOnly and liveOnly do and carry over to
// the next search; each result and the entry's page show trust and health.
func TestTrustHealthSite(t *testing.T) {
	f := newTrustFixture(t, true, nil)
	q := "/?q=" + url.QueryEscape(bindingsText) + "&federation=none"
	p := f.get(t, q)
	names := resultNames(p.doc)
	if len(names) < 5 {
		t.Fatalf("unfiltered page: %v", names)
	}
	toggle := func(p sitePage, label string) string {
		t.Helper()
		l := links(p.doc, label)
		if len(l) != 1 {
			t.Fatalf("%q links: %v", label, l)
		}
		return l[0]
	}
	signedURL := toggle(p, "Signed by the publisher")
	if u, _ := url.Parse(signedURL); u.Query().Get("signed") != "1" || u.Query().Get("q") != bindingsText {
		t.Fatalf("signed toggle %q", signedURL)
	}
	if !slices.ContainsFunc(texts(p.doc, "toggle"), func(s string) bool { return s == "Signed by the publisher 1" }) {
		t.Errorf("toggles %q: want the signed count 1", texts(p.doc, "toggle"))
	}
	// A result line adds to the publisher's verified mark only what it does
	// not say: signed, a failed check, a probed endpoint's status.
	metas := strings.Join(texts(p.doc, "meta"), "\n")
	for _, want := range []string{"signed by the publisher", "trust check failed", "endpoint up", "endpoint down", "endpoint needs credentials"} {
		if !strings.Contains(metas, want) {
			t.Errorf("results do not say %q:\n%s", want, metas)
		}
	}
	for _, not := range []string{"served from the publisher's domain", "endpoint not checked"} {
		if strings.Contains(metas, not) {
			t.Errorf("results say %q:\n%s", not, metas)
		}
	}

	signed := f.get(t, signedURL)
	if got := resultNames(signed.doc); !slices.Equal(got, []string{"Claims Triage Assistant"}) {
		t.Fatalf("signed only: %v", got)
	}
	if rm := links(signed.doc, "Signed by the publisher"); len(rm) != 2 { // the toggle and the active filter
		t.Fatalf("signed page links %v", rm)
	}
	live := f.get(t, toggle(signed, "Endpoint up at the last check"))
	if got := resultNames(live.doc); !slices.Equal(got, []string{"Claims Triage Assistant"}) {
		t.Fatalf("signed and live: %v", got)
	}
	liveOnly := f.get(t, q+"&live=1")
	got := resultNames(liveOnly.doc)
	slices.Sort(got)
	if !slices.Equal(got, []string{"Claims Triage Assistant", "Global Weather Forecast"}) {
		t.Fatalf("live only: %v", got)
	}
	// The header form carries the toggles to the next search.
	hidden := false
	walkInputs(liveOnly, func(name, value string) { hidden = hidden || (name == "live" && value == "1") })
	if !hidden {
		t.Error("the search form does not keep live=1")
	}
	if bad := f.get(t, q+"&signed=maybe"); bad.status != 400 {
		t.Errorf("signed=maybe: %d", bad.status)
	}

	d := f.get(t, "/agents/"+url.PathEscape("urn:ai:acme.com:mcp:records"))
	body := strings.Join(strings.Fields(d.body), " ")
	for _, want := range []string{"none: a signature or digest check failed", "the signature does not verify (bad_signature)", "endpoint needs credentials", "HTTP 401", "Neither trust nor health enters the relevance score."} {
		if !strings.Contains(body, want) {
			t.Errorf("detail page lacks %q", want)
		}
	}
	d = f.get(t, "/agents/"+url.PathEscape("urn:ai:filler.example:agent:assistant-03"))
	body = strings.Join(strings.Fields(d.body), " ")
	for _, want := range []string{"served from the publisher&#39;s domain", "endpoint not checked"} {
		if !strings.Contains(body, want) {
			t.Errorf("detail page lacks %q", want)
		}
	}
	d = f.get(t, "/agents/"+url.PathEscape("urn:ai:acme.com:agent:claims"))
	for _, want := range []string{"did:web:acme.com", "42 ms"} {
		if !strings.Contains(d.body, want) {
			t.Errorf("claims page lacks %q", want)
		}
	}
}

// walkInputs calls fn with the name and value of every <input> of p.
func walkInputs(p sitePage, fn func(name, value string)) {
	walk(p.doc, func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "input" {
			fn(attr(n, "name"), attr(n, "value"))
		}
	})
}
