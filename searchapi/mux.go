package searchapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// Mux is an http.ServeMux that remembers the patterns registered on it, so
// the routes a server answers can be held to the OpenAPI document
// (UndocumentedRoutes). The zero value is ready to use.
type Mux struct {
	http.ServeMux
	patterns []string
}

// Handle registers h for pattern.
func (m *Mux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

// HandleFunc registers h for pattern.
func (m *Mux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// Patterns returns the patterns registered so far, in order.
func (m *Mux) Patterns() []string { return slices.Clone(m.patterns) }

// Routes are the patterns this Server's handler answers.
func (s *Server) Routes() []string { return s.mux.Patterns() }

// UndocumentedRoutes returns the route patterns ("METHOD /path") that the
// OpenAPI document served at /openapi.json does not describe. Catch-all
// patterns without a method are not routes of their own; a GET route also
// answers HEAD; {name...} and a trailing "/" (a subtree) are path
// parameters there.
func UndocumentedRoutes(patterns []string) []string {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		return patterns
	}
	var missing []string
	for _, p := range patterns {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			continue // method-less fallback
		}
		if _, ok := doc.Paths[openAPIPath(path, doc.Paths)][strings.ToLower(method)]; !ok {
			missing = append(missing, p)
		}
	}
	return missing
}

// openAPIPath turns a ServeMux path pattern into the document's path.
func openAPIPath(path string, paths map[string]map[string]json.RawMessage) string {
	path = strings.TrimSuffix(path, "{$}")
	path = strings.ReplaceAll(path, "...}", "}")
	if strings.HasSuffix(path, "/") && path != "/" {
		for p := range paths { // a subtree: the document names its parameter
			if strings.HasPrefix(p, path+"{") {
				return p
			}
		}
	}
	return path
}
