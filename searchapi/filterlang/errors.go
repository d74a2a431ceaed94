package filterlang

import "fmt"

// Error is what is wrong with a filter or orderBy parameter, in a message
// safe to show the client. Unsupported is true when it names a field this
// registry cannot filter on (400 unsupported_filter); otherwise the
// expression is malformed or uses an operator its field does not take (400
// invalid_request).
type Error struct {
	Unsupported bool
	Message     string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// invalid returns a malformed-expression Error.
func invalid(format string, args ...any) *Error {
	return &Error{Message: fmt.Sprintf(format, args...)}
}

// unsupported returns an Error naming a field that cannot be filtered on.
func unsupported(format string, args ...any) *Error {
	return &Error{Unsupported: true, Message: fmt.Sprintf(format, args...)}
}
