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
)

// maxSearchResponse bounds the response body the search command reads.
const maxSearchResponse = 16 << 20

// runSearch implements 'agentfinder search': one POST /search against a
// server, printed as a table or as the raw JSON response.
func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return searchMain(ctx, args, nil, stdout, stderr)
}

func searchMain(ctx context.Context, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) int {
	c := newCLI("search", "[flags] TEXT...\n\nSends one Agent Finder POST /search to a server and prints the results.")
	server := c.fs.String("server", "http://127.0.0.1:8080", "base URL of the Agent Finder server")
	typ := c.fs.String("type", "", "filter by artifact `type` (media type, e.g. application/a2a-agent-card+json)")
	publisher := c.fs.String("publisher", "", "filter by `publisher` domain or name")
	compliance := c.fs.String("compliance", "", "filter by `compliance` requirement (e.g. hipaa, soc2)")
	federation := c.fs.String("federation", "", "federation `mode`: auto (server default), referrals or none")
	pageSize := c.fs.Int("page-size", 10, "results per page (1-100)")
	pageToken := c.fs.String("page-token", "", "continue from a previous response's pageToken")
	var tags, preferTags stringList
	c.fs.Var(&tags, "tag", "only results carrying this `tag` (repeatable: all of them)")
	c.fs.Var(&preferTags, "prefer-tag", "rank results carrying this `tag` higher (repeatable)")
	verifiedOnly := c.fs.Bool("verified-only", false, "only results whose publisher is verified (the catalog was fetched from its domain)")
	signedOnly := c.fs.Bool("signed-only", false, "only results signed by their publisher (trust level signed)")
	liveOnly := c.fs.Bool("live-only", false, "only results whose endpoint answered its last probe (health up)")
	evidence := c.fs.Bool("evidence", false, "show why each result matched: matched tags, examples and score components")
	stale := c.fs.Bool("stale", false, "include stale records (their catalog kept failing)")
	asJSON := c.fs.Bool("json", false, "print the raw JSON response")
	timeout := c.fs.Duration("timeout", 30*time.Second, "request timeout")
	c.setEnv("server", "AGENTFINDER_SERVER")
	c.noEnv("type", "publisher", "compliance", "federation", "page-size", "page-token", "tag", "prefer-tag", "verified-only", "signed-only", "live-only", "evidence", "stale", "json", "timeout")
	if code := c.parseOrExit(args, getenv, stdout, stderr); code >= 0 {
		return code
	}
	text := strings.TrimSpace(strings.Join(c.args, " "))
	if text == "" {
		fmt.Fprintln(stderr, "agentfinder search: missing search TEXT\nRun 'agentfinder search --help' for its flags.")
		return 2
	}

	q := map[string]any{"text": text}
	for k, v := range map[string]string{"type": *typ, "publisher": *publisher, "compliance": *compliance, "federation": *federation} {
		if v != "" {
			q[k] = v
		}
	}
	if len(tags) > 0 {
		q["requiredTags"] = tags
	}
	if len(preferTags) > 0 {
		q["preferredTags"] = preferTags
	}
	for k, on := range map[string]bool{"verifiedOnly": *verifiedOnly, "signedOnly": *signedOnly, "liveOnly": *liveOnly} {
		if on {
			q[k] = true
		}
	}
	req := map[string]any{"query": q, "pageSize": *pageSize}
	if *pageToken != "" {
		req["pageToken"] = *pageToken
	}
	if *evidence {
		req["includeEvidence"] = true
	}
	if *stale {
		req["includeStale"] = true
	}
	body, _ := json.Marshal(req)

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	endpoint := strings.TrimRight(*server, "/") + "/search"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		fmt.Fprintf(stderr, "agentfinder search: %v\n", err)
		return 2
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("User-Agent", "agentfinder-cli/"+version)
	client := &http.Client{Timeout: *timeout}
	resp, err := client.Do(hr)
	if err != nil {
		fmt.Fprintf(stderr, "agentfinder search: POST %s: %v\n", endpoint, err)
		return 1
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchResponse))
	if err != nil {
		fmt.Fprintf(stderr, "agentfinder search: read response: %v\n", err)
		return 1
	}
	if resp.StatusCode != http.StatusOK {
		printAPIError(stderr, resp.Status, raw)
		return 1
	}
	if *asJSON {
		stdout.Write(raw)
		if !bytes.HasSuffix(raw, []byte("\n")) {
			fmt.Fprintln(stdout)
		}
		return 0
	}
	if err := printResults(stdout, raw); err != nil {
		fmt.Fprintf(stderr, "agentfinder search: %v\n", err)
		return 1
	}
	return 0
}

