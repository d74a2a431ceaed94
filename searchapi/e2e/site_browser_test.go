package e2e_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/agentfinder/agentfinder/searchapi/web"
)

// chromiumNames are the browsers the browser test looks for on PATH, after
// $AGENTFINDER_CHROMIUM.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// findChromium returns the browser to drive, or "".
func findChromium() string {
	if p := os.Getenv("AGENTFINDER_CHROMIUM"); p != "" {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	for _, n := range chromiumNames {
		if path, err := exec.LookPath(n); err == nil {
			return path
		}
	}
	return ""
}

// screenshotDir is where the browser test saves its screenshots:
// $AGENTFINDER_TEST_OUTPUT/browser, else .test-output/browser at the
// repository root (git-ignored).
func screenshotDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("AGENTFINDER_TEST_OUTPUT")
	if root == "" {
		root = filepath.Join("..", "..", ".test-output")
	}
	dir := filepath.Join(root, "browser")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSiteInBrowser drives the search site in headless Chromium, once with
// JavaScript and once without: the home page, a search, a facet, a page
// forward and back, a detail page, and an entry whose catalog text holds
// script (which must not run); then, over the trust fixture, the signed
// and live toggles on and off (toggleTour). It saves a screenshot of every
// step.
func TestSiteInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	bin := findChromium()
	if bin == "" {
		msg := "SKIPPED TestSiteInBrowser: no headless Chromium found (looked for $AGENTFINDER_CHROMIUM, " +
			strings.Join(chromiumNames, ", ") + " on PATH). `make test` installs Debian's chromium when it runs as root with apt-get."
		fmt.Fprintf(os.Stderr, "\n*** %s ***\n\n", msg)
		t.Skip(msg)
	}
	site := newSiteServer(t)
	trust := newTrustServer(t, true)
	dir := screenshotDir(t)
	for _, js := range []bool{true, false} {
		name := "javascript"
		if !js {
			name = "no-javascript"
		}
		t.Run(name, func(t *testing.T) {
			b := newBrowser(t, bin, site.URL, js, filepath.Join(dir, name))
			b.tour()
			b.toggleTour(trust.URL)
		})
	}
}

// browser is one headless Chromium tab on the site.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
	js   bool
	shot string // screenshot file prefix
	n    int
}

func newBrowser(t *testing.T, bin, base string, js bool, shot string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		// A page restored from the back-forward cache fires no load event,
		// which NavigateBack waits for.
		chromedp.Flag("disable-features", "BackForwardCache"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	b := &browser{t: t, ctx: bctx, base: base, js: js, shot: shot}
	// Start the browser and the tab, then switch JavaScript off for it.
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	if !js {
		if _, err := chromedp.Call(bctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatalf("disable JavaScript: %v", err)
		}
	}
	return b
}

// load runs a step that navigates and waits for the new page's load event.
func (b *browser) load(step string, a chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.WaitEvent(page.LoadEventFired, nil, a)); err != nil {
		b.t.Fatalf("%s: %v", step, err)
	}
}

// do runs a step that waits for what it needs by itself.
func (b *browser) do(step string, a chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, a); err != nil {
		b.t.Fatalf("%s: %v", step, err)
	}
}

// steps is one action of several, run in order.
func steps(as ...chromedp.Action[chromedp.Void]) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, a := range as {
			if _, err := a(ctx, t); err != nil {
				return err
			}
		}
		return nil
	})
}

// snap saves a full-page screenshot named after the step.
func (b *browser) snap(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	b.n++
	file := fmt.Sprintf("%s-%02d-%s.png", b.shot, b.n, name)
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// location is the tab's URL, parsed.
func (b *browser) location() *url.URL {
	b.t.Helper()
	loc, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatalf("location: %v", err)
	}
	u, err := url.Parse(loc)
	if err != nil {
		b.t.Fatal(err)
	}
	return u
}

// texts returns the text of every element the CSS selector sel matches.
func (b *browser) texts(sel string) []string {
	b.t.Helper()
	return textsOf(b, chromedp.CSSAll(sel))
}

// textsOf returns the text of every element sel matches, each with its
// white space collapsed.
func textsOf[S chromedp.Selectable](b *browser, sel S) []string {
	b.t.Helper()
	nodes, err := chromedp.Run(b.ctx, chromedp.Nodes(sel, chromedp.AtLeast(0)))
	if err != nil {
		b.t.Fatalf("nodes %v: %v", sel, err)
	}
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		s, err := chromedp.Run(b.ctx, chromedp.TextContent(chromedp.NodeIDs{n.NodeID}))
		if err != nil {
			b.t.Fatalf("text of %v: %v", sel, err)
		}
		out = append(out, strings.Join(strings.Fields(s), " "))
	}
	return out
}

