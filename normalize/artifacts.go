package normalize

import "encoding/json"

// Enrich maps an artifact document fetched from rec.URL (an A2A agent card,
// MCP server.json, ADP agent card, ...) into rec: skills, examples, bindings,
// tool names. contentType is the response's Content-Type (may be empty). The
// record's catalog fields win over the artifact's. It reports problems with
// the artifact and never clears what the catalog said.
func Enrich(rec *Record, contentType string, body []byte) []Problem {
	return nil
}

// mapArtifact maps an artifact document of canonical type t into rec.
func mapArtifact(rec *Record, t string, doc json.RawMessage) []Problem {
	return nil
}
