// Package door is what every door of the registry shares: a door is a
// package that turns one protocol's requests into searchapi/search
// queries and the engine's answers into that protocol's answers (the
// Agent Finder API, xu, HAIDIP, ADP, MCP, the site). A door exports its
// routes (Route), each with the error shape it answers in; the server
// (searchapi) mounts them with one line each and runs its middleware
// (auth, rate limits, CORS, body limits, metrics) around them. Here live
// the error model (APIError, Classify, the codes), the request context a
// door reads (AccessOf, CorrelationID), the preparation of a search for a
// request (Prepare, Search), bounded body reading and JSON
// writing. It imports the engine, the filter language and federation (to
// read Via) only; doors import it, never each other.
package door
