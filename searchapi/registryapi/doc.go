// Package registryapi is the door of the MCP Registry API, read side
// (version 2025-12-01): GET /v0.1/servers, /v0.1/servers/{name}/versions
// and /v0.1/servers/{name}/versions/{version}, and the same under /v0/ for
// older clients, over this registry's index. IDEs and gateways that read an
// MCP registry (VS Code, GitHub Copilot, JetBrains, Azure API Center,
// ToolHive, another Agent Finder) can use Agent Finder as that registry.
//
// What it lists: every record that is an MCP server, however it was found
// (an MCP registry, a catalog entry with inline data or a fetched url, a
// server card). A record that came with a server.json is served with it as
// received; for a catalog entry a server.json is built from the record
// (ServerJSON). Each answer's _meta holds this registry's own namespace
// (MetaKey) and never another registry's block.
//
// Paging: a listing walks records in identifier order and its cursor names
// the last one listed (keyset paging), so records written or deleted during
// a walk never make it skip or repeat one that stayed; a server added
// during a walk is listed when its name sorts after the cursor, and a
// client walking again with updated_since sees it in any case. With search,
// the name matches (the name contains the text) come first, then the rest
// of the engine's ranked search, with its cut-off.
//
// Publishing and deletion are not supported: 501 in the API's error shape
// ({"error": "..."}), as the specification allows. Access is the server's:
// a caller's groups filter every read, so a hidden server is a 404 and is
// absent from lists and counts. It imports the engine and searchapi/door
// only.
package registryapi
