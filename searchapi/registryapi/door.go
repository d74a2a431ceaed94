package registryapi

import (
	"net/http"
	"strings"

	"github.com/agentfinder/agentfinder/searchapi/door"
	"github.com/agentfinder/agentfinder/searchapi/search"
)

// Door serves the MCP Registry API over an engine.
type Door struct {
	engine    *search.Engine
	publicURL string
}

// New returns the MCP Registry door over e; publicURL is this registry's
// base URL as clients reach it (a record's page link in _meta).
func New(e *search.Engine, publicURL string) *Door {
	return &Door{engine: e, publicURL: strings.TrimSuffix(publicURL, "/")}
}

// Versions are the API's path prefixes: the current one and the one older
// clients use.
var Versions = []string{"/v0.1", "/v0"}

// Routes are the door's routes under each of Versions, answering errors in
// the API's own shape ({"error": "..."}).
func (d *Door) Routes() []door.Route {
	var rs []door.Route
	for _, v := range Versions {
		rs = append(rs,
			door.Route{Pattern: "GET " + v + "/servers", Handle: d.handleList, Shape: errorShape},
			door.Route{Pattern: "GET " + v + "/servers/{path...}", Handle: d.handleServer, Shape: errorShape},
			door.Route{Pattern: "POST " + v + "/publish", Handle: notSupported, Shape: errorShape},
			door.Route{Pattern: "DELETE " + v + "/servers/{path...}", Handle: notSupported, Shape: errorShape},
		)
	}
	return rs
}

// Error is the API's error answer.
type Error struct {
	Error string `json:"error"`
}

// errorShape answers an error as the API does: {"error": "..."}.
func errorShape(ae *door.APIError, _ string) any { return Error{Error: ae.Message} }

// notSupported answers publishing and deleting: this registry
// lists what it crawls.
func notSupported(http.ResponseWriter, *http.Request) error {
	return door.NotImplemented("publishing, updating and deleting servers is not supported by this registry: it lists the servers it finds by crawling")
}

// errServerNotFound is a missing (or hidden) server or version.
var errServerNotFound = &door.APIError{Status: http.StatusNotFound, Code: door.CodeNotFound, Message: "Server not found"}

// handleServer answers GET {v}/servers/{name}/versions and
// {v}/servers/{name}/versions/{version}: the name may hold its slash
// URL-encoded ("com.example%2Fserver") or as is.
func (d *Door) handleServer(w http.ResponseWriter, r *http.Request) error {
	name, version, all, ok := splitServerPath(r.PathValue("path"))
	if !ok {
		return errServerNotFound
	}
	rec, err := d.lookup(r.Context(), name, door.AccessOf(r.Context()))
	if err != nil {
		return err
	}
	if all {
		door.WriteJSON(w, http.StatusOK, ServerList{Servers: []ServerResponse{d.response(rec)}, Metadata: ListMetadata{Count: 1}})
		return nil
	}
	if version != "latest" && version != rec.Version {
		if rec.heldVersion(version) {
			return &door.APIError{Status: http.StatusNotFound, Code: door.CodeNotFound,
				Message: "Server version not found: this registry keeps the latest version of each server (" + rec.Version + ")"}
		}
		return &door.APIError{Status: http.StatusNotFound, Code: door.CodeNotFound, Message: "Server version not found"}
	}
	door.WriteJSON(w, http.StatusOK, d.response(rec))
	return nil
}

// splitServerPath reads "{name}/versions" (all set) or
// "{name}/versions/{version}" from the path after /servers/.
func splitServerPath(p string) (name, version string, all, ok bool) {
	if n, found := strings.CutSuffix(p, "/versions"); found && n != "" {
		return n, "", true, true
	}
	i := strings.LastIndex(p, "/versions/")
	if i <= 0 || i+len("/versions/") == len(p) {
		return "", "", false, false
	}
	return p[:i], p[i+len("/versions/"):], false, true
}
