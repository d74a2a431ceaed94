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
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/searchapi/authn"
)

// The leak test's world: a catalog only the hr group may see, a public
// catalog on another host that claims one of its identifiers and one that
// does not exist, and the public shop.
const (
	hrHost   = "e2e-hr.test"
	evilHost = "e2e-evil.test"
	hrKey    = "leak-hr-key-0123456789"
	finKey   = "leak-fin-key-0123456789"
	// salaryBands is a hidden identifier the evil catalog claims too;
	// noSuchRecord exists only as the evil catalog's claim; orgChart is
	// hidden and claimed by nobody else.
	salaryBands  = "urn:ai:e2e-hr.test:people:salary-bands"
	noSuchRecord = "urn:ai:e2e-hr.test:people:no-such-record"
	orgChart     = "urn:ai:e2e-hr.test:people:org-chart"
	// payrollTools is a hidden MCP server (listed by the MCP Registry API
	// as payrollToolsName).
	payrollTools     = "urn:ai:e2e-hr.test:mcp:payroll-tools"
	payrollToolsName = "test.e2e-hr/mcp-payroll-tools"
	invoicer         = "urn:ai:e2e-shop.test:agent:quokka-invoicer"
	// orgChartCard is hr's bare A2A card, the org chart's: crawled beside
	// the catalog, it is merged into the org chart's record, and its URL,
	// the card's own identifier, is an alias of that hidden record.
	orgChartCard = "https://" + hrHost + fixtures.PathAgentCard
)

// hiddenTrace matches anything that only the hidden catalog holds: its
// records' words, its URL, its hidden-only identifier (any spelling).
var hiddenTrace = regexp.MustCompile(`(?i)zebrafinch|e2e-hr\.test/|e2e-hr\.test%2f|people:org-chart|people%3aorg-chart`)

func leakCatalogs(web *fixtures.Web) {
	entry := func(id, name, desc string) map[string]any {
		return map[string]any{"identifier": id, "displayName": name, "type": "application/a2a-agent-card+json",
			"url":         "https://" + hrHost + "/agents/" + strings.ToLower(strings.ReplaceAll(name, " ", "-")) + ".json",
			"description": desc, "tags": []string{"payroll"}, "updatedAt": "2026-01-01T00:00:00Z"}
	}
	mcp := entry(payrollTools, "Zebrafinch Payroll Tools", "Zebrafinch payroll tools; payroll invoices.")
	mcp["type"] = "application/mcp-server+json"
	// Its server card, inline, declares a tool: the tools index must hide
	// it as the records index hides the server.
	delete(mcp, "url")
	mcp["data"] = map[string]any{"name": "Zebrafinch Payroll Tools", "description": "Zebrafinch payroll tools.",
		"tools": []map[string]any{{"name": "zebrafinch_payslips", "description": "Zebrafinch payslips for payroll invoices."}}}
	cat := func(entries ...map[string]any) []byte {
		b, _ := json.Marshal(map[string]any{"specVersion": "1.0", "entries": entries})
		return b
	}
	org := entry(orgChart, "Zebrafinch Org Chart", "Zebrafinch reporting lines; payroll invoices.")
	org["url"] = orgChartCard
	web.SetFile(hrHost, fixtures.PathAgentCard, []byte(`{"name":"Zebrafinch Org Chart","description":"Zebrafinch reporting lines.",
		"version":"1.0","url":"https://e2e-hr.test/a2a/org-chart","skills":[{"id":"chart","name":"Org chart","tags":["payroll"]}]}`))
	web.SetFile(hrHost, wellKnown, cat(
		entry(salaryBands, "Zebrafinch Salary Bands", "Zebrafinch pay ranges for every grade; payroll invoices."),
		org,
		// hr's own copy of a public identifier: it loses to the
		// publisher's record, and must not show among its lost claims.
		entry(invoicer, "Zebrafinch Invoicer Copy", "Zebrafinch copy of the shop's invoicer; payroll invoices."),
		mcp,
	))
	web.SetFile(evilHost, wellKnown, cat(
		entry(salaryBands, "Evil Claim One", "A claim on another publisher's namespace; payroll invoices."),
		entry(noSuchRecord, "Evil Claim Two", "A claim on another publisher's namespace; payroll invoices."),
	))
	web.SetFile(e2eHost, wellKnown, shopCatalog(1))
}

