package bridge

import (
	"errors"
	"fmt"
)

// Kind classifies an application error by what the caller can do about it.
// Transports map kinds to their own terms in one table (HTTP: HTTPStatus).
type Kind int

// The kinds.
const (
	KindInternal            Kind = iota // a fault of the bridge; the caller may retry
	KindInvalid                         // the request is wrong; retrying it cannot help
	KindUnauthorized                    // a credential is missing or wrong
	KindNotFound                        // the named thing does not exist
	KindConflict                        // the request conflicts with the current state
	KindTooLarge                        // the request is over a size limit
	KindUnsupported                     // the request's content type is not accepted
	KindRateLimited                     // too many requests; retry later
	KindUnavailable                     // a dependency is down (no linked session); retry later
	KindTimeout                         // a dependency did not answer in time
	KindUpstream                        // WhatsApp refused or failed the operation
	KindInsufficientStorage             // the bridge's disk space for this is used up
	// KindForbidden: the caller is known, but this request may not do what
	// it asks (a form from another site, a wrong one-time code).
	KindForbidden
)

// Error is the bridge's one application error: a stable, machine-readable
// Code (the wire's error code, e.g. "invalid_number"), a Message for people,
// and the Kind that decides how a transport answers it.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	// Err is the cause, when there is one; it is never shown to clients.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Message + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches another *Error by kind and code, so that a sentinel such as
// ErrNotLinked matches a wrapped copy with another message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && t.Code == e.Code
}

// Errorf returns an *Error of kind with code and a formatted message.
func Errorf(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a validation error with its own code.
func Invalid(code, format string, args ...any) *Error {
	return Errorf(KindInvalid, code, format, args...)
}

// Internal wraps a fault of the bridge; code names what failed (e.g.
// "store_failed") and message says it without the cause's details.
func Internal(code, message string, cause error) *Error {
	return &Error{Kind: KindInternal, Code: code, Message: message, Err: cause}
}

// ErrorOf returns err as an *Error; any other error is an internal one whose
// details stay hidden from clients.
func ErrorOf(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: KindInternal, Code: CodeInternal, Message: "internal error", Err: err}
}

// ErrorKind returns err's kind; KindInternal for any error that is not an
// *Error.
func ErrorKind(err error) Kind { return ErrorOf(err).Kind }

// Errors that more than one part of the bridge returns or checks.
var (
	// ErrNotLinked: the operation needs a linked, connected session.
	ErrNotLinked = &Error{Kind: KindUnavailable, Code: CodeNotLinked, Message: "no linked WhatsApp session is connected"}
	// ErrLinked: the operation needs an unlinked session.
	ErrLinked = &Error{Kind: KindConflict, Code: CodeAlreadyLinked, Message: "an account is already linked; log out first"}
	// ErrUnauthorized: a credential is missing or wrong; the same answer
	// for both, so a client cannot tell which.
	ErrUnauthorized = &Error{Kind: KindUnauthorized, Code: CodeUnauthorized, Message: "missing or invalid credential"}
)

// CodeInfo is one row of the table of error codes (codes.go): a code, the
// kind it is answered with and what it means.
type CodeInfo struct {
	Code    string
	Kind    Kind
	Meaning string
}
