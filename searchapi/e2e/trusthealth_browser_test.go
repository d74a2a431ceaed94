package e2e_test

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/agentfinder/agentfinder/searchapi/searchtest"
	"github.com/chromedp/chromedp"
)

// pageToggle is one of the search page's on/off links as a person sees it:
// its label, the URL parameter it sets, and the mark (CSS class and text)
// every result it keeps shows.
type pageToggle struct {
	label, param string
	markClass    string
	markText     string
}

var (
	signedToggle = pageToggle{"Signed by the publisher", "signed", "tr-signed", "signed by the publisher"}
	liveToggle   = pageToggle{"Endpoint up at the last check", "live", "he-up", "endpoint up"}
)

// xpath finds the toggle's link (not the "filters in force" link of the
// same label).
func (p pageToggle) xpath() string {
	return `//p[@class="toggle"]/a[contains(., "` + p.label + `")]`
}

// toggleTour follows the signed and live toggles of a search over the
// trust fixture at base: signed on, live on too, signed off, live off.
// Each click is one page load; after each the URL carries exactly the
// toggles that are on, every result shows the mark of each of them, and a
// toggle turned on leaves as many results as it counted.
func (b *browser) toggleTour(base string) {
	t := b.t
	b.load("trust search", chromedp.Navigate(base+"/?q="+url.QueryEscape(searchtest.BindingsText)+"&federation=none"))
	all := b.texts(".result h2")
	if len(all) < 5 {
		t.Fatalf("unfiltered trust results %v", all)
	}
	liveCount := b.toggleCount(liveToggle)
	b.snap("toggles-off")

	signedOnly := b.clickToggle(signedToggle, signedToggle)
	if len(signedOnly) == 0 || len(signedOnly) >= len(all) {
		t.Fatalf("signed only: %v (all: %v)", signedOnly, all)
	}
	b.snap("toggle-signed")
	if both := b.clickToggle(liveToggle, signedToggle, liveToggle); len(both) == 0 {
		t.Fatalf("signed and live: none")
	}
	b.snap("toggle-signed-live")
	liveOnly := b.clickToggle(signedToggle, liveToggle)
	if len(liveOnly) != liveCount || len(liveOnly) >= len(all) {
		t.Fatalf("live only: %v, want the %d the unfiltered page counted (all: %v)", liveOnly, liveCount, all)
	}
	b.snap("toggle-live")
	if off := b.clickToggle(liveToggle); !slices.Equal(off, all) {
		t.Fatalf("both toggles off: %v, want the unfiltered %v", off, all)
	}
}

// clickToggle clicks the toggle click and checks the page it loads: the
// toggles on (and only those) are in the URL as param=1 and shown
// selected, every result shows the mark of each toggle on, and when the
// click turned click on there are as many results as it counted before.
// It returns the result names.
func (b *browser) clickToggle(click pageToggle, on ...pageToggle) []string {
	t := b.t
	t.Helper()
	turnsOn := slices.Contains(on, click)
	want := 0
	if turnsOn {
		want = b.toggleCount(click)
	}
	b.load("toggle "+click.param, chromedp.Click(chromedp.Search(click.xpath())))
	q := b.location().Query()
	names := b.texts(".result h2")
	metas := b.texts(".result .meta")
	for _, p := range []pageToggle{signedToggle, liveToggle} {
		isOn := slices.Contains(on, p)
		if got, wantParam := q.Get(p.param), map[bool]string{true: "1"}[isOn]; got != wantParam {
			t.Fatalf("after clicking %q the URL %s has %s=%q, want %q", click.label, b.location(), p.param, got, wantParam)
		}
		if b.selected(p) != isOn {
			t.Errorf("after clicking %q the %q toggle is not shown selected=%v", click.label, p.label, isOn)
		}
		if !isOn {
			continue
		}
		if marked := b.texts(".result .meta ." + p.markClass); len(marked) != len(names) {
			t.Errorf("%s=1: %d of %d results marked %s: %q", p.param, len(marked), len(names), p.markClass, metas)
		}
		for i, m := range metas {
			if !strings.Contains(m, p.markText) {
				t.Errorf("%s=1: result %d (%s) does not say %q: %q", p.param, i, names[i], p.markText, m)
			}
		}
	}
	if turnsOn && len(names) != want {
		t.Errorf("the %q toggle counted %d, the page shows %d results: %v", click.label, want, len(names), names)
	}
	return names
}

// toggleCount is the count the toggle shows (0 when it shows none).
func (b *browser) toggleCount(p pageToggle) int {
	b.t.Helper()
	n := textsOf(b, chromedp.Search(p.xpath()+`/span[@class="n"]`))
	if len(n) == 0 {
		return 0
	}
	c, err := strconv.Atoi(n[0])
	if err != nil || len(n) != 1 {
		b.t.Fatalf("%q toggle count %q", p.label, n)
	}
	return c
}

// selected reports whether the toggle is shown switched on.
func (b *browser) selected(p pageToggle) bool {
	b.t.Helper()
	return len(textsOf(b, chromedp.Search(p.xpath()+`[@aria-current="true"]`))) == 1
}
