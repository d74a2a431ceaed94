package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfinder/agentfinder/crawler/crawlertest"
	"github.com/agentfinder/agentfinder/fixtures"
	"github.com/agentfinder/agentfinder/normalize"
)

const (
	validManifest = `{"specVersion":"1.0","host":{"displayName":"Acme"},"entries":[
	  {"identifier":"urn:ai:acme.com:agent:a","displayName":"A","type":"application/a2a-agent-card+json","url":"https://acme.com/a.json"},
	  {"identifier":"urn:ai:acme.com:mcp:b","displayName":"B","type":"application/mcp-server+json","inline":{"name":"b","tools":[{"name":"t"}]}}]}`
	invalidManifest = `{"specVersion":"1.0","entries":[
	  {"identifier":"urn:ai:acme.com:agent:a","displayName":"A","type":"application/a2a-agent-card+json","url":"https://acme.com/a.json"},
	  {"identifier":"not-a-urn","displayName":"B","type":"application/json","url":"https://acme.com/b.json"}]}`
)

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidateExitCodes(t *testing.T) {
	valid := writeFile(t, "valid.json", validManifest)
	invalid := writeFile(t, "invalid.json", invalidManifest)
	notJSON := writeFile(t, "broken.json", `{"entries": [`)
	objectMetadata := writeFile(t, "metadata.json", `{"specVersion":"1.0","host":{"displayName":"Acme"},"entries":[
	  {"identifier":"urn:ai:acme.com:agent:a","displayName":"A","type":"application/a2a-agent-card+json","url":"https://acme.com/a.json",
	   "metadata":{"authentication":{"mode":"off"}}}]}`)
	tests := []struct {
		name    string
		args    []string
		code    int
		stdout  []string // substrings
		stderrS string
	}{
		{name: "valid with warnings", args: []string{valid}, code: 0, stdout: []string{"valid: 2 records kept, 0 errors, 1 warning", "deprecated_field", "entries[1].inline", "publisher verification skipped"}},
		{name: "flags after path", args: []string{valid, "--origin", "https://evil.example/"}, code: 0, stdout: []string{"publisher_unverified"}},
		{name: "errors", args: []string{invalid}, code: 1, stdout: []string{"INVALID: 1 record kept, 1 error", "invalid_identifier", "entries[1].identifier"}},
		{name: "not json", args: []string{notJSON}, code: 1, stdout: []string{"invalid_json"}},
		{name: "schema", args: []string{objectMetadata}, code: 0, stdout: []string{"schema_violation", "entries[0].metadata.authentication", "want"}},
		{name: "missing file", args: []string{filepath.Join(t.TempDir(), "nope.json")}, code: 2, stderrS: "no such file"},
		{name: "no args", args: nil, code: 2, stderrS: "want exactly one PATH or URL"},
		{name: "two args", args: []string{valid, invalid}, code: 2, stderrS: "want exactly one"},
		{name: "unknown flag", args: []string{"--nope", valid}, code: 2},
		{name: "bad origin", args: []string{"--origin", "nothing", valid}, code: 2, stderrS: "not an absolute URL"},
		{name: "help", args: []string{"--help"}, code: 0, stdout: []string{"Usage: agentfinder validate", "--ca-file", "--dns-server", "--port-map", "--allow-private"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := runValidate(t.Context(), tc.args, &out, &errOut)
			if code != tc.code {
				t.Errorf("exit = %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out.String(), errOut.String())
			}
			for _, s := range tc.stdout {
				if !strings.Contains(out.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, out.String())
				}
			}
			if tc.stderrS != "" && !strings.Contains(errOut.String(), tc.stderrS) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderrS, errOut.String())
			}
		})
	}
}

