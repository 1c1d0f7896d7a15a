// Package guard is the bridge's defence against callers without the
// credential: credentials compared in constant time, a per-address limit on
// failed credentials (with its audit records), and bounds on what a caller
// can hold of the server while it sends a body. It knows HTTP requests but
// answers nothing itself: the caller writes the errors it returns.
package guard
