package door

import "net/http"

// Handler serves one request; an error it returns is answered in its
// route's ErrorShape (after Classify), unless it already wrote an answer.
type Handler func(w http.ResponseWriter, r *http.Request) error

// Route is one route of a door.
type Route struct {
	// Pattern is the http.ServeMux pattern ("POST /discover").
	Pattern string
	// Handle serves the route behind the API middleware: the caller
	// authenticated, the body read (bounded, under a deadline) and a
	// request slot taken before it runs.
	Handle Handler
	// Shape is how the route answers errors; nil means AgentFinderError.
	Shape ErrorShape
	// Page marks a page for people: the caller authenticated and a slot
	// taken as for the API, but no body read, and errors answered as
	// pages.
	Page bool
	// Bare marks a route served without the middleware (static assets).
	Bare bool
}
