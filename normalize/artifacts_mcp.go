package normalize

import (
	"encoding/json"
	"strings"
)

// mcp maps an MCP server description into the record: the registry's
// server.json (packages and remotes), a server card (serverInfo, transport,
// tools), or the inline shape of Agent Finder §4.4 (name, description, tools).
func (m *mapper) mcp(s map[string]any) {
	r := m.rec
	info := getObj(s, "serverInfo")
	if info != nil {
		m.variant("mcp-server-card")
		fill(&r.DisplayName, firstOf(getStr(info, "title"), getStr(info, "name")))
		fill(&r.Version, getStr(info, "version"))
	}
	fill(&r.DisplayName, firstOf(getStr(s, "title"), getStr(s, "name")))
	fill(&r.Description, getStr(s, "description"))
	if _, ok := s["version"].(string); ok {
		fill(&r.Version, getStr(s, "version"))
	}

	m.mcpPackages(s)
	m.mcpEndpoint(s)
	m.mcpTools(s)
}

// mcpEndpoint maps the inline and card shapes' endpoint (url or endpoint,
// transport as a string or an object) or, without one, their command into
// a binding.
func (m *mapper) mcpEndpoint(s map[string]any) {
	transport, endpoint := "", firstOf(getStr(s, "url"), getStr(s, "endpoint"))
	switch tr := s["transport"].(type) {
	case string:
		transport = tr
	case map[string]any:
		transport = getStr(tr, "type")
		endpoint = firstOf(getStr(tr, "url"), getStr(tr, "endpoint"), endpoint)
	}
	if endpoint != "" {
		if _, ok := checkURL(endpoint); ok && transport == "" {
			transport = "streamable-http"
		}
		m.binding(Binding{Protocol: "mcp", URL: endpoint, Transport: transport})
	} else if cmd := getStr(s, "command"); cmd != "" {
		if args := strs(s, "args"); len(args) > 0 {
			cmd += " " + strings.Join(args, " ")
		}
		m.binding(Binding{Protocol: "mcp", Transport: firstOf(transport, "stdio"), Package: cmd})
	}
}

// mcpTools maps the tools (top level, or under capabilities) into skill
// names and examples, and the record's declared tools (ToolsDeclared; the
// prober's tools/list replaces them once read); a tool that is neither a
// name nor an object is a problem.
func (m *mapper) mcpTools(s map[string]any) {
	r := m.rec
	tools := s["tools"]
	if caps := getObj(s, "capabilities"); tools == nil && caps != nil {
		if _, isList := caps["tools"].([]any); isList {
			tools = caps["tools"]
		}
	}
	list, ok := tools.([]any)
	if !ok {
		return
	}
	if len(list) > maxItems {
		list = list[:maxItems]
	}
	for i, it := range list {
		tool, ok := it.(map[string]any)
		if !ok {
			if name, isStr := it.(string); isStr {
				r.SkillNames = appendUnique(r.SkillNames, name)
				continue
			}
			m.problem("tools["+itoa(i)+"]", "tool is not an object; ignored")
			continue
		}
		r.SkillNames = appendUnique(r.SkillNames, getStr(tool, "name"))
		m.examples(firstOf(getStr(tool, "description"), getStr(tool, "title")))
		m.declareTool(tool)
	}
	MarkTools(r.Tools)
}

// declareTool adds a server card's tool to the record's declared tools.
func (m *mapper) declareTool(tool map[string]any) {
	raw, err := json.Marshal(tool)
	if err != nil {
		return
	}
	t, err := DecodeTool(raw)
	if err != nil {
		return // no name: nothing to index
	}
	if m.rec.Tools == nil {
		m.rec.Tools = &ToolSet{Source: ToolsDeclared}
	}
	m.rec.Tools.Listed++
	m.rec.Tools.Items = append(m.rec.Tools.Items, t)
}

// firstOf returns the first non-empty string.
func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
