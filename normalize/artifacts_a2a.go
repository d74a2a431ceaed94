package normalize

// a2a maps an A2A agent card, v0.3 (url, preferredTransport,
// additionalInterfaces) or v1.0 (supportedInterfaces), into the record.
func (m *mapper) a2a(card map[string]any) {
	r := m.rec
	fill(&r.DisplayName, getStr(card, "name"))
	fill(&r.Description, getStr(card, "description"))
	fill(&r.Version, getStr(card, "version"))
	if p := getObj(card, "provider"); p != nil {
		fill(&r.Provider, getStr(p, "organization"))
	} else {
		fill(&r.Provider, getStr(card, "provider"))
	}

	if u := getStr(card, "url"); u != "" {
		m.variant("a2a-v0.3")
		transport := getStr(card, "preferredTransport")
		if transport == "" {
			transport = "JSONRPC"
		}
		m.binding(Binding{Protocol: "a2a", URL: u, Transport: transport})
	}
	if _, ok := card["additionalInterfaces"]; ok {
		m.variant("a2a-v0.3")
	}
	for i, it := range m.list(card, "additionalInterfaces") {
		iface, ok := it.(map[string]any)
		if !ok {
			m.problem("additionalInterfaces["+itoa(i)+"]", "interface is not an object; ignored")
			continue
		}
		m.binding(Binding{Protocol: "a2a", URL: getStr(iface, "url"), Transport: getStr(iface, "transport")})
	}
	if _, ok := card["supportedInterfaces"]; ok {
		m.variant("a2a-v1.0")
	}
	for i, it := range m.list(card, "supportedInterfaces") {
		iface, ok := it.(map[string]any)
		if !ok {
			m.problem("supportedInterfaces["+itoa(i)+"]", "interface is not an object; ignored")
			continue
		}
		transport := getStr(iface, "protocolBinding")
		if transport == "" {
			transport = getStr(iface, "transport")
		}
		m.binding(Binding{Protocol: "a2a", URL: getStr(iface, "url"), Transport: transport})
	}

	for i, it := range m.list(card, "skills") {
		skill, ok := it.(map[string]any)
		if !ok {
			m.problem("skills["+itoa(i)+"]", "skill is not an object; ignored")
			continue
		}
		name := getStr(skill, "name")
		if name == "" {
			name = getStr(skill, "id")
		}
		r.SkillNames = appendUnique(r.SkillNames, name)
		m.examples(getStr(skill, "description"))
		m.examples(strs(skill, "examples")...)
		r.Tags = append(r.Tags, strs(skill, "tags")...)
	}
}
