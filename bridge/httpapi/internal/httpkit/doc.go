// Package httpkit is what the HTTP API's audiences share (httpapi's
// messaging, admin, public and dashboard packages): the one JSON error
// shape, mapped from bridge.Error in one table (errors.go); strict JSON and
// query decoding; the credential check every door uses (Credentials); the
// audit middleware; and Common, the clock, log, credentials and audit log
// the router hands each audience.
package httpkit
