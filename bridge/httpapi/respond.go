// Package api serves the bridge's HTTP API (DESIGN.md section 3): routing,
// credentials, request validation and the one JSON error shape.
package httpapi

import (
	"net/http"
)

// errorBody is the one shape of every error the API returns (httpjson
// writes it); the tests decode it.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// writeJSON answers 200 with v.
func writeJSON(w http.ResponseWriter, v any) { Write(w, http.StatusOK, v) }

func writeError(w http.ResponseWriter, status int, code, message string) {
	Error(w, status, code, message)
}
