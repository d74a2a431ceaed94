package normalize

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ToolSet is what a server offers as tools: read from its MCP endpoint
// (tools/list) by the prober, or declared by its server card. It is
// untrusted text: shown escaped, never followed.
type ToolSet struct {
	// Source is ToolsListed (read from the endpoint) or ToolsDeclared (the
	// server card's list).
	Source string `json:"source"`
	// ReadAt is when the list was read (zero for declared tools).
	ReadAt time.Time `json:"readAt,omitzero"`
	// Listed is how many tools the answers read held, kept or not.
	Listed int `json:"listed"`
	// Truncated, when set, says why the list stopped early: TruncatedTools,
	// TruncatedBytes or TruncatedPages. Items then holds the tools read up
	// to that point.
	Truncated string `json:"truncated,omitempty"`
	// Items are the tools, in the server's order.
	Items []Tool `json:"items"`
	// Problems mark tools whose text is off: a description that tries to
	// instruct its reader (CodeInstructionLike), a tool without a name.
	Problems []Problem `json:"problems,omitempty"`
}

// Tool is one tool of a server.
type Tool struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Params      []string         `json:"params,omitempty"` // the input schema's property names
	Annotations *ToolAnnotations `json:"annotations,omitempty"`
}

// ToolAnnotations are the hints a server gives about a tool (MCP
// ToolAnnotations). They are the server's claims, not checked.
type ToolAnnotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

// Tool set sources and truncation reasons.
const (
	ToolsListed   = "tools/list"
	ToolsDeclared = "card"

	TruncatedTools = "max_tools" // more tools than the per-server bound
	TruncatedBytes = "max_bytes" // the answers outgrew the per-server byte bound
	TruncatedPages = "max_pages" // more pages than the prober follows
)

// Problem codes of tool sets.
const (
	CodeInstructionLike = "instruction_like" // a tool's text addresses its reader with instructions
	CodeInvalidTool     = "invalid_tool"     // a listed tool without a usable name
)

// Bounds on one tool's text, so one server cannot bloat its record.
const (
	maxToolName        = 128
	maxToolTitle       = 200
	maxToolDescription = 2000
	maxToolParams      = 64
)

// FieldTools is the index field holding a record's ToolSet.
const FieldTools = "tools"

// FieldDeclaredTools is the tools index field holding the tools a
// record's server card declares (Document.DeclaredTools) when its tool
// document shows others (ToolDocument). Records stored by an older ingest
// may hold it too; ingest moves it at start.
const FieldDeclaredTools = "declaredTools"

// wireTool is a tool as MCP tools/list and server cards write it.
type wireTool struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	InputSchema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	} `json:"inputSchema"`
	Annotations *struct {
		Title string `json:"title"`
		ToolAnnotations
	} `json:"annotations"`
}

// DecodeTool reads one tool as MCP writes it (name, title, description,
// inputSchema, annotations), cutting its text to bounds. A tool without a
// name is an error.
func DecodeTool(raw json.RawMessage) (Tool, error) {
	var w wireTool
	if err := json.Unmarshal(raw, &w); err != nil {
		return Tool{}, fmt.Errorf("tool: %w", err)
	}
	t := Tool{
		Name:        cut(strings.TrimSpace(w.Name), maxToolName),
		Title:       cut(strings.TrimSpace(w.Title), maxToolTitle),
		Description: cut(strings.TrimSpace(w.Description), maxToolDescription),
	}
	if t.Name == "" {
		return Tool{}, fmt.Errorf("tool: no name")
	}
	if w.Annotations != nil {
		if t.Title == "" {
			t.Title = cut(strings.TrimSpace(w.Annotations.Title), maxToolTitle)
		}
		a := w.Annotations.ToolAnnotations
		if a != (ToolAnnotations{}) {
			t.Annotations = &a
		}
	}
	for name := range w.InputSchema.Properties {
		if len(t.Params) == maxToolParams {
			break
		}
		t.Params = append(t.Params, cut(name, maxToolName))
	}
	slices.Sort(t.Params)
	return t, nil
}

