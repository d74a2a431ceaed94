package normalize

// a2a maps an A2A agent card, v0.2/v0.3 (url, preferredTransport,
// additionalInterfaces) or v1.0 (supportedInterfaces), into the record:
// name, description, version, provider, one binding per interface, the
// authentication methods of its security schemes, its skills (names,
// descriptions and examples as examples, tags) and whether it carries
// signatures.
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
	for iface := range m.objects(card, "additionalInterfaces", "interface") {
		m.binding(Binding{Protocol: "a2a", URL: getStr(iface, "url"), Transport: getStr(iface, "transport")})
	}
	if _, ok := card["supportedInterfaces"]; ok {
		m.variant("a2a-v1.0")
	}
	for iface := range m.objects(card, "supportedInterfaces", "interface") {
		m.binding(Binding{Protocol: "a2a", URL: getStr(iface, "url"), Transport: firstOf(getStr(iface, "protocolBinding"), getStr(iface, "transport"))})
	}

	m.a2aAuth(card)
	m.a2aSignatures(card)
	for skill := range m.objects(card, "skills", "skill") {
		r.SkillNames = appendUnique(r.SkillNames, firstOf(getStr(skill, "name"), getStr(skill, "id")))
		m.examples(getStr(skill, "description"))
		m.examples(strs(skill, "examples")...)
		r.Tags = append(r.Tags, strs(skill, "tags")...)
	}
}

// VariantA2ASigned marks a record whose A2A card carries signatures
// (AgentCardSignature: a JWS over the card). They are noted, not verified:
// the record's trust does not rise on them.
const VariantA2ASigned = "a2a-signed"

// a2aSignatures notes the card's signatures and reports one that lacks its
// protected header or signature value.
func (m *mapper) a2aSignatures(card map[string]any) {
	sigs := m.list(card, "signatures")
	for i, it := range sigs {
		sig, ok := it.(map[string]any)
		if !ok || getStr(sig, "protected") == "" || getStr(sig, "signature") == "" {
			m.problem("signatures["+itoa(i)+"]", "card signature is not an object with protected and signature; ignored")
		}
	}
	if len(sigs) > 0 {
		m.variant(VariantA2ASigned)
	}
}