// orDash is s, or "-" when a server did not say.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printAPIError says what an error answer of the API says: its error
// object when it has one, else the start of the body.
func printAPIError(stderr io.Writer, status string, raw []byte) {
	var e struct {
		Error struct{ Code, Message, CorrelationID string } `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error.Code != "" {
		fmt.Fprintf(stderr, "agentfinder search: %s: %s (%s, correlation id %s)\n", status, e.Error.Message, e.Error.Code, e.Error.CorrelationID)
		return
	}
	fmt.Fprintf(stderr, "agentfinder search: %s: %s\n", status, truncate(string(raw), 300))
}

// searchResponse is the part of a POST /search response the table shows.
type searchResponse struct {
	Results []struct {
		Identifier  string          `json:"identifier"`
		DisplayName string          `json:"displayName"`
		Description string          `json:"description"`
		Type        string          `json:"type"`
		Score       json.Number     `json:"score"`
		Source      json.RawMessage `json:"source"`
		Trust       struct {
			Level string `json:"level"`
		} `json:"trust"`
		Health struct {
			Status string `json:"status"`
		} `json:"health"`
		Evidence *struct {
			MatchedTags     []string `json:"matchedTags"`
			MatchedExamples []struct {
				Text string `json:"text"`
			} `json:"matchedExamples"`
			MatchedTerms    []string               `json:"matchedTerms"`
			ScoreComponents map[string]json.Number `json:"scoreComponents"`
		} `json:"evidence"`
	} `json:"results"`
	Referrals []struct {
		Identifier  string `json:"identifier"`
		DisplayName string `json:"displayName"`
		URL         string `json:"url"`
	} `json:"referrals"`
	Upstreams []struct {
		Registry string `json:"registry"`
		Status   string `json:"status"`
		Results  int    `json:"results"`
	} `json:"upstreams"`
	PageToken string `json:"pageToken"`
}

func printResults(w io.Writer, raw []byte) error {
	var r searchResponse
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&r); err != nil {
		return fmt.Errorf("parse response: %w", err)
	}
	if len(r.Results) == 0 {
		fmt.Fprintln(w, "no results")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SCORE\tIDENTIFIER\tNAME\tDESCRIPTION\tTYPE\tTRUST\tHEALTH\tSOURCE")
		for _, res := range r.Results {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", res.Score, res.Identifier, truncate(res.DisplayName, 40),
				truncate(oneLine(res.Description), 50), res.Type, orDash(res.Trust.Level), orDash(res.Health.Status), sourceLabel(res.Source))
			if e := res.Evidence; e != nil {
				fmt.Fprintf(tw, "\t  why: %s\t\t\t\t\t\t\n", evidenceLine(e.MatchedTags, len(e.MatchedExamples), e.MatchedTerms, e.ScoreComponents))
				for _, ex := range e.MatchedExamples {
					fmt.Fprintf(tw, "\t  example: %s\t\t\t\t\t\t\n", truncate(oneLine(ex.Text), 80))
				}
			}
		}
		tw.Flush()
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

// sourceLabel shows a result's source: a URL or label string as is, an
// object by its catalog URL.
func sourceLabel(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Catalog string `json:"catalog"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Catalog != "" {
		return o.Catalog
	}
	return ""
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
