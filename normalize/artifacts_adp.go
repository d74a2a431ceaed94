package normalize

import "strings"

// adp maps an ADP (ANP Agent Description Protocol) agent card: hierarchical
// skill tags, tools, endpoints, constraints, seq and metadata.ttl.
func (m *mapper) adp(card map[string]any) {
	r := m.rec
	fill(&r.DisplayName, getStr(card, "name"))
	fill(&r.Description, getStr(card, "description"))
	fill(&r.Version, getStr(card, "version"))
	if seq, ok := getInt(card, "seq"); ok && seq > r.Seq {
		r.Seq = seq
	} else if _, present := card["seq"]; present && !ok {
		m.problem("seq", "seq is not an integer; ignored")
	}
	r.Skills = appendUnique(r.Skills, skillPaths(strs(card, "skills"))...)

	for tool := range m.objects(card, "tools", "tool") {
		r.SkillNames = appendUnique(r.SkillNames, getStr(tool, "name"))
		m.examples(getStr(tool, "description"))
	}
	for ep := range m.objects(card, "endpoints", "endpoint") {
		m.binding(adpBinding(ep))
		m.addAuth(getStr(ep, "auth"))
	}
	m.mergeConstraints(getObj(card, "constraints"))
	if md := getObj(card, "metadata"); md != nil {
		fill(&r.UpdatedAt, getStr(md, "updated_at"))
		if ttl, ok := getInt(md, "ttl"); ok && ttl > 0 {
			r.TTL = ttl
		}
	}
}

// adpBinding reads one ADP endpoint. An endpoint whose protocol names A2A
// or MCP is that protocol's binding (its transport from "transport"), so
// it is used, and probed, as one; any other is an ADP binding whose
// transport is the endpoint's protocol (aitp, https, http+json, ...).
func adpBinding(ep map[string]any) Binding {
	u := firstOf(getStr(ep, "uri"), getStr(ep, "url"))
	switch p := strings.ToLower(strings.TrimSpace(getStr(ep, "protocol"))); p {
	case "a2a", "mcp":
		return Binding{Protocol: p, URL: u, Transport: getStr(ep, "transport")}
	}
	return Binding{Protocol: "adp", URL: u, Transport: getStr(ep, "protocol")}
}
