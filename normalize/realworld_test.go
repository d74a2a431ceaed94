package normalize

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// summary is what one real-world document yields, kept in
// testdata/golden/realworld-summary.json.
type summary struct {
	Records   int            `json:"records"`
	Links     int            `json:"links"`
	Artifacts int            `json:"artifacts"`
	Problems  map[string]int `json:"problems,omitempty"` // "severity code" -> count
}

func summarize(res Result) summary {
	s := summary{Records: len(res.Records), Links: len(res.Links), Artifacts: len(res.Artifacts)}
	for _, p := range res.Problems {
		if s.Problems == nil {
			s.Problems = map[string]int{}
		}
		s.Problems[string(p.Severity)+" "+p.Code]++
	}
	return s
}

// jsonFiles lists the *.json files under dir, relative to it, with '/'.
func jsonFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".json") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// repoRealworld is the repository's copies of real data published by
// others (real A2A cards and MCP registry records), seen from normalize.
var repoRealworld = filepath.Join("..", "fixtures", "realworld")

// realworldOptions are the options every real-world file is parsed with: an
// origin on a host none of them names, so verification runs.
var realworldOptions = Options{Origin: "https://crawler.test/.well-known/ai-catalog.json", Via: ViaSeed}

// parseAll parses a document and enriches every record with its own inline
// data, the way the crawler would with a fetched artifact; neither may panic
// and every record must marshal.
func parseAll(t *testing.T, name string, body []byte) Result {
	t.Helper()
	res := Catalog(body, realworldOptions)
	for i := range res.Records {
		r := res.Records[i]
		if r.Data != nil {
			Enrich(&r, "application/json", r.Data)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Errorf("%s: record %s does not marshal: %v", name, r.Identifier, err)
		}
	}
	return res
}

const summaryGolden = "testdata/golden/realworld-summary.json"

