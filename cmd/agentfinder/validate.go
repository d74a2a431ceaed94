package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/agentfinder/agentfinder/crawler"
	"github.com/agentfinder/agentfinder/crawler/sigcheck"
	"github.com/agentfinder/agentfinder/normalize"
)

// validateMaxBody is the largest manifest 'agentfinder validate' reads.
const validateMaxBody = 4 << 20

// validateReport is the --json output of 'agentfinder validate'.
type validateReport struct {
	Valid   bool `json:"valid"`
	Records int  `json:"records"`
	// Trust counts the records by trust level (signed, domain, none).
	Trust map[string]int `json:"trust"`
	// NotChecked says what could not be checked (a file: no DID document,
	// artifact or attestation is fetched).
	NotChecked string              `json:"notChecked,omitempty"`
	Problems   []normalize.Problem `json:"problems"`
}

// runValidate implements 'agentfinder validate [flags] PATH|URL': it checks
// one ai-catalog.json document and exits 0 when it has no errors (warnings
// allowed), 1 when it has errors (a document that is not JSON included), 2
// when it could not be read or the usage is wrong. A URL is fetched with
// the network flags crawl takes (--dns-server, --ca-file, --port-map,
// --allow-private, ...), so what crawl can reach, validate can check.
func runValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return validateMain(ctx, args, nil, stdout, stderr)
}

func validateMain(ctx context.Context, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) int {
	c := newCLI("validate", "[flags] PATH|URL\n\nChecks an ai-catalog.json manifest: its entries, and its signatures and digests\n"+
		"(for a URL the signers' DID documents, artifacts and attestations are fetched; a file is\n"+
		"checked offline). Trust problems are warnings. Exit status: 0 valid (warnings allowed),\n"+
		"1 errors found (or, with --require-signed, a record not signed), 2 the file or URL could\n"+
		"not be read or usage is wrong.")
	asJSON := c.fs.Bool("json", false, `print {"valid","records","trust","problems"} as JSON`)
	origin := c.fs.String("origin", "", "`URL` the document is published at, for publisher verification (a URL argument sets it)")
	requireSigned := c.fs.Bool("require-signed", false, "exit 1 unless every record ends signed (a publisher checking its signed catalog)")
	c.noEnv("json", "origin", "require-signed")
	var nf netFlags
	nf.register(c)
	if code := c.parseOrExit(args, getenv, stdout, stderr); code >= 0 {
		return code
	}
	positional := c.args
	if len(positional) != 1 {
		fmt.Fprintln(stderr, "agentfinder validate: want exactly one PATH or URL\nRun 'agentfinder validate --help' for its flags.")
		return 2
	}
	target := positional[0]
	if *origin != "" {
		if u, err := url.Parse(*origin); err != nil || u.Hostname() == "" {
			fmt.Fprintf(stderr, "agentfinder validate: --origin %q is not an absolute URL\n", *origin)
			return 2
		}
	}

	res, notChecked, err := checkTarget(ctx, nf, target, origin)
	if err != nil {
		fmt.Fprintf(stderr, "agentfinder validate: %v\n", err)
		return 2
	}
	rep := validateReport{Valid: true, Records: len(res.Records), Trust: trustCounts(res.Records), NotChecked: notChecked, Problems: res.Problems}
	if rep.Problems == nil {
		rep.Problems = []normalize.Problem{}
	}
	errorsN, warningsN := 0, 0
	for _, p := range res.Problems {
		if p.Severity == normalize.SeverityError {
			errorsN++
			rep.Valid = false
		} else {
			warningsN++
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "agentfinder validate: %v\n", err)
			return 2
		}
	} else {
		printValidation(stdout, target, *origin, rep, errorsN, warningsN)
	}
	if !rep.Valid || (*requireSigned && rep.Trust[normalize.TrustSigned] != rep.Records) {
		return 1
	}
	return 0
}

