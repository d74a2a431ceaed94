package main

// TestREADMECommands runs every command of README.md's shell blocks against
// make run's demo (.ci/run.sh itself, with the binary make build builds and
// the embedding model; see startREADMEDemo), so the README cannot drift
// from what the code does.

import (
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
)

// readmeCommand is one command of a README code block.
type readmeCommand struct {
	line int
	argv []string
	src  string // the command's text, to expand again when it runs
}

// shellWords splits a block of shell text into commands the way sh would
// for the subset README uses: words separated by blanks, a newline ending a
// command (unless escaped or inside quotes), # comments, '...' literal,
// "..." and bare words expanding $NAME and ${NAME} through getenv.
func shellWords(text string, firstLine int, getenv func(string) string) ([]readmeCommand, error) {
	var cmds []readmeCommand
	var argv []string
	var word strings.Builder
	inWord := false
	line, cmdLine := firstLine, firstLine
	rs := []rune(text)
	cmdStart := 0
	flushWord := func() {
		if inWord {
			argv = append(argv, word.String())
			word.Reset()
			inWord = false
		}
	}
	flushCmd := func() {
		flushWord()
		if len(argv) > 0 {
			cmds = append(cmds, readmeCommand{line: cmdLine, argv: argv, src: string(rs[cmdStart:])})
		}
		argv = nil
	}
	expand := func(rs []rune, i int) int { // rs[i] == '$'; returns the index of the last rune used
		j := i + 1
		braced := j < len(rs) && rs[j] == '{'
		if braced {
			j++
		}
		start := j
		for j < len(rs) && (rs[j] == '_' || rs[j] >= 'A' && rs[j] <= 'Z' || rs[j] >= 'a' && rs[j] <= 'z' || rs[j] >= '0' && rs[j] <= '9') {
			j++
		}
		if j == start {
			word.WriteRune('$')
			return i
		}
		word.WriteString(getenv(string(rs[start:j])))
		if braced && j < len(rs) && rs[j] == '}' {
			return j
		}
		return j - 1
	}
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		if len(argv) == 0 && !inWord && c != ' ' && c != '\t' && c != '\n' {
			cmdLine, cmdStart = line, i
		}
		switch {
		case c == '\n':
			line++
			if len(argv) > 0 || inWord {
				flushWord()
				cmds = append(cmds, readmeCommand{line: cmdLine, argv: argv, src: string(rs[cmdStart:i])})
				argv = nil
			}
		case c == ' ' || c == '\t':
			flushWord()
		case c == '#' && !inWord:
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
			i--
		case c == '\\' && i+1 < len(rs):
			i++
			if rs[i] == '\n' {
				line++
				flushWord()
				continue
			}
			word.WriteRune(rs[i])
			inWord = true
		case c == '\'':
			inWord = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				if rs[j] == '\n' {
					line++
				}
				j++
			}
			if j == len(rs) {
				return nil, fmt.Errorf("line %d: unterminated '", line)
			}
			word.WriteString(string(rs[i+1 : j]))
			i = j
		case c == '"':
			inWord = true
			for i++; i < len(rs) && rs[i] != '"'; i++ {
				switch {
				case rs[i] == '$':
					i = expand(rs, i)
				case rs[i] == '\\' && i+1 < len(rs) && strings.ContainsRune(`"\$`, rs[i+1]):
					i++
					word.WriteRune(rs[i])
				default:
					if rs[i] == '\n' {
						line++
					}
					word.WriteRune(rs[i])
				}
			}
			if i == len(rs) {
				return nil, fmt.Errorf("line %d: unterminated \"", line)
			}
		case c == '$':
			inWord = true
			i = expand(rs, i)
		default:
			inWord = true
			word.WriteRune(c)
		}
	}
	flushCmd()
	return cmds, nil
}

// readmeBlock is one fenced code block: its info string, first line and text.
type readmeBlock struct {
	lang string
	line int
	text string
}

func readmeBlocks(t *testing.T, path string) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []readmeBlock
	var cur *readmeBlock
	for i, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "```") && cur == nil:
			cur = &readmeBlock{lang: strings.TrimSpace(strings.TrimPrefix(l, "```")), line: i + 2}
		case strings.HasPrefix(l, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		}
	}
	return out
}