// leakAnswer is one answer of a door.
type leakAnswer struct {
	status int
	body   string
	// asked are identifiers the question itself named: an answer may echo
	// them (a not-found message names what was asked), which tells the
	// caller nothing it did not send.
	asked []string
}

// traces returns what of the hidden catalog a's body holds, leaving out
// echoes of what the question named.
func (a leakAnswer) traces() string {
	body := a.body
	for _, s := range a.asked {
		body = regexp.MustCompile("(?i)"+regexp.QuoteMeta(s)).ReplaceAllString(body, "ASKED")
	}
	return hiddenTrace.FindString(body)
}

// leakCaller sends requests as the holder of key ("" anonymous).
type leakCaller struct {
	e   *e2e
	key string
}

func (c leakCaller) do(method, path string, body any, hdr map[string]string) leakAnswer {
	c.e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.e.url(path), rd)
	if err != nil {
		c.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.e.client.Do(req)
	if err != nil {
		c.e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return leakAnswer{status: resp.StatusCode, body: string(b)}
}

// mcpCall is one MCP tools/call over POST /mcp.
func (c leakCaller) mcpCall(tool string, args map[string]any) leakAnswer {
	return c.do(http.MethodPost, "/mcp", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}}, map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
}

// spellings are the ways one identifier may be asked for by path.
func spellings(id string) []string {
	air := strings.Replace(id, "urn:ai:", "urn:air:", 1)
	upper := strings.Replace(id, "e2e-hr.test", "E2E-HR.TEST", 1)
	return []string{id, air, upper, url.PathEscape(id), strings.ReplaceAll(url.PathEscape(id), ":", "%3A")}
}

// askedSpellings are id's spellings as asked and as an answer may echo
// them (decoded).
func askedSpellings(id string) []string {
	out := spellings(id)
	for _, p := range spellings(id) {
		if u, err := url.PathUnescape(p); err == nil {
			out = append(out, u)
		}
	}
	return out
}

