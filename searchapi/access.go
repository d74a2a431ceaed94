package searchapi

import (
	"context"
	"strings"
)

// The access rule: a record whose visibility names groups is seen only by
// callers in one of them; a record without visibility is public. The
// caller's groups come from its verified credential (auth.go), never from
// request text, and are ANDed into the Meilisearch filter of every read (filter.Access), so
// totals, facet counts, page tokens and lookups by identifier all count
// only what the caller may see.

// caller is who sent a request, as its credential says.
type caller struct {
	name   string   // the key's name or the token's subject; "" for anonymous
	groups []string // normalize.Groups form
}

type callerKey struct{}

// withCaller returns ctx carrying c (the auth middleware's doing).
func withCaller(ctx context.Context, c caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// accessOf returns the groups of ctx's caller; an anonymous caller (or a
// context no middleware marked) has none and sees public records only.
func accessOf(ctx context.Context) []string {
	c, _ := ctx.Value(callerKey{}).(caller)
	return c.groups
}

// accessKey is the part of a page token's binding that names the caller's
// access: a token continues only a listing made with the same groups.
func accessKey(groups []string) string {
	return "\x00access=" + strings.Join(groups, "\x02")
}