func TestShellWords(t *testing.T) {
	env := map[string]string{"TOKEN": "t0k", "SERVER": "http://h:1"}
	cmds, err := shellWords("# comment\ncurl -s \"$SERVER/x\" -H 'A: b' \\\n  -d '{\n \"q\": 1}'   # trailing\n\nagentfinder search a \"${TOKEN}s\" c\\ d\n", 10,
		func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := []readmeCommand{
		{11, []string{"curl", "-s", "http://h:1/x", "-H", "A: b", "-d", "{\n \"q\": 1}"}, ""},
		{15, []string{"agentfinder", "search", "a", "t0ks", "c d"}, ""},
	}
	for i := range cmds {
		if i < len(want) {
			want[i].src = cmds[i].src
		}
	}
	if fmt.Sprint(cmds) != fmt.Sprint(want) {
		t.Errorf("shellWords =\n%v\nwant\n%v", cmds, want)
	}
	// A command's text parses again to itself (how the runner expands
	// variables only when the command runs).
	if again, err := shellWords(cmds[0].src, 11, func(k string) string { return env[k] }); err != nil || fmt.Sprint(again[0].argv) != fmt.Sprint(want[0].argv) {
		t.Errorf("src %q parses to %v, %v", cmds[0].src, again, err)
	}
	if _, err := shellWords("echo 'open", 1, os.Getenv); err == nil {
		t.Error("an unterminated quote parsed")
	}
}

// readmeRunner runs README commands against a demo.
type readmeRunner struct {
	t          *testing.T
	e          *e2e
	envFile    string
	lastToken  string // the pageToken of the last search answer that had one
	searches   int
	mcpConfigs int
	makefile   string
	lastSend   time.Time // when the test last sent the demo a request itself
}

// readmeGap is the least time between two requests the test sends the demo
// itself: at most 10 a second, half make run's per-client limit
// (searchapi.DefaultRatePerSecond), which stays on, since the README's
// commands are for a person copying them one at a time.
const readmeGap = 100 * time.Millisecond

// pace waits until readmeGap has passed since the test's last request.
func (r *readmeRunner) pace() {
	time.Sleep(time.Until(r.lastSend.Add(readmeGap)))
	r.lastSend = time.Now()
}

func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	r := startREADMEDemo(t)
	ran := 0
	for _, b := range readmeBlocks(t, "../../README.md") {
		switch {
		case b.lang == "sh":
			cmds, err := shellWords(b.text, b.line, os.Getenv)
			if err != nil {
				t.Errorf("README: %v", err)
				continue
			}
			for _, c := range cmds {
				r.run(c)
				ran++
			}
		case b.lang == "" && strings.HasPrefix(b.text, "http://127.0.0.1:8080/"):
			r.curl(readmeCommand{line: b.line, argv: []string{"curl", strings.TrimSpace(b.text)}})
			ran++
		case b.lang == "json" && strings.Contains(b.text, `"mcpServers"`):
			r.mcpConfig(b)
			ran++
		case b.lang == "text" && strings.HasPrefix(b.text, "agentfinder "):
			r.synopsis(b)
		}
	}
	r.pageFilters()
	r.flightAnswer()
	if r.searches == 0 || r.lastToken == "" || ran < 30 || r.mcpConfigs == 0 {
		t.Errorf("ran %d README commands, %d searches, %d MCP configurations, last page token %q: the README lost its examples?", ran, r.searches, r.mcpConfigs, r.lastToken)
	}
}

// run runs one README command, its variables expanded as it runs (a
// command may use what an earlier one sourced).
func (r *readmeRunner) run(c readmeCommand) {
	t := r.t
	now, err := shellWords(c.src, c.line, os.Getenv)
	if err != nil || len(now) != 1 {
		t.Errorf("README line %d: %q parses to %v, %v", c.line, c.src, now, err)
		return
	}
	c = now[0]
	switch c.argv[0] {
	case "curl":
		r.curl(c)
	case "agentfinder":
		r.agentfinder(c)
	case ".":
		r.source(c)
	case "make":
		// make test and make run cannot run inside make test: the target must exist.
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(c.argv[1]) + `:`).MatchString(r.makefile) {
			t.Errorf("README line %d: make %s: no such target in the Makefile", c.line, c.argv[1])
		}
	case "export", "docker":
		if !strings.Contains(strings.Join(c.argv, " "), "docker") && !strings.HasPrefix(c.argv[1], "MEILI_MASTER_KEY=") {
			t.Errorf("README line %d: %q: no way to run it here", c.line, c.argv)
		}
		r.composeCommand(c)
		t.Logf("README line %d: checked against docker-compose.yml, not run (needs a Docker engine): %s", c.line, strings.Join(c.argv, " "))
	default:
		if strings.Contains(c.argv[0], "=") && len(c.argv) > 1 && c.argv[1] == "docker" {
			r.composeCommand(c)
			t.Logf("README line %d: checked against docker-compose.yml, not run (needs a Docker engine): %s", c.line, strings.Join(c.argv, " "))
			return
		}
		t.Errorf("README line %d: no way to run %q here: teach TestREADMECommands", c.line, c.argv)
	}
}