// leakDoors are every way in, asked as one caller. A new door is one line.
// Each answer must hold no trace of the hidden catalog (hiddenTrace); the
// questions never name one themselves (answers may echo them). IndexNow,
// whose answers echo the pinged URL, is held to answering alike below.
var leakDoors = []struct {
	name string
	ask  func(c leakCaller) leakAnswer
}{
	{"POST /search none", func(c leakCaller) leakAnswer {
		return c.do("POST", "/search", map[string]any{"query": map[string]any{"text": "payroll invoices", "federation": "none"}, "pageSize": 50, "includeEvidence": true, "minScore": 0}, nil)
	}},
	{"POST /search auto", func(c leakCaller) leakAnswer {
		return c.do("POST", "/search", map[string]any{"query": map[string]any{"text": "payroll invoices", "federation": "auto"}, "pageSize": 50, "includeEvidence": true}, nil)
	}},
	{"POST /search referrals", func(c leakCaller) leakAnswer {
		return c.do("POST", "/search", map[string]any{"query": map[string]any{"text": "payroll invoices", "federation": "referrals"}, "pageSize": 50}, nil)
	}},
	{"GET /agents", func(c leakCaller) leakAnswer { return c.do("GET", "/agents?pageSize=100", nil, nil) }},
	{"GET /agents filtered", func(c leakCaller) leakAnswer {
		return c.do("GET", "/agents?pageSize=100&filter="+url.QueryEscape(`publisher = "e2e-hr.test"`), nil, nil)
	}},
	{"GET /agents/{id} hidden", func(c leakCaller) leakAnswer {
		var all []string
		for _, p := range spellings(orgChart) {
			a := c.do("GET", "/agents/"+p, nil, nil)
			all = append(all, fmt.Sprint(a.status), a.body)
		}
		return leakAnswer{status: 200, body: strings.Join(all, "\n"), asked: askedSpellings(orgChart)}
	}},
	{"GET /agents/{alias} hidden", func(c leakCaller) leakAnswer {
		a := c.do("GET", "/agents/"+url.PathEscape(orgChartCard), nil, nil)
		a.asked = []string{orgChartCard}
		return a
	}},
	{"MCP get_agent alias", func(c leakCaller) leakAnswer {
		a := c.mcpCall("get_agent", map[string]any{"identifier": orgChartCard})
		a.asked = []string{orgChartCard}
		return a
	}},
	{"GET /agents/{id} claimed", func(c leakCaller) leakAnswer {
		var all []string
		for _, id := range []string{salaryBands, noSuchRecord, invoicer} {
			for _, p := range spellings(id) {
				a := c.do("GET", "/agents/"+p, nil, nil)
				all = append(all, fmt.Sprint(a.status), a.body)
			}
		}
		return leakAnswer{status: 200, body: strings.Join(all, "\n")}
	}},
	{"POST /explore", func(c leakCaller) leakAnswer {
		return c.do("POST", "/explore", map[string]any{"query": map[string]any{"text": "payroll"}, "facets": []string{"publisher", "tags", "type", "protocols"}}, nil)
	}},
	{"MCP search", func(c leakCaller) leakAnswer {
		return c.mcpCall("search", map[string]any{"text": "payroll invoices", "federation": "none", "pageSize": 50})
	}},
	{"MCP get_agent", func(c leakCaller) leakAnswer {
		a := c.mcpCall("get_agent", map[string]any{"identifier": orgChart})
		a.asked = askedSpellings(orgChart)
		return a
	}},
	{"GET /tools", func(c leakCaller) leakAnswer {
		return c.do("GET", "/tools?q="+url.QueryEscape("payroll invoices"), nil, nil)
	}},
	{"MCP find_tool", func(c leakCaller) leakAnswer {
		return c.mcpCall("find_tool", map[string]any{"text": "payroll invoices", "limit": 50})
	}},
	{"MCP explore", func(c leakCaller) leakAnswer {
		return c.mcpCall("explore", map[string]any{"text": "payroll", "facets": []string{"publisher", "tags"}})
	}},
	{"xu POST /discover", func(c leakCaller) leakAnswer {
		return c.do("POST", "/discover", map[string]any{"query": "payroll invoices"}, nil)
	}},
	{"HAIDIP POST /agents/search", func(c leakCaller) leakAnswer {
		return c.do("POST", "/agents/search", map[string]any{"query": "payroll invoices"}, nil)
	}},
	{"ADP POST /adp/discover", func(c leakCaller) leakAnswer {
		return c.do("POST", "/adp/discover", map[string]any{"query": "payroll invoices", "min_score": 0}, nil)
	}},
	{"the page", func(c leakCaller) leakAnswer {
		return c.do("GET", "/?q="+url.QueryEscape("payroll invoices"), nil, map[string]string{"Accept": "text/html"})
	}},
	{"the entry page", func(c leakCaller) leakAnswer {
		return c.do("GET", "/agents/"+url.PathEscape(orgChart), nil, map[string]string{"Accept": "text/html"})
	}},
	{"the about page", func(c leakCaller) leakAnswer {
		return c.do("GET", "/about", nil, map[string]string{"Accept": "text/html"})
	}},
	{"the self catalog", func(c leakCaller) leakAnswer { return c.do("GET", "/.well-known/ai-catalog.json", nil, nil) }},
	{"MCP Registry API list", func(c leakCaller) leakAnswer { return c.do("GET", "/v0.1/servers?limit=100", nil, nil) }},
	{"MCP Registry API search", func(c leakCaller) leakAnswer { return c.do("GET", "/v0.1/servers?search=payroll", nil, nil) }},
	{"MCP Registry API by name", func(c leakCaller) leakAnswer {
		return c.do("GET", "/v0.1/servers/"+url.PathEscape(payrollToolsName)+"/versions", nil, nil)
	}},
	{"error messages", func(c leakCaller) leakAnswer {
		a := c.do("POST", "/search", map[string]any{"query": map[string]any{"text": "payroll", "federation": "none"}, "pageToken": "forged"}, nil)
		b := c.do("GET", "/agents?filter="+url.QueryEscape(`identifier = "`+orgChart+`" AND nonsense`), nil, nil)
		return leakAnswer{status: 200, body: a.body + "\n" + b.body}
	}},
}

