package normalize

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// CodeSchemaViolation is a value of the wrong type for the Agent Finder
// v0.4.2 manifest schema (ManifestSchema): the document may still be
// usable, but other implementations may refuse it.
const CodeSchemaViolation = "schema_violation"

// ManifestSchema is the JSON Schema (2020-12) of the Agent Finder v0.4.2
// manifest's value types, as shipped in schema/ai-catalog-v0.4.2.schema.json.
//
//go:embed schema/ai-catalog-v0.4.2.schema.json
var ManifestSchema []byte

const manifestSchemaURL = "https://agentfinder.localhost/schema/ai-catalog-v0.4.2.schema.json"

var manifestSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ManifestSchema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(manifestSchemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(manifestSchemaURL)
})

// SchemaProblems checks doc against ManifestSchema and returns one warning
// per value that fails it, located by its JSON path
// (entries[0].metadata.authentication). A document that is not JSON gets
// none here: Catalog reports it.
func SchemaProblems(doc []byte) []Problem {
	sch, err := manifestSchema()
	if err != nil {
		panic(fmt.Sprintf("normalize: the embedded manifest schema does not compile: %v", err))
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(TrimBOM(doc)))
	if err != nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if err := sch.Validate(v); !errors.As(err, &ve) {
		return nil
	}
	var out []Problem
	for _, e := range leaves(ve, nil) {
		out = append(out, Problem{Path: pointerPath(e.InstanceLocation), Code: CodeSchemaViolation, Severity: SeverityWarning,
			Message: "not as the v0.4.2 manifest schema says: " + e.ErrorKind.LocalizedString(englishPrinter)})
	}
	return out
}

var englishPrinter = message.NewPrinter(language.English)

// leaves appends the errors of e that have no causes: the values that
// failed, not the schemas that failed because of them.
func leaves(e *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return append(out, e)
	}
	for _, c := range e.Causes {
		out = leaves(c, out)
	}
	return out
}

// pointerPath turns an instance location (entries, 0, metadata) into the
// path Problems use (entries[0].metadata); the root is "$".
func pointerPath(tokens []string) string {
	if len(tokens) == 0 {
		return "$"
	}
	var b strings.Builder
	for _, tok := range tokens {
		if tok != "" && strings.Trim(tok, "0123456789") == "" {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}
