// Package httpjson writes the bridge's JSON responses, including the one
// error shape of DESIGN.md section 3:
//
//	{"error": {"code": "invalid_number", "message": "…"}}
//
// It is shared by every package that serves HTTP (api, admin), so that a
// client sees one error shape whichever package answered.
package httpapi

import (
	"encoding/json"
	"net/http"
)

// ErrorBody is the shape of every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail names the error with a stable, machine-readable code and a
// message for people.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Write writes v as JSON with the given status. An encoding failure can only
// be a programming error (every value is a plain struct), so it is not
// reported to a client that has already received its status line.
func Write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Error writes the error shape.
func Error(w http.ResponseWriter, status int, code, message string) {
	Write(w, status, ErrorBody{Error: ErrorDetail{Code: code, Message: message}})
}