// cut returns s cut to at most n bytes, at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// instructionLike matches text that speaks to the model or person reading
// it rather than describing a tool: the common shapes of prompt injection
// ("ignore previous instructions", "do not tell the user", "you must always
// call", "<IMPORTANT>", a fake system prompt).
var instructionLike = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`\b(ignore|disregard|forget|override)\b[^.]{0,40}\b(previous|prior|above|earlier|all|other|any)\b[^.]{0,20}\b(instructions?|prompts?|rules|messages?|tools?)\b`,
	`\b(do not|don't|never)\s+(tell|inform|mention|reveal|show)\b[^.]{0,20}\b(the )?(user|human)\b`,
	`\byou (must|should|have to) (always|first|never)\b`,
	`<\s*/?\s*(important|system|instructions?)\s*>`,
	`\b(system prompt|new instructions)\s*:`,
	`\bbefore using (this|any other) tool\b[^.]{0,60}\b(read|send|call|pass)\b`,
}, "|"))

// InstructionLike reports whether text tries to instruct its reader (see
// instructionLike): such text is kept, escaped, and marked.
func InstructionLike(text string) bool { return instructionLike.MatchString(text) }

// MarkTools sets ts.Problems: one CodeInstructionLike warning per tool
// whose title or description tries to instruct its reader.
func MarkTools(ts *ToolSet) {
	if ts == nil {
		return
	}
	ts.Problems = slices.DeleteFunc(ts.Problems, func(p Problem) bool { return p.Code == CodeInstructionLike })
	for i, t := range ts.Items {
		if InstructionLike(t.Description) || InstructionLike(t.Title) {
			ts.Problems = append(ts.Problems, Problem{
				Path: fmt.Sprintf("tools.items[%d].description", i), Code: CodeInstructionLike, Severity: SeverityWarning,
				Message: fmt.Sprintf("tool %q: its text addresses the reader with instructions; shown as data, never followed", t.Name),
			})
		}
	}
}

// toolNameSpaces turns a tool name's separators into spaces (ToolText):
// built once, as a search splits the text of every tool it may name.
var toolNameSpaces = strings.NewReplacer("_", " ", "-", " ", ".", " ")

// ToolText is the text of one tool that search reads and embeds: its name
// (with underscores and dashes as spaces), title and description.
func ToolText(t Tool) string {
	name := toolNameSpaces.Replace(t.Name)
	parts := []string{name}
	if t.Title != "" && !strings.EqualFold(t.Title, name) {
		parts = append(parts, t.Title)
	}
	if t.Description != "" {
		parts = append(parts, cut(t.Description, 500))
	}
	return strings.Join(parts, ": ")
}

// EmbeddedTools returns the tool texts that get a vector of their own:
// the ToolText of the first MaxEmbeddedTools tools the server's endpoint
// listed (ToolsListed). Tools a server card only declares get none, as
// examples get none: their words count, but every vector more is one
// more chance for a document to sit near unrelated requests.
func EmbeddedTools(ts *ToolSet) []string {
	if ts == nil || ts.Source != ToolsListed {
		return nil
	}
	var out []string
	for _, t := range ts.Items {
		if len(out) == MaxEmbeddedTools {
			break
		}
		out = append(out, ToolText(t))
	}
	return out
}

// MaxEmbeddedTools bounds the tool vectors of one record: a server's
// tools are what it does, so more of them embed than representative
// queries (MaxEmbeddedQueries), but not all of a long list.
const MaxEmbeddedTools = 8

// SameTools reports whether a and b list the same tools (the time they
// were read aside).
func SameTools(a, b *ToolSet) bool {
	if a == nil || b == nil {
		return a == b
	}
	ja, _ := json.Marshal(ToolSet{Source: a.Source, Listed: a.Listed, Truncated: a.Truncated, Items: a.Items})
	jb, _ := json.Marshal(ToolSet{Source: b.Source, Listed: b.Listed, Truncated: b.Truncated, Items: b.Items})
	return string(ja) == string(jb)
}
