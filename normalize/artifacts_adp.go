package normalize

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
		m.binding(Binding{Protocol: "adp", URL: firstOf(getStr(ep, "uri"), getStr(ep, "url")), Transport: getStr(ep, "protocol")})
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