// TestNoTraceOfHiddenCatalog walks every door as callers without the hr
// group (anonymous, and a key of another group) and finds no trace of the
// hidden catalog: none of its records, words, URL or hidden identifiers,
// and no count that includes them; a hidden identifier another publisher
// claims answers like one that does not exist; a public record's lost
// claims name no hidden catalog, and no answer carries a content hash. The
// hr key, through the same doors, does find the hidden records (so the
// traces looked for are there to find).
func TestNoTraceOfHiddenCatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	web := crawlertest.Web(t, fixtures.Options{NoWorld: true})
	leakCatalogs(web)
	e := newE2EOn(t, web, []string{e2eHost, evilHost, hrHost + " groups=hr"})
	keys := filepath.Join(e.dataDir, "keys.json")
	if err := os.WriteFile(keys, fmt.Appendf(nil, `{"keys": [{"name": "hr", "sha256": %q, "groups": ["hr"]}, {"name": "fin", "sha256": %q, "groups": ["finance"]}]}`,
		authn.HashKey(hrKey), authn.HashKey(finKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	e.args = append(e.args, "--auth", "optional", "--api-keys", keys, "--rate-limit", "0")
	e.start()
	hr := leakCaller{e, hrKey}
	total := func(c leakCaller) int {
		var l struct {
			Total int `json:"total"`
		}
		_ = json.Unmarshal([]byte(c.do("GET", "/agents?pageSize=1", nil, nil).body), &l)
		return l.Total
	}
	// shop 3, evil 2, hr 4 (its copy of the invoicer is a record of its own)
	e.waitFor("the three catalogs", 60*time.Second, func() (bool, string) {
		n := total(hr)
		return n == 9, fmt.Sprintf("hr sees %d records", n)
	})

	// hr's bare card is one agent with the org chart: its URL finds the
	// org chart's record for hr, under the record's own identifier.
	e.waitFor("hr's card merged into the org chart", 60*time.Second, func() (bool, string) {
		a := hr.do("GET", "/agents/"+url.PathEscape(orgChartCard), nil, nil)
		var rec struct {
			Identifier string `json:"identifier"`
		}
		_ = json.Unmarshal([]byte(a.body), &rec)
		return a.status == http.StatusOK && rec.Identifier == orgChart, fmt.Sprintf("%d %.300s", a.status, a.body)
	})

	// The hidden server's tool document is written in the same commit as
	// its record but indexed after it, in the tools index: the tool doors
	// find it a moment after the records are there.
	e.waitFor("hr's hidden tool in the tools index", 60*time.Second, func() (bool, string) {
		a := hr.do("GET", "/tools?q="+url.QueryEscape("payroll invoices"), nil, nil)
		return hiddenTrace.MatchString(a.body), fmt.Sprintf("%d %.300s", a.status, a.body)
	})

	// The traces are there for the group.
	for _, door := range []string{"POST /search none", "GET /agents", "GET /agents/{id} hidden", "GET /agents/{alias} hidden", "MCP get_agent", "MCP get_agent alias", "xu POST /discover", "MCP Registry API list", "MCP Registry API by name",
		"GET /tools", "MCP find_tool"} {
		for _, d := range leakDoors {
			if d.name == door && !hiddenTrace.MatchString(d.ask(hr).body) {
				t.Errorf("%s as hr: no hidden record found, so the walk below proves nothing", door)
			}
		}
	}

	for _, c := range []leakCaller{{e, ""}, {e, finKey}} {
		who := map[string]string{"": "anonymous", finKey: "finance key"}[c.key]
		for _, d := range leakDoors {
			a := d.ask(c)
			if m := a.traces(); m != "" {
				t.Errorf("%s, %s: answer %d holds %q:\n%.3000s", who, d.name, a.status, m, a.body)
			}
			if strings.Contains(a.body, `"contentHash"`) {
				t.Errorf("%s, %s: a content hash is published", who, d.name)
			}
		}
		if n := total(c); n != 5 {
			t.Errorf("%s: GET /agents counts %d records, want the 5 public ones", who, n)
		}
		// A hidden identifier that another publisher claims answers like
		// one that exists nowhere but in that publisher's claim.
		for _, id := range []string{salaryBands, noSuchRecord} {
			a := c.do("GET", "/agents/"+url.PathEscape(id), nil, nil)
			if a.status != http.StatusOK || !strings.Contains(a.body, "Evil Claim") {
				t.Errorf("%s: GET %s: %d %.300s; want the other publisher's claim, as for any identifier", who, id, a.status, a.body)
			}
		}
		// A hidden MCP server's name answers as a name nobody lists.
		hiddenName, noName := c.do("GET", "/v0.1/servers/"+url.PathEscape(payrollToolsName)+"/versions", nil, nil), c.do("GET", "/v0.1/servers/"+url.PathEscape("test.e2e-hr/mcp-never-was")+"/versions", nil, nil)
		if hiddenName.status != noName.status || errorShape(strings.ReplaceAll(hiddenName.body, "payroll-tools", "X")) != errorShape(strings.ReplaceAll(noName.body, "never-was", "X")) {
			t.Errorf("%s: registry API hidden name %d %s, unknown name %d %s: must be alike", who, hiddenName.status, hiddenName.body, noName.status, noName.body)
		}
		// A hidden record's alias answers as a missing identifier.
		const neverCard = "https://e2e-nowhere.test" + fixtures.PathAgentCard
		alias, none := c.do("GET", "/agents/"+url.PathEscape(orgChartCard), nil, nil), c.do("GET", "/agents/"+url.PathEscape(neverCard), nil, nil)
		if alias.status != none.status || errorShape(strings.ReplaceAll(alias.body, orgChartCard, "ID")) != errorShape(strings.ReplaceAll(none.body, neverCard, "ID")) {
			t.Errorf("%s: hidden alias %d %s, missing %d %s: must be alike", who, alias.status, alias.body, none.status, none.body)
		}
		// A hidden identifier nobody else claims answers as a missing one.
		const neverWas = "urn:ai:e2e-hr.test:people:never-was"
		hidden, missing := c.do("GET", "/agents/"+url.PathEscape(orgChart), nil, nil), c.do("GET", "/agents/"+url.PathEscape(neverWas), nil, nil)
		if hidden.status != missing.status || errorShape(strings.ReplaceAll(hidden.body, orgChart, "ID")) != errorShape(strings.ReplaceAll(missing.body, neverWas, "ID")) {
			t.Errorf("%s: hidden %d %s, missing %d %s: must be alike", who, hidden.status, hidden.body, missing.status, missing.body)
		}
		// IndexNow tells a made-up key nothing about whether a host is crawled.
		made := func(host string) leakAnswer {
			return c.do("GET", "/indexnow?"+url.Values{"url": {"https://" + host + wellKnown}, "key": {"made-up-key-0002"}}.Encode(), nil, nil)
		}
		known, unknown := made(hrHost), made("e2e-nowhere.test")
		if known.status != unknown.status || errorShape(strings.ReplaceAll(known.body, hrHost, "HOST")) != errorShape(strings.ReplaceAll(unknown.body, "e2e-nowhere.test", "HOST")) {
			t.Errorf("%s: IndexNow for the hidden seed's host %d %s, for an unknown host %d %s: must be alike", who, known.status, known.body, unknown.status, unknown.body)
		}
	}
}

// errorShape is an error answer without its correlation id and the
// error's detail after a colon (the fetch error of a key file).
func errorShape(body string) string {
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if json.Unmarshal([]byte(body), &e) != nil {
		return body
	}
	msg, _, _ := strings.Cut(e.Error.Message, ": ")
	return e.Error.Code + " " + msg
}