func readSummaries(t *testing.T) map[string]summary {
	t.Helper()
	b, err := os.ReadFile(summaryGolden)
	if err != nil {
		if *update {
			return map[string]summary{}
		}
		t.Fatal(err)
	}
	var m map[string]summary
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkSummaries parses every *.json under dir and compares what it yields
// with the golden summary.
func checkSummaries(t *testing.T, dir string, golden map[string]summary) {
	files := jsonFiles(t, dir)
	if len(files) == 0 {
		t.Fatalf("no json files under %s", dir)
	}
	for _, name := range files {
		body, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		got := summarize(parseAll(t, name, body))
		if *update {
			golden[name] = got
			continue
		}
		want, ok := golden[name]
		if !ok {
			t.Errorf("%s: not in %s; run go test ./normalize -update and review the diff", name, summaryGolden)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got  %+v\n want %+v", name, got, want)
		}
	}
}

// TestRealworldCopies parses the copies in testdata/realworld, which always
// exist, against the same summaries.
func TestRealworldCopies(t *testing.T) {
	golden := readSummaries(t)
	checkSummaries(t, filepath.Join("testdata", "realworld"), golden)
	if *update {
		writeJSON(t, summaryGolden, golden)
	}
}

func readRealworld(t *testing.T, name string) Result {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", "realworld", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return parseAll(t, name, body)
}

func problemsWith(res Result, code string) []string {
	var out []string
	for _, p := range res.Problems {
		if p.Code == code {
			out = append(out, p.Path)
		}
	}
	return out
}

func findRecord(t *testing.T, res Result, id string) Record {
	t.Helper()
	for _, r := range res.Records {
		if r.Identifier == id {
			return r
		}
	}
	t.Fatalf("no record %s", id)
	return Record{}
}

// TestRealworldChecks asserts what matters in the real shapes.
func TestRealworldChecks(t *testing.T) {
	t.Run("github excerpt: urn:air, type and mediaType", func(t *testing.T) {
		res := readRealworld(t, "github-agentfinder-catalog.EXCERPT.json")
		if len(res.Records) != 23 || len(problemsWith(res, CodeInvalidIdentifier)) != 0 {
			t.Fatalf("records %d, problems %+v", len(res.Records), res.Problems)
		}
		both := 0
		for _, r := range res.Records {
			if !slices.Contains(r.Variants, "urn:air") || r.Publisher == "" {
				t.Errorf("%s: variants %q publisher %q", r.Identifier, r.Variants, r.Publisher)
			}
			if slices.Contains(r.Variants, "type+mediaType") {
				both++
			}
		}
		eq(t, "entries with type and mediaType", both, 13)
		eq(t, "mcp registry entries", len(res.Artifacts), 10)
		// every publisher is unverified from the crawler.test origin, and nothing else is wrong
		eq(t, "codes", codes(res), []string{CodePublisherUnverified})
	})
	t.Run("go sdk invalid fixture", func(t *testing.T) {
		res := readRealworld(t, "ai-catalog-go-fixtures/invalid.json")
		eq(t, "records", recordIDs(res.Records), []string{"urn:air:acme.com:agent:mis"})
		eq(t, "url_and_data", problemsWith(res, CodeURLAndData), []string{"entries[0]"})
		eq(t, "no_content", problemsWith(res, CodeNoContent), []string{"entries[1]"})
		eq(t, "trust", problemsWith(res, CodeTrustDomainMismatch), []string{"entries[8].trustManifest.identity"})
		if !slices.Contains(problemsWith(res, CodeMissingField), "entries[9].identifier") {
			t.Errorf("missing identifier not reported: %+v", res.Problems)
		}
	})
	t.Run("go sdk duplicates keep the newest", func(t *testing.T) {
		res := readRealworld(t, "ai-catalog-go-fixtures/catalog.json")
		r := findRecord(t, res, "urn:air:acme.com:agent:finance")
		eq(t, "version", r.Version, "2.1.0")
		eq(t, "duplicates", problemsWith(res, CodeDuplicateIdentifier), []string{"entries[4].identifier", "entries[6].identifier"})
		eq(t, "mcp-server-card canonical", findRecord(t, res, "urn:air:acme.com:mcp:trusted").Type, TypeMCP)
	})
	t.Run("nesting at the limit and beyond", func(t *testing.T) {
		if p := problemsWith(readRealworld(t, "ai-catalog-go-fixtures/nested_max.json"), CodeDepthExceeded); len(p) != 0 {
			t.Errorf("nested_max: depth_exceeded at %q", p)
		}
		eq(t, "nested_deep", problemsWith(readRealworld(t, "ai-catalog-go-fixtures/data__nested_deep.json"), CodeDepthExceeded),
			[]string{"entries[0].data.entries[0].data.entries[0].data.entries[0].data.entries[0].data"})
	})
	t.Run("hf challenge catalog: inline MCP, A2A, bundle, registries", func(t *testing.T) {
		res := readRealworld(t, "hf-challenge-captures/well-known-ai-catalog.json")
		if len(res.Records) != 10 {
			t.Fatalf("records %d: %+v", len(res.Records), res.Problems)
		}
		mcp := findRecord(t, res, "urn:ai:agentfinder.dev:challenge:mcp:echo-tools")
		eq(t, "mcp tools", mcp.SkillNames, []string{"challenge_echo"})
		eq(t, "mcp binding", bindingKeys(mcp.Bindings), []string{"mcp http http://127.0.0.1:8090/artifacts/mcp/echo-tools "})
		a2a := findRecord(t, res, "urn:ai:agentfinder.dev:challenge:a2a:planner")
		eq(t, "a2a binding", bindingKeys(a2a.Bindings), []string{"a2a JSONRPC https://challenge.invalid/a2a/planner "})
		child := findRecord(t, res, "urn:ai:agentfinder.dev:challenge:bundle:mcp")
		eq(t, "child path", child.Source.Path, []string{realworldOptions.Origin, "urn:ai:agentfinder.dev:challenge:catalog:bundle"})
		eq(t, "child host", child.Host.DisplayName, "Challenge Bundle")
		eq(t, "registries", len(RegistryRecords(res.Records)), 4)
	})
	t.Run("snowdata: bundle repeats an entry, trust across companies", func(t *testing.T) {
		res := readRealworld(t, "ard-examples/snowdata-ai-catalog.json")
		eq(t, "records", len(res.Records), 12)
		eq(t, "trust", problemsWith(res, CodeTrustDomainMismatch), []string{"entries[7].trustManifest.identity"})
		for _, p := range res.Problems {
			if p.Severity == SeverityError {
				t.Errorf("unexpected error %+v", p)
			}
		}
	})
	t.Run("local business: type and mediaType, inline MCP card", func(t *testing.T) {
		res := readRealworld(t, "ard-examples/local-business__local-business-catalog.json")
		r := findRecord(t, res, "urn:air:bobs-plumbing.example:mcp:storefront")
		eq(t, "type", r.Type, TypeMCP)
		eq(t, "artifactType", r.ArtifactType, "application/mcp-server-card+json")
		eq(t, "tools", r.SkillNames, []string{"check_availability", "request_quote", "get_business_hours"})
	})
	t.Run("nevermined: unknown members kept", func(t *testing.T) {
		res := readRealworld(t, "ard-examples/nevermined__nevermined-catalog.json")
		r := findRecord(t, res, "urn:air:nevermined.app:agent:legal-analyzer")
		eq(t, "pay:price", string(r.Extra["pay:price"]), `"0.05"`)
		eq(t, "binding", bindingKeys(r.Bindings), []string{"a2a JSONRPC https://nevermined.app/agents/legal-analyzer "})
	})
	t.Run("extension media types", func(t *testing.T) {
		res := readRealworld(t, "ard-examples/tests-fixtures__extension-media-types.json")
		eq(t, "records", len(res.Records), 8)
		eq(t, "malformed", problemsWith(res, CodeInvalidMediaType), []string{"entries[7].type"})
	})
	t.Run("base spec example uses urn:example", func(t *testing.T) {
		res := readRealworld(t, "ai-catalog-examples/ai-catalog.json")
		eq(t, "records", len(res.Records), 0)
		eq(t, "invalid", problemsWith(res, CodeInvalidIdentifier), []string{"entries[0].identifier", "entries[1].identifier"})
		for _, p := range res.Problems {
			if p.Code == CodeMissingField {
				t.Errorf("mediaType not accepted as type: %+v", p)
			}
		}
	})
	t.Run("not manifests", func(t *testing.T) {
		eq(t, "legacy", codes(readRealworld(t, "ai-catalog-examples/legacy-fc1b94a__ai-catalog.json")), []string{CodeMissingField})
		eq(t, "search response", codes(readRealworld(t, "hf-challenge-captures/search-root-referrals.json")), []string{CodeMissingField})
	})
}

// codes lists the distinct problem codes of a result, sorted.
func codes(res Result) []string {
	var out []string
	for _, p := range res.Problems {
		if !slices.Contains(out, p.Code) {
			out = append(out, p.Code)
		}
	}
	sort.Strings(out)
	return out
}

// goldenRecords is the golden output for one manifest.
type goldenRecords struct {
	Records   []Record   `json:"records"`
	Problems  []Problem  `json:"problems"`
	Links     []Link     `json:"links"`
	Artifacts []Artifact `json:"artifacts"`
}

// TestGoldenRecords compares the records of realistic manifests with
// testdata/golden; the Acme manifest's A2A and ADP entries are enriched with
// artifacts as the crawler would.
func TestGoldenRecords(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	artifacts := map[string]string{
		"https://api.acme.com/travel/concierge.json":   "a2a-v03.json",
		"https://agents.acme.com/translator/card.json": "adp-card.json",
	}
	tests := []struct{ name, file, origin string }{
		{"acme", "testdata/manifests/acme.json", "https://www.acme.com/.well-known/ai-catalog.json"},
		{"spec-4.1", "testdata/spec/4.1-manifest.json", "https://acme.com/.well-known/ai-catalog.json"},
		{"hf-challenge", "testdata/realworld/hf-challenge-captures/well-known-ai-catalog.json", "http://127.0.0.1:8090/.well-known/ai-catalog.json"},
		{"local-business", "testdata/realworld/ard-examples/local-business__local-business-catalog.json", "https://bobs-plumbing.example/.well-known/ai-catalog.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			res := Catalog(body, Options{Origin: tc.origin, Via: ViaWellKnown, Now: now})
			g := goldenRecords{Records: res.Records, Problems: res.Problems, Links: res.Links, Artifacts: res.Artifacts}
			for _, a := range res.Artifacts {
				file, ok := artifacts[a.URL]
				if !ok {
					continue
				}
				doc, err := os.ReadFile(filepath.Join("testdata", "artifacts", file))
				if err != nil {
					t.Fatal(err)
				}
				for i := range g.Records {
					if g.Records[i].Identifier == a.Identifier {
						g.Problems = append(g.Problems, Enrich(&g.Records[i], "application/json", doc)...)
					}
				}
			}
			got, err := json.MarshalIndent(g, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", tc.name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./normalize -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the golden file; run go test ./normalize -update and review the diff\n%s", path, firstDiff(string(got), string(want)))
			}
		})
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("lengths differ: %d vs %d lines", len(g), len(w))
}