// tour is what a person does on the site.
func (b *browser) tour() {
	t := b.t
	b.load("home", chromedp.Navigate(b.base+"/"))
	if got := b.texts("h1"); len(got) != 1 || got[0] != "Find an agent for the job" {
		t.Fatalf("home heading %v", got)
	}
	b.snap("home")

	// Search by typing in the box and pressing Enter.
	b.load("search", chromedp.SendKeys(chromedp.CSS("#q"), "weather\n"))
	if q := b.location().Query().Get("q"); q != "weather" {
		t.Fatalf("after searching the URL has q=%q", q)
	}
	all := b.texts(".result h2")
	if len(all) < 2 {
		t.Fatalf("weather results %v", all)
	}
	b.snap("results")

	// Narrow by the MCP server type facet.
	b.load("facet", chromedp.Click(chromedp.CSS(`.facet a[href*="type=application%2Fmcp-server"]`)))
	if typ := b.location().Query().Get("type"); typ != "application/mcp-server+json" {
		t.Fatalf("after the facet the URL has type=%q", typ)
	}
	narrowed := b.texts(".result h2")
	if len(narrowed) != 1 || len(narrowed) >= len(all) {
		t.Fatalf("with the MCP facet: %v (before: %v)", narrowed, all)
	}
	b.snap("facet")

	// Remove the facet, then search for something with several pages.
	b.load("remove facet", chromedp.Click(chromedp.CSS(".active a")))
	if b.location().Query().Has("type") {
		t.Fatalf("the facet was not removed: %s", b.location())
	}
	b.load("second search", steps(chromedp.Clear(chromedp.CSS("#q")), chromedp.SendKeys(chromedp.CSS("#q"), "general assistant\n")))
	page1 := b.texts(".result h2")
	if len(page1) != web.PageSize {
		t.Fatalf("page 1: %v", page1)
	}
	b.load("next page", chromedp.Click(chromedp.CSS(`a[rel="next"]`)))
	if p := b.location().Query().Get("page"); p != "2" {
		t.Fatalf("after Next the URL has page=%q", p)
	}
	page2 := b.texts(".result h2")
	if len(page2) == 0 || page2[0] == page1[0] {
		t.Fatalf("page 2 %v repeats page 1 %v", page2, page1)
	}
	b.snap("page-2")
	b.do("back", chromedp.NavigateBack()) // waits for the load itself
	if back := b.texts(".result h2"); strings.Join(back, ",") != strings.Join(page1, ",") || b.location().Query().Has("page") {
		t.Fatalf("back: %v at %s, want page 1 %v", back, b.location(), page1)
	}
	b.do("forward", chromedp.NavigateForward())
	if fwd := b.texts(".result h2"); strings.Join(fwd, ",") != strings.Join(page2, ",") {
		t.Fatalf("forward: %v, want page 2 %v", fwd, page2)
	}

	// Open an entry: the MCP server's page with its client configuration.
	b.load("search tickets", chromedp.Navigate(b.base+"/?q=support+tickets"))
	b.load("detail", chromedp.Click(chromedp.CSS(".result h2 a")))
	if !strings.HasPrefix(b.location().Path, "/agents/") {
		t.Fatalf("detail at %s", b.location())
	}
	if cfg := b.texts("#mcp-config"); len(cfg) != 1 || !strings.Contains(cfg[0], `"mcpServers"`) {
		t.Fatalf("MCP configuration %v", cfg)
	}
	// The copy buttons are the script's: shown with JavaScript, absent
	// without; one per configuration (local commands, and the remote form).
	copyBtn := len(b.texts("button[data-copy]:not([hidden])"))
	if b.js != (copyBtn == 2) {
		t.Errorf("visible copy buttons: %d with JavaScript %v", copyBtn, b.js)
	}
	b.snap("detail")

	// About this registry, and a page that is not there.
	b.load("about", chromedp.Click(chromedp.CSS(`nav a[href="/about"]`)))
	if got := b.texts("main h1"); len(got) != 1 || got[0] != "About this registry" {
		t.Fatalf("about heading %v", got)
	}
	b.snap("about")
	b.load("missing", chromedp.Navigate(b.base+"/agents/urn:ai:nowhere.example:agent:none"))
	if got := b.texts("main h1"); len(got) != 1 || got[0] != "Not found" {
		t.Fatalf("missing entry heading %v", got)
	}
	b.snap("not-found")

	// Catalog text with script in it shows as text, and nothing of it runs.
	b.load("untrusted results", chromedp.Navigate(b.base+"/?q=cheap+flights+booker&federation=none"))
	names := b.texts(".result h2")
	if len(names) == 0 || !strings.Contains(strings.Join(names, "|"), "<script>window.__pwned=1</script><b>Evil</b> Flight Booker") {
		t.Fatalf("the untrusted name is not shown as text: %v", names)
	}
	b.snap("untrusted-results")
	b.load("untrusted detail", chromedp.Navigate(b.base+"/agents/urn:ai:tools.example.org:agent:evil"))
	b.snap("untrusted-detail")
	if n := len(b.texts("script:not([src])")); n != 0 {
		t.Errorf("%d inline scripts in the page", n)
	}
	if b.js {
		pwned, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`typeof window.__pwned !== "undefined"`))
		if err != nil {
			t.Fatal(err)
		}
		if pwned {
			t.Errorf("script from catalog text ran")
		}
	}

	// The results page on a phone-sized screen.
	b.do("phone screen", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.load("mobile", chromedp.Navigate(b.base+"/?q=healthcare&federation=none"))
	b.snap("mobile-results")
}