// composeCommand checks a docker line against docker-compose.yml (no
// Docker engine runs here).
func (r *readmeRunner) composeCommand(c readmeCommand) {
	for _, p := range checkComposeCommand(composeFileText(r.t), c.argv) {
		r.t.Errorf("README line %d: %s", c.line, p)
	}
}

// source applies `. ./data/demo.env`: the demo's settings become this
// test's environment.
func (r *readmeRunner) source(c readmeCommand) {
	t := r.t
	if len(c.argv) != 2 || filepath.Base(c.argv[1]) != "demo.env" {
		t.Errorf("README line %d: sources %q, not make run's demo.env", c.line, c.argv)
		return
	}
	b, err := os.ReadFile(r.envFile)
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := shellWords(string(b), 1, os.Getenv)
	if err != nil {
		t.Fatalf("demo.env: %v", err)
	}
	for _, ex := range cmds {
		if ex.argv[0] != "export" || len(ex.argv) != 2 {
			t.Fatalf("demo.env line %d: %q", ex.line, ex.argv)
		}
		k, v, _ := strings.Cut(ex.argv[1], "=")
		t.Setenv(k, v)
	}
}

// curl runs the subset of curl README uses (-s, -G, -X, -H, -d,
// --data-urlencode) against the demo, whose address replaces 8080's.
func (r *readmeRunner) curl(c readmeCommand) {
	t := r.t
	method, target := "", ""
	var body string
	var form []string
	hdr := http.Header{}
	get := false
	for i := 1; i < len(c.argv); i++ {
		a := c.argv[i]
		next := func() string {
			i++
			if i >= len(c.argv) {
				t.Fatalf("README line %d: %s needs a value", c.line, a)
			}
			return c.argv[i]
		}
		switch a {
		case "-s":
		case "-G":
			get = true
		case "-X":
			method = next()
		case "-H":
			k, v, _ := strings.Cut(next(), ":")
			hdr.Set(strings.TrimSpace(k), strings.TrimSpace(v))
		case "-d":
			body = next()
		case "--data-urlencode":
			k, v, _ := strings.Cut(next(), "=")
			form = append(form, url.QueryEscape(k)+"="+url.QueryEscape(v))
		default:
			if strings.HasPrefix(a, "-") || target != "" {
				t.Errorf("README line %d: curl %s: not understood here", c.line, a)
				return
			}
			target = a
		}
	}
	if !strings.Contains(target, "://") {
		target = "http://" + target
	}
	u, err := url.Parse(target)
	if err != nil {
		t.Errorf("README line %d: %v", c.line, err)
		return
	}
	if u.Host == "localhost:8080" || u.Host == "127.0.0.1:8080" {
		u.Host = r.e.srv.addr
	}
	if get && len(form) > 0 {
		u.RawQuery = strings.Join(form, "&")
	}
	if strings.Contains(body, "<pageToken from the previous response>") {
		body = strings.ReplaceAll(body, "<pageToken from the previous response>", r.lastToken)
	}
	if method == "" {
		method = http.MethodGet
		if body != "" {
			method = http.MethodPost
		}
	}
	status, raw, err := r.send(t, method, u, body, hdr)
	if err != nil {
		t.Errorf("README line %d: %s %s: %v", c.line, method, u, err)
		return
	}
	// An example that keeps only live endpoints finds its agents once the
	// prober's first round has reached them, which the demo's start does
	// not wait for agent by agent: such an example is asked again for a
	// bounded while before it counts as finding nothing.
	for wait := time.Now().Add(30 * time.Second); status < 400 && answerCount(u.Path, raw) == 0 && asksLiveness(body) && time.Now().Before(wait); {
		time.Sleep(500 * time.Millisecond)
		if status, raw, err = r.send(t, method, u, body, hdr); err != nil {
			t.Errorf("README line %d: %s %s: %v", c.line, method, u, err)
			return
		}
	}
	if status >= 400 {
		t.Errorf("README line %d: %s %s: %d\n%.500s", c.line, method, u.Path, status, raw)
		return
	}
	if n := answerCount(u.Path, raw); n == 0 {
		r.t.Errorf("README line %d: %s %s finds nothing on the demo:\n%.500s", c.line, method, u.Path, raw)
	}
	if u.Path == "/search" {
		r.checkSearch(c, raw)
	}
}

