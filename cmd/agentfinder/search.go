package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/agentfinder/agentfinder/federation"
)

// maxSearchResponse bounds the response body the search command reads.
const maxSearchResponse = 16 << 20

// runSearch implements 'agentfinder search': one POST /search against a
// server, printed as a table or as the raw JSON response.
func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return searchMain(ctx, args, nil, stdout, stderr)
}

func searchMain(ctx context.Context, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) int {
	var o searchOptions
	c := searchCLI(&o)
	if code := c.parseOrExit(args, getenv, stdout, stderr); code >= 0 {
		return code
	}
	text := strings.TrimSpace(strings.Join(c.args, " "))
	if text == "" {
		fmt.Fprintln(stderr, "agentfinder search: missing search TEXT\nRun 'agentfinder search --help' for its flags.")
		return 2
	}
	ans, err := postAPI(ctx, o.server, o.apiKey, "/search", o.request(text), o.timeout, maxSearchResponse)
	if err != nil {
		fmt.Fprintf(stderr, "agentfinder search: %v\n", err)
		return exitCodeOf(err)
	}
	if ans.code != http.StatusOK {
		fmt.Fprintf(stderr, "agentfinder search: %s\n", ans.errorText())
		return 1
	}
	if o.asJSON {
		stdout.Write(ans.body)
		if !bytes.HasSuffix(ans.body, []byte("\n")) {
			fmt.Fprintln(stdout)
		}
		return 0
	}
	if err := printResults(stdout, ans.body, o.wide); err != nil {
		fmt.Fprintf(stderr, "agentfinder search: %v\n", err)
		return 1
	}
	return 0
}

// searchOptions are the flags of 'agentfinder search'.
type searchOptions struct {
	server, apiKey, typ, publisher, compliance, federation, pageToken string
	pageSize                                                          int
	tags, preferTags                                                  stringList
	verifiedOnly, signedOnly, liveOnly                                bool
	evidence, stale, asJSON, wide                                     bool
	timeout                                                           time.Duration
}

func searchCLI(o *searchOptions) *cli {
	c := newCLI("search", "[flags] TEXT...\n\nSends one Agent Finder POST /search to a server and prints the results.")
	fs := c.fs
	fs.StringVar(&o.server, "server", "http://127.0.0.1:8080", "base URL of the Agent Finder server")
	c.apiKeyFlag(&o.apiKey)
	fs.StringVar(&o.typ, "type", "", "filter by artifact `type` (media type, e.g. application/a2a-agent-card+json)")
	fs.StringVar(&o.publisher, "publisher", "", "filter by `publisher` domain or name")
	fs.StringVar(&o.compliance, "compliance", "", "filter by `compliance` requirement (e.g. hipaa, soc2)")
	fs.StringVar(&o.federation, "federation", "", "federation `mode`: auto (server default), referrals or none")
	fs.IntVar(&o.pageSize, "page-size", 10, "results per page (1-100)")
	fs.StringVar(&o.pageToken, "page-token", "", "continue from a previous response's pageToken")
	fs.Var(&o.tags, "tag", "only results carrying this `tag` (repeatable: all of them)")
	fs.Var(&o.preferTags, "prefer-tag", "rank results carrying this `tag` higher (repeatable)")
	fs.BoolVar(&o.verifiedOnly, "verified-only", false, "only results whose publisher is verified (the catalog was fetched from its domain)")
	fs.BoolVar(&o.signedOnly, "signed-only", false, "only results signed by their publisher (trust level signed)")
	fs.BoolVar(&o.liveOnly, "live-only", false, "only results whose endpoint answered its last probe (health up)")
	fs.BoolVar(&o.evidence, "evidence", false, "show why each result matched: matched tags, examples and score components")
	fs.BoolVar(&o.stale, "stale", false, "include stale records (their catalog kept failing)")
	fs.BoolVar(&o.asJSON, "json", false, "print the raw JSON response (for programs)")
	fs.BoolVar(&o.wide, "wide", false, "print one wide table row per result (every column in full), not lines that fit 100 columns")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "request timeout")
	c.setEnv("server", "AGENTFINDER_SERVER")
	c.noEnv("type", "publisher", "compliance", "federation", "page-size", "page-token", "tag", "prefer-tag", "verified-only", "signed-only", "live-only", "evidence", "stale", "json", "wide", "timeout")
	return c
}

// request is the POST /search body for text: the flags that are set, and
// only those.
func (o *searchOptions) request(text string) []byte {
	q := map[string]any{"text": text}
	for k, v := range map[string]string{"type": o.typ, "publisher": o.publisher, "compliance": o.compliance, "federation": o.federation} {
		if v != "" {
			q[k] = v
		}
	}
	if len(o.tags) > 0 {
		q["requiredTags"] = o.tags
	}
	if len(o.preferTags) > 0 {
		q["preferredTags"] = o.preferTags
	}
	for k, on := range map[string]bool{"verifiedOnly": o.verifiedOnly, "signedOnly": o.signedOnly, "liveOnly": o.liveOnly} {
		if on {
			q[k] = true
		}
	}
	req := map[string]any{"query": q, "pageSize": o.pageSize}
	if o.pageToken != "" {
		req["pageToken"] = o.pageToken
	}
	if o.evidence {
		req["includeEvidence"] = true
	}
	if o.stale {
		req["includeStale"] = true
	}
	body, _ := json.Marshal(req)
	return body
}