func TestValidateJSON(t *testing.T) {
	invalid := writeFile(t, "invalid.json", invalidManifest)
	var out, errOut bytes.Buffer
	if code := runValidate(t.Context(), []string{"--json", invalid}, &out, &errOut); code != 1 {
		t.Fatalf("exit = %d, stderr %s", code, errOut.String())
	}
	var rep struct {
		Valid    bool `json:"valid"`
		Records  int  `json:"records"`
		Problems []struct {
			Path, Code, Severity, Message string
		} `json:"problems"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	if rep.Valid || rep.Records != 1 || len(rep.Problems) != 1 || rep.Problems[0].Code != "invalid_identifier" ||
		rep.Problems[0].Path != "entries[1].identifier" || rep.Problems[0].Severity != "error" || rep.Problems[0].Message == "" {
		t.Errorf("report = %+v", rep)
	}

	// a clean document prints an empty problems list, not null
	clean := writeFile(t, "clean.json", `{"specVersion":"1.0","entries":[]}`)
	out.Reset()
	if code := runValidate(t.Context(), []string{"--json", clean}, &out, &errOut); code != 0 {
		t.Fatalf("exit = %d", code)
	}
	if !strings.Contains(out.String(), `"problems": []`) || !strings.Contains(out.String(), `"valid": true`) {
		t.Errorf("clean report: %s", out.String())
	}
}

func TestValidateURL(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/ai-catalog.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(strings.ReplaceAll(validManifest, "acme.com", "127.0.0.1.nip.example")))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/.well-known/ai-catalog.json", http.StatusFound)
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"entries":[` + strings.Repeat(" ", validateMaxBody) + `]}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	noEnv := func(string) (string, bool) { return "", false }
	var out, errOut bytes.Buffer
	// Loopback is refused without --allow-private, as in crawl, and the
	// message says which flag opens it.
	if code := validateMain(t.Context(), []string{srv.URL + "/redirect"}, noEnv, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "--allow-private") {
		t.Errorf("loopback without --allow-private: exit %d, stderr %q", code, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	code := validateMain(t.Context(), []string{"--json", "--allow-private", srv.URL + "/redirect"}, noEnv, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit = %d\n%s%s", code, out.String(), errOut.String())
	}
	// The URL set the origin: 127.0.0.1 is not the publisher, so verification ran and warned.
	if !strings.Contains(out.String(), "publisher_unverified") || !strings.Contains(out.String(), `"records": 2`) {
		t.Errorf("report: %s", out.String())
	}

	for _, path := range []string{"/missing", "/huge"} {
		out.Reset()
		errOut.Reset()
		if code := validateMain(t.Context(), []string{"--allow-private", srv.URL + path}, noEnv, &out, &errOut); code != 2 {
			t.Errorf("%s: exit = %d, want 2 (%s)", path, code, errOut.String())
		}
	}
	if !strings.Contains(errOut.String(), "larger than") {
		t.Errorf("huge: stderr %q", errOut.String())
	}
	srv.Close()
	if code := validateMain(t.Context(), []string{"--allow-private", srv.URL + "/.well-known/ai-catalog.json"}, noEnv, &out, &errOut); code != 2 {
		t.Errorf("closed server: exit = %d, want 2", code)
	}
}

// TestValidateFixtureWeb validates a catalog of the fixture web with the
// network flags crawl takes, given through the environment as the demo's
// env file gives them.
func TestValidateFixtureWeb(t *testing.T) {
	_, getenv := fixtureWebEnv(t)
	var out, errOut bytes.Buffer
	if code := validateMain(t.Context(), []string{"https://" + fixtures.HostAcme + fixtures.PathWellKnown}, getenv, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), ": valid: ") {
		t.Errorf("report: %s", out.String())
	}
}

// TestValidateSignatures validates the signed fixture catalog by URL (DID
// documents, artifacts fetched: every case is judged) and as a file
// (offline: what needs a key is reported as not checked, the rest judged).
func TestValidateSignatures(t *testing.T) {
	web, getenv := fixtureWebEnv(t)

	var out, errOut bytes.Buffer
	if code := validateMain(t.Context(), []string{"https://" + fixtures.HostSigned + fixtures.PathWellKnown}, getenv, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"trust: 3 signed, 0 domain, 7 none", normalize.CodeBadSignature, normalize.CodeSignatureExpired,
		normalize.CodeWrongSigner, normalize.CodeForbiddenHeader, normalize.CodeSubjectMismatch, normalize.CodeDigestMismatch} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("URL report lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if code := validateMain(t.Context(), []string{"--require-signed", "https://" + fixtures.HostSigned + fixtures.PathWellKnown}, getenv, &out, &errOut); code != 1 {
		t.Errorf("--require-signed on a catalog with unsigned records: exit %d, want 1", code)
	}
	// A catalog signed as a whole by its publisher passes.
	all := map[string]any{"specVersion": "1.0", "host": map[string]any{"displayName": "All signed", "identifier": fixtures.DID(fixtures.HostSigned)},
		"entries": []any{map[string]any{"identifier": "urn:air:signed.test:agent:only", "displayName": "Only", "type": "application/json", "url": "https://example.org/only.json"}}}
	fixtures.SignManifest(all, fixtures.SigningKey(fixtures.HostSigned), fixtures.KeyID(fixtures.HostSigned), nil)
	allBody, _ := json.Marshal(all)
	web.SetFile(fixtures.HostSigned, "/all-signed.json", allBody)
	out.Reset()
	if code := validateMain(t.Context(), []string{"--require-signed", "https://" + fixtures.HostSigned + "/all-signed.json"}, getenv, &out, &errOut); code != 0 {
		t.Errorf("--require-signed on a catalog signed as a whole: exit %d\n%s%s", code, out.String(), errOut.String())
	}

	body, _ := web.File(fixtures.HostSigned, fixtures.PathWellKnown)
	file := filepath.Join(t.TempDir(), "ai-catalog.json")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := validateMain(t.Context(), []string{"--json", file}, noEnv, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	var rep validateReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	codes := map[string]int{}
	for _, p := range rep.Problems {
		codes[p.Code]++
	}
	if rep.NotChecked == "" || rep.Trust[normalize.TrustSigned] != 0 || codes[normalize.CodeUnresolvableKey] == 0 ||
		codes[normalize.CodeWrongSigner] != 1 || codes[normalize.CodeForbiddenHeader] != 1 || codes[normalize.CodeSignatureExpired] != 1 {
		t.Errorf("file report: notChecked %q, trust %v, problem codes %v", rep.NotChecked, rep.Trust, codes)
	}
}

// fixtureWebEnv starts the fixture web and returns it with an environment
// that points the network flags at it, as the demo's env file does.
func fixtureWebEnv(t *testing.T) (*fixtures.Web, func(string) (string, bool)) {
	t.Helper()
	web := crawlertest.Web(t, fixtures.Options{})
	env := map[string]string{}
	for _, kv := range newFixturesInfo(web, false).env() {
		env[kv[0]] = kv[1]
	}
	return web, func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}