// printValidation writes the readable report: a summary line, then one line
// per problem.
func printValidation(w io.Writer, target, origin string, rep validateReport, errorsN, warningsN int) {
	verdict := "valid"
	if !rep.Valid {
		verdict = "INVALID"
	}
	fmt.Fprintf(w, "%s: %s: %d %s kept, %d %s, %d %s\n", target, verdict,
		rep.Records, plural(rep.Records, "record", "records"),
		errorsN, plural(errorsN, "error", "errors"),
		warningsN, plural(warningsN, "warning", "warnings"))
	if origin == "" {
		fmt.Fprintln(w, "  (no origin: publisher verification skipped; use --origin URL)")
	}
	fmt.Fprintf(w, "  trust: %d signed, %d domain, %d none\n", rep.Trust[normalize.TrustSigned], rep.Trust[normalize.TrustDomain], rep.Trust[normalize.TrustNone])
	if rep.NotChecked != "" {
		fmt.Fprintf(w, "  (%s)\n", rep.NotChecked)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "  %-7s %-22s %s: %s\n", p.Severity, p.Code, p.Path, oneLine(p.Message))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// oneLine keeps a message on one line of the report.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func isHTTPURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// readManifestFile reads a local manifest, refusing files over the size limit.
func readManifestFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, validateMaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(body) > validateMaxBody {
		return nil, fmt.Errorf("read %s: larger than %d bytes", path, validateMaxBody)
	}
	return body, nil
}

// notCheckedOffline is what validating a file leaves unchecked.
const notCheckedOffline = "a file: DID documents, artifacts and attestations were not fetched; signatures that need a key are reported as not checked"

// checkTarget reads the manifest at target and checks it, its value types
// against the v0.4.2 manifest schema too. A URL is fetched,
// and checked as a crawl would (signatures with the signers' DID documents,
// artifact and attestation digests), through a crawler with the network
// settings of nf; *origin defaults to the URL it was served from. A file is
// checked offline; notChecked says what that left out.
func checkTarget(ctx context.Context, nf netFlags, target string, origin *string) (res normalize.Result, notChecked string, err error) {
	if !isHTTPURL(target) {
		body, err := readManifestFile(target)
		if err != nil {
			return res, "", err
		}
		now := time.Now()
		trust := sigcheck.New(sigcheck.Config{}).Catalog(ctx, sigcheck.Offline{}, body, now)
		res = normalize.Catalog(body, normalize.Options{Origin: *origin, Via: normalize.ViaSeed, Now: now, Trust: trust})
		res.Problems = append(res.Problems, trust.Problems()...)
		res.Problems = append(res.Problems, normalize.SchemaProblems(body)...)
		return res, notCheckedOffline, nil
	}
	cfg, err := nf.crawlerConfig()
	if err != nil {
		return res, "", err
	}
	cr, err := crawler.New(cfg, nil, nil)
	if err != nil {
		return res, "", err
	}
	defer cr.Close()
	body, final, err := fetchManifest(ctx, cr, nf, target)
	if err != nil {
		return res, "", err
	}
	if *origin == "" {
		*origin = final
	}
	res = cr.Check(ctx, body, *origin)
	res.Problems = append(res.Problems, normalize.SchemaProblems(body)...)
	return res, "", nil
}

// trustCounts counts records by trust level.
func trustCounts(recs []normalize.Record) map[string]int {
	out := map[string]int{normalize.TrustSigned: 0, normalize.TrustDomain: 0, normalize.TrustNone: 0}
	for _, r := range recs {
		if r.Trust != nil {
			out[r.Trust.Level]++
		}
	}
	return out
}

// fetchManifest GETs a manifest through cr's network settings (DNS, port
// map, CAs, private-address guard) with a size limit, and returns its body
// and the URL it was finally served from (after redirects).
func fetchManifest(ctx context.Context, cr *crawler.Crawler, nf netFlags, u string) (body []byte, final string, err error) {
	client := cr.HTTPClient()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", fmt.Errorf("fetch %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/ai-catalog+json, application/json;q=0.9, */*;q=0.1")
	req.Header.Set("User-Agent", "agentfinder-validate/"+version)
	resp, err := client.Do(req)
	if err != nil {
		if !nf.allowPrivate && errors.Is(err, crawler.ErrSSRFBlocked) {
			return nil, "", fmt.Errorf("fetch %s: %w (add --allow-private to fetch from loopback or private addresses)", u, err)
		}
		return nil, "", fmt.Errorf("fetch %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, "", fmt.Errorf("fetch %s: HTTP status %s", u, resp.Status)
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, validateMaxBody+1))
	if err != nil {
		return nil, "", fmt.Errorf("fetch %s: read body: %w", u, err)
	}
	if len(body) > validateMaxBody {
		return nil, "", fmt.Errorf("fetch %s: body larger than %d bytes", u, validateMaxBody)
	}
	return body, resp.Request.URL.String(), nil
}
