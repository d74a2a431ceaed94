package federation

import "context"

type credentialKey struct{}

// WithCredential returns ctx carrying the caller's verified Authorization
// header value; auto mode sends it to the upstreams configured with
// ForwardAuth and to no other registry. Set it only after the credential
// has been verified.
func WithCredential(ctx context.Context, authorization string) context.Context {
	return context.WithValue(ctx, credentialKey{}, authorization)
}

// credentialOf returns the credential WithCredential put in ctx, or "".
func credentialOf(ctx context.Context) string {
	s, _ := ctx.Value(credentialKey{}).(string)
	return s
}