// orDash is s, or "-" when a server did not say.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// searchResponse is a POST /search answer (the one answer type,
// federation.SearchAnswer) with its results and referrals read as the
// table shows them.
type searchResponse struct {
	federation.SearchAnswer
	Results   []federation.SearchResult
	Referrals []federation.SearchReferral
}

// readSearchResponse reads a POST /search answer for printResults.
func readSearchResponse(raw []byte) (searchResponse, error) {
	var r searchResponse
	if err := json.Unmarshal(raw, &r.SearchAnswer); err != nil {
		return r, err
	}
	var err error
	if r.Results, err = r.ShownResults(); err != nil {
		return r, err
	}
	r.Referrals, err = r.ShownReferrals()
	return r, err
}

// resultsWidth is the width of printResults' lines without --wide: a
// terminal of 100 columns shows them unbroken.
const resultsWidth = 100

// printResults prints a search answer for a person: each result as a few
// lines that fit resultsWidth columns (wide: one table row of every column
// in full), then referrals, upstreams and the next page's token.
func printResults(w io.Writer, raw []byte, wide bool) error {
	r, err := readSearchResponse(raw)
	if err != nil {
		return fmt.Errorf("parse response: %w", err)
	}
	switch {
	case len(r.Results) == 0:
		fmt.Fprintln(w, "no results")
	case wide:
		printWideResults(w, r)
	default:
		printNarrowResults(w, r)
	}
	if len(r.Referrals) > 0 {
		fmt.Fprintln(w, "\nReferrals:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, ref := range r.Referrals {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", ref.Identifier, ref.DisplayName, ref.URL)
		}
		tw.Flush()
	}
	for _, u := range r.Upstreams {
		fmt.Fprintf(w, "upstream %s: %s (%d results)\n", u.Registry, u.Status, u.Results)
	}
	if r.PageToken != "" {
		fmt.Fprintf(w, "\nmore: --page-token %s\n", r.PageToken)
	}
	return nil
}

// printNarrowResults prints each result as lines of at most resultsWidth
// columns: score, name, kind, trust and health; the identifier and where
// it came from; the description; with --evidence, why it matched.
func printNarrowResults(w io.Writer, r searchResponse) {
	line := func(s string) { fmt.Fprintln(w, truncate(s, resultsWidth)) }
	for i, res := range r.Results {
		if i > 0 {
			fmt.Fprintln(w)
		}
		trust, health := trustHealth(res)
		line(fmt.Sprintf("%3s  %s  [%s]  trust %s  health %s", res.Score, truncate(oneLine(res.DisplayName), 40), shortType(res.Type),
			trust, health))
		line("     " + res.Identifier + "  from " + res.SourceLabel())
		if d := oneLine(res.Description); d != "" {
			line("     " + d)
		}
		if e := res.Evidence; e != nil {
			line("     why: " + evidenceLine(e.MatchedTags, len(e.MatchedExamples), e.MatchedTerms, e.ScoreComponents))
			for _, ex := range e.MatchedExamples {
				line("     example: " + oneLine(ex.Text))
			}
		}
	}
}

// printWideResults prints one table row per result, every column in full.
func printWideResults(w io.Writer, r searchResponse) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCORE\tIDENTIFIER\tNAME\tDESCRIPTION\tTYPE\tTRUST\tHEALTH\tSOURCE")
	for _, res := range r.Results {
		trust, health := trustHealth(res)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", res.Score, res.Identifier, oneLine(res.DisplayName),
			oneLine(res.Description), res.Type, trust, health, res.SourceLabel())
		if e := res.Evidence; e != nil {
			fmt.Fprintf(tw, "\t  why: %s\t\t\t\t\t\t\n", evidenceLine(e.MatchedTags, len(e.MatchedExamples), e.MatchedTerms, e.ScoreComponents))
			for _, ex := range e.MatchedExamples {
				fmt.Fprintf(tw, "\t  example: %s\t\t\t\t\t\t\n", oneLine(ex.Text))
			}
		}
	}
	tw.Flush()
}

// shortType names a media type briefly: application/a2a-agent-card+json is
// a2a-agent-card; a type without a subtype is itself.
func shortType(t string) string {
	if t == "" {
		return "-"
	}
	_, sub, ok := strings.Cut(t, "/")
	if !ok {
		return t
	}
	return strings.TrimSuffix(sub, "+json")
}

// evidenceLine summarises a result's evidence on one line.
func evidenceLine(tags []string, examples int, terms []string, comps map[string]json.Number) string {
	var parts []string
	if len(terms) > 0 {
		parts = append(parts, "terms "+strings.Join(terms, ", "))
	}
	if len(tags) > 0 {
		parts = append(parts, "tags "+strings.Join(tags, ", "))
	}
	if examples > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", examples, plural(examples, "example", "examples")))
	}
	var cs []string
	for _, k := range sortedKeys(comps) {
		cs = append(cs, k+" "+comps[k].String())
	}
	if len(cs) > 0 {
		parts = append(parts, strings.Join(cs, " "))
	}
	if len(parts) == 0 {
		return "no evidence given"
	}
	return strings.Join(parts, "; ")
}

// trustHealth is a result's trust level and health status, "-" for
// either it lacks.
func trustHealth(res federation.SearchResult) (trust, health string) {
	if res.Trust != nil {
		trust = res.Trust.Level
	}
	if res.Health != nil {
		health = res.Health.Status
	}
	return orDash(trust), orDash(health)
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
