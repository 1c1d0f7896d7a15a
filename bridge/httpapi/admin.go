// Package admin serves the bridge's admin endpoints (DESIGN.md section 3,
// "Admin"): delivery analytics, purging daily log files, and reading and
// deleting audit records. Every input is parsed strictly into typed values
// (a calendar date, a level, an ISO week, a number) before anything is
// touched, and file names are built from those values only.
//
// The admin-token check is the router's; these handlers assume it passed.
// Actions that change something are recorded in the audit log with their
// outcome and the client's address.
package httpapi

import (
	"errors"
	"net/http"

	"github.com/go-logr/logr"
)

// writeFailure answers a handler's error: a queryError is a 400 with its
// own code; anything else is logged and answered with a 500 that tells the
// client nothing of the bridge's internals.
func writeFailure(w http.ResponseWriter, log logr.Logger, what string, err error) {
	if bad, ok := errors.AsType[*queryError](err); ok {
		Error(w, http.StatusBadRequest, bad.code, bad.message)
		return
	}
	log.Error(err, what)
	Error(w, http.StatusInternalServerError, "internal_error", what+" failed; see the bridge's log")
}
