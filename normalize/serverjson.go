package normalize

import (
	"strings"
)

// This file reads the packages and remotes of an MCP server.json in every
// shape seen in the wild: the current camelCase schema (2025-09-16 and
// later: registryType, identifier, transport, runtimeArguments, ...), the
// 2025-07-09 snake_case one (registry_type, runtime_hint, ...) and the May
// 2025 registry seed's (registry_name, name, remotes with transport_type).

// mcpPackages maps a server.json's remotes and packages into bindings.
func (m *mapper) mcpPackages(s map[string]any) {
	for rem := range m.objects(s, "remotes", "remote") {
		m.binding(remoteBinding(rem))
	}
	for pkg := range m.objects(s, "packages", "package") {
		if b, ok := packageBinding(pkg); ok {
			m.binding(b)
		}
	}
}

// remoteBinding maps one remote: its transport, URL (kept as written when
// it still holds a {variable}, and marked a template) and header names.
func remoteBinding(rem map[string]any) Binding {
	u := getStr(rem, "url")
	return Binding{
		Protocol:  "mcp",
		URL:       u,
		Transport: firstOf(getStr(rem, "type"), getStr(rem, "transport_type"), getStr(rem, "transportType")),
		Template:  isURLTemplate(u),
		Headers:   inputNames(rem, "headers"),
	}
}

// packageBinding maps one package: "registry/identifier@version", its
// transport (stdio unless it says otherwise), the runtime hint, arguments
// and environment variables. A package without an identifier maps to nothing.
func packageBinding(pkg map[string]any) (Binding, bool) {
	registry := strings.ToLower(firstOf(camelOrSnake(pkg, "registryType"), getStr(pkg, "registry_name"), getStr(pkg, "registryName")))
	name := firstOf(getStr(pkg, "identifier"), getStr(pkg, "name"))
	if name == "" {
		return Binding{}, false
	}
	ref := name
	if registry != "" && registry != "unknown" {
		ref = registry + "/" + name
	}
	if v := getStr(pkg, "version"); v != "" {
		ref += "@" + v
	}
	b := Binding{Protocol: "mcp", Transport: "stdio", Package: ref, Runtime: camelOrSnake(pkg, "runtimeHint")}
	if tr := getObj(pkg, "transport"); tr != nil {
		b.Transport = firstOf(getStr(tr, "type"), b.Transport)
		b.URL = getStr(tr, "url")
		b.Template = isURLTemplate(b.URL)
		b.Headers = inputNames(tr, "headers")
	} else if tr := getStr(pkg, "transport"); tr != "" {
		b.Transport = tr
	}
	b.Args = append(arguments(pkg, "runtimeArguments"), arguments(pkg, "packageArguments")...)
	b.Env = inputNames(pkg, "environmentVariables")
	return b, true
}

// camelOrSnake returns the string member named k in camelCase, or in the
// snake_case spelling older server.json files use.
func camelOrSnake(obj map[string]any, k string) string {
	return firstOf(getStr(obj, k), getStr(obj, snake(k)))
}

// listOf returns the list member named k in camelCase or snake_case.
func listOf(obj map[string]any, k string) []any {
	if l, ok := obj[k].([]any); ok {
		return l
	}
	l, _ := obj[snake(k)].([]any)
	return l
}

// snake spells a camelCase name in snake_case ("runtimeHint" gives
// "runtime_hint").
func snake(k string) string {
	var b strings.Builder
	for _, r := range k {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// inputNames returns the names of the inputs (environment variables,
// headers) listed under k.
func inputNames(obj map[string]any, k string) []string {
	var out []string
	for i, it := range listOf(obj, k) {
		if i >= maxItems {
			break
		}
		if in, ok := it.(map[string]any); ok {
			out = appendUnique(out, getStr(in, "name"))
		}
	}
	return out
}

// arguments renders the arguments listed under k as a command line holds
// them: a named argument as its name then its value, a positional one as
// its value; a value the user must supply as "<hint>".
func arguments(obj map[string]any, k string) []string {
	var out []string
	for i, it := range listOf(obj, k) {
		if i >= maxItems {
			break
		}
		arg, ok := it.(map[string]any)
		if !ok {
			continue
		}
		value := firstOf(getStr(arg, "value"), getStr(arg, "default"))
		if value == "" {
			if hint := firstOf(camelOrSnake(arg, "valueHint"), getStr(arg, "name")); hint != "" {
				value = "<" + strings.Trim(hint, "<>") + ">"
			}
		}
		if getStr(arg, "type") == "named" {
			name := getStr(arg, "name")
			if name == "" || strings.ContainsAny(name, " \t") {
				// the seed's named arguments sometimes hold a whole "--flag <value>"
				out = appendNonEmpty(out, firstOf(getStr(arg, "value"), name))
				continue
			}
			out = append(out, name)
			if value != "" && value != "<"+strings.Trim(name, "<>")+">" {
				out = append(out, value)
			}
			continue
		}
		out = appendNonEmpty(out, value)
	}
	return out
}

func appendNonEmpty(list []string, s string) []string {
	if s == "" {
		return list
	}
	return append(list, s)
}

// isURLTemplate reports whether u still holds a {variable} to fill in.
func isURLTemplate(u string) bool {
	i := strings.IndexByte(u, '{')
	return i >= 0 && strings.IndexByte(u[i:], '}') > 0
}
