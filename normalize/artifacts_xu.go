package normalize

import "strings"

// xu maps Agent Metadata of the Efficient Agent Discovery Profile
// (draft-xu-efficient-agent-discovery-profile): tags, examples, bindings,
// constraints, status, expires_at, updated_at.
func (m *mapper) xu(md map[string]any) {
	r := m.rec
	fill(&r.DisplayName, getStr(md, "name"))
	fill(&r.Description, getStr(md, "description"))
	fill(&r.Version, getStr(md, "version"))
	fill(&r.UpdatedAt, getStr(md, "updated_at"))
	fill(&r.ExpiresAt, getStr(md, "expires_at"))
	if s := strings.ToLower(getStr(md, "status")); s != "" {
		r.Status = s
	}
	r.Tags = append(r.Tags, strs(md, "tags")...)
	for i, it := range m.list(md, "examples") {
		switch ex := it.(type) {
		case string:
			m.examples(ex)
		case map[string]any:
			m.examples(getStr(ex, "text"))
			r.Tags = append(r.Tags, strs(ex, "tags")...)
		default:
			m.problem("examples["+itoa(i)+"]", "example is neither text nor an object; ignored")
		}
	}
	for b := range m.objects(md, "bindings", "binding") {
		m.binding(Binding{
			Protocol:  strings.ToLower(getStr(b, "protocol")),
			URL:       firstOf(getStr(b, "endpoint"), getStr(b, "url")),
			Transport: getStr(b, "interaction_model"),
		})
	}
	m.mergeConstraints(getObj(md, "constraints"))
	if a := getObj(md, "auth"); a != nil {
		m.addAuth(firstOf(getStr(a, "type"), getStr(a, "scheme")))
		m.addAuth(strs(a, "schemes")...)
	}
}

// haidip maps HAIDIP agent metadata (draft-cui-ai-agent-discovery-invocation):
// capabilities, tags, endpoint, provider, supported languages.
func (m *mapper) haidip(md map[string]any) {
	r := m.rec
	fill(&r.DisplayName, getStr(md, "name"))
	fill(&r.Description, getStr(md, "description"))
	fill(&r.Version, getStr(md, "version"))
	fill(&r.Provider, getStr(md, "provider"))
	if p := getObj(md, "provider"); p != nil {
		fill(&r.Provider, firstOf(getStr(p, "organization"), getStr(p, "name")))
	}
	caps := strs(md, "capabilities")
	if len(r.Capabilities) == 0 {
		r.Capabilities = caps
	}
	r.SkillNames = appendUnique(r.SkillNames, caps...)
	r.Tags = append(r.Tags, strs(md, "tags")...)
	m.examples(strs(md, "examples")...)
	if ep := getStr(md, "endpoint"); ep != "" {
		m.binding(Binding{Protocol: "haidip", URL: ep, Transport: "HTTP+JSON"})
	}
	m.addAuth(strs(md, "authentication")...)
	if langs := strs(md, "supported_languages"); len(langs) > 0 {
		m.mergeConstraints(map[string]any{"supported_languages": langs})
	}
}