// checkSearch keeps the page token for the next-page example and holds the
// first search example to what README says it finds.
func (r *readmeRunner) checkSearch(c readmeCommand, raw []byte) {
	var ans struct {
		Results []struct {
			Identifier string `json:"identifier"`
		} `json:"results"`
		PageToken string `json:"pageToken"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		r.t.Errorf("README line %d: search answer: %v", c.line, err)
		return
	}
	r.searches++
	if ans.PageToken != "" {
		r.lastToken = ans.PageToken
	}
	if r.searches == 1 && (len(ans.Results) == 0 || ans.Results[0].Identifier != "urn:ai:acme.test:travel:concierge") {
		r.t.Errorf("README line %d: the flight booking example finds %v, want the travel concierge first", c.line, ans.Results)
	}
}

// flightAnswer holds "book a flight" on the demo to what README says of
// when results stop: the travel concierge first and, after it, only
// results about travel, while minScore 0 still returns the rest of the
// ranking behind them.
func (r *readmeRunner) flightAnswer() {
	type answer struct {
		Results []struct {
			Identifier  string `json:"identifier"`
			DisplayName string `json:"displayName"`
			Description string `json:"description"`
			Score       int    `json:"score"`
		} `json:"results"`
	}
	search := func(minScore *int) answer {
		req := map[string]any{"query": map[string]any{"text": "book a flight"}, "federation": "none", "pageSize": 20}
		if minScore != nil {
			req["minScore"] = *minScore
		}
		var ans answer
		if code := r.e.do(http.MethodPost, "/search", req, &ans); code != http.StatusOK {
			r.t.Fatalf("POST /search book a flight: %d", code)
		}
		return ans
	}
	def, all := search(nil), search(new(int))
	if len(def.Results) == 0 || def.Results[0].Identifier != "urn:ai:acme.test:travel:concierge" {
		r.t.Errorf("book a flight answers %+v, want the travel concierge first", def.Results)
		return
	}
	travel := regexp.MustCompile(`(?i)\b(flights?|travel|trips?|airlines?|airports?|hotels?|itinerar(y|ies))\b`)
	for _, res := range def.Results {
		if !travel.MatchString(res.DisplayName + " " + res.Description) {
			r.t.Errorf("book a flight answers %s (%q, score %d): nothing about travel", res.Identifier, res.DisplayName, res.Score)
		}
	}
	if len(all.Results) <= len(def.Results) {
		r.t.Errorf("book a flight: %d results with minScore 0, %d by default; want the rest of the ranking behind them", len(all.Results), len(def.Results))
	}
}

// listTotal is how many records GET /agents lists under filter.
func (e *e2e) listTotal(filter string) int {
	var ans struct {
		Total int `json:"total"`
	}
	if code := e.do(http.MethodGet, "/agents?filter="+url.QueryEscape(filter), nil, &ans); code != http.StatusOK {
		e.t.Fatalf("GET /agents?filter=%s: %d", filter, code)
	}
	return ans.Total
}

// send makes one request of a README example and reads its answer.
func (r *readmeRunner) send(t *testing.T, method string, u *url.URL, body string, hdr http.Header) (int, []byte, error) {
	r.pace()
	req, err := http.NewRequestWithContext(t.Context(), method, u.String(), strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header = hdr.Clone()
	resp, err := r.e.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// asksLiveness reports whether an example's request keeps only endpoints
// that answered their last probe.
func asksLiveness(body string) bool {
	return strings.Contains(body, `"liveOnly": true`) || strings.Contains(body, `"health": "up"`) ||
		strings.Contains(body, `"live_only": true`)
}
