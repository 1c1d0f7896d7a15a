// Package api serves the bridge's HTTP API (DESIGN.md section 3): routing,
// credentials, request validation and the one JSON error shape.
package api

import (
	"encoding/json"
	"net/http"
)

// errorBody is the one shape of every error the API returns:
//
//	{"error": {"code": "invalid_number", "message": "…"}}
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeJSON writes v with the given status. An encoding failure can only be a
// programming error (every value is a plain struct), so it is not reported to
// a client that has already received its status line.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes the API's error shape.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, errorBody{Error: errorDetail{Code: code, Message: message}})
}
