package searchtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const openAPIURL = "file:///openapi.json"

// OpenAPI checks real answers against an OpenAPI document (the server's
// openapi.json). Make it with NewOpenAPI; it is safe for concurrent use.
type OpenAPI struct {
	mu    sync.Mutex
	c     *jsonschema.Compiler
	paths map[string]map[string]struct {
		Responses map[string]json.RawMessage `json:"responses"`
	}
	cache map[string]*jsonschema.Schema
}

// NewOpenAPI reads the OpenAPI document doc.
func NewOpenAPI(doc []byte) (*OpenAPI, error) {
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(openAPIURL, parsed); err != nil {
		return nil, err
	}
	o := &OpenAPI{c: c, cache: map[string]*jsonschema.Schema{}}
	var raw struct {
		Paths map[string]map[string]struct {
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(doc, &raw); err != nil {
		return nil, err
	}
	o.paths = raw.Paths
	return o, nil
}

func (o *OpenAPI) schema(loc string) (*jsonschema.Schema, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if sch, ok := o.cache[loc]; ok {
		return sch, nil
	}
	sch, err := o.c.Compile(openAPIURL + "#" + loc)
	if err != nil {
		return nil, err
	}
	o.cache[loc] = sch
	return sch, nil
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// templateOf maps a request path to its OpenAPI path template.
func templateOf(path string) string {
	path, _, _ = strings.Cut(path, "?")
	if strings.HasPrefix(path, "/agents/") && path != "/agents/search" {
		return "/agents/{identifier}"
	}
	return path
}

// Conform checks a real response against the document: error bodies
// against the Error schema, others against the operation's documented
// response for that status (an undocumented status fails the test).
func (o *OpenAPI) Conform(t testing.TB, method, path string, status int, body []byte) {
	t.Helper()
	loc := ""
	tmpl := templateOf(path)
	if op, ok := o.paths[tmpl][strings.ToLower(method)]; ok {
		if _, ok := op.Responses[strconv.Itoa(status)]; ok {
			loc = "/paths/" + pointerEscape(tmpl) + "/" + strings.ToLower(method) + "/responses/" + strconv.Itoa(status)
			var r struct {
				Ref string `json:"$ref"`
			}
			_ = json.Unmarshal(op.Responses[strconv.Itoa(status)], &r)
			if r.Ref != "" {
				loc = strings.TrimPrefix(r.Ref, "#")
			}
			loc += "/content/application~1json/schema"
		}
	}
	if loc == "" {
		if status < 400 {
			t.Errorf("openapi: %s %s answered %d, which openapi.json does not document", method, tmpl, status)
			return
		}
		loc = "/components/schemas/Error"
	}
	if status == http.StatusOK && tmpl == "/openapi.json" {
		return
	}
	sch, err := o.schema(loc)
	if err != nil {
		t.Fatalf("openapi: compile %s: %v", loc, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Errorf("openapi: %s %s: body is not JSON: %v: %q", method, path, err, body)
		return
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("openapi: %s %s (%d) does not conform to %s: %v\nbody: %.600s", method, path, status, loc, err, body)
	}
}
