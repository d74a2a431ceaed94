package door

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

type ctxKey int

const correlationKey ctxKey = 0

// CorrelationID returns the request's correlation id (WithCorrelationID).
func CorrelationID(ctx context.Context) string {
	id, _ := ctx.Value(correlationKey).(string)
	return id
}

// WithCorrelationID returns ctx carrying the request's correlation id (the
// server's doing, for every request).
func WithCorrelationID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, correlationKey, id)
}

// The access rule: a record whose visibility names groups is seen only by
// callers in one of them; a record without visibility is public. The
// caller's groups come from its verified credential (the server's auth
// middleware, WithCaller), never from request text; every door sets them
// as the engine's search.Query.Access through Prepare (or Search), or
// passes them to Agent, List, Explore, which ANDs them into the Meilisearch filter of every read
// (filter.Access), so totals, facet counts, page tokens and lookups by
// identifier all count only what the caller may see.

// Caller is who sent a request, as its verified credential says.
type Caller struct {
	Name   string   // the key's name or the token's subject; "" for anonymous
	Groups []string // normalize.Groups form
}

type callerKey struct{}

// WithCaller returns ctx carrying c (the auth middleware's doing).
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// AccessOf returns the groups of ctx's caller, what every door sets as
// search.Query.Access; an anonymous caller (or a context no middleware
// marked) has none and sees public records only.
func AccessOf(ctx context.Context) []string {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c.Groups
}

// NewCorrelationID returns a random request id.
func NewCorrelationID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
