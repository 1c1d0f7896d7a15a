// Package contract is what the bridge and the operator both know about each
// other: the session's state names and reasons, the admin state's JSON, the
// credential headers, the bridge's environment names and defaults, and the
// build version. It depends on the standard library only, so that both
// programs can import it without importing each other.
package contract
