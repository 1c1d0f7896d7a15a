package httpkit

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
)

// ErrorBody is the one shape of every error the bridge answers over HTTP:
//
//	{"error": {"code": "invalid_number", "message": "…"}}
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail names the error with a stable, machine-readable code and a
// message for people.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// StatusOf is the HTTP status that answers err; 500 for an error that is
// not a *bridge.Error or has a kind the table lacks.
func StatusOf(err error) int {
	return bridge.ErrorKind(err).HTTPStatus()
}

// WriteError answers err in the error shape with the status of its kind.
// The code and message of a *bridge.Error are written as they are: its
// constructors keep causes out of them. A cause goes to log only (at error
// level for a 5xx, at debug for a refusal the caller caused); an error
// that is not a *bridge.Error is answered with a generic 500 that reveals
// nothing.
func WriteError(w http.ResponseWriter, log logr.Logger, err error) {
	e := bridge.ErrorOf(err)
	status := StatusOf(e)
	switch {
	case status >= http.StatusInternalServerError:
		log.Error(err, "request failed", "code", e.Code, "status", status)
	case e.Err != nil:
		// A refusal the caller caused (a 429 beyond a budget, a bad
		// request) is no error of the bridge, and a client that ignores
		// Retry-After would write its error log at its own pace (20,000
		// refused checks wrote 5.5 MB in 5 s): debug only.
		log.V(1).Info("request refused", "code", e.Code, "status", status, "cause", err.Error())
	}
	if wait, ok := bridge.RetryAfterOf(err); ok {
		// Every refusal that knows when to come back says so (a key's
		// budget, the group actions' pace, the contact checks').
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
	}
	if status == http.StatusRequestEntityTooLarge {
		w.Header().Set("Connection", "close") // the rest of the body stays unread
	}
	WriteErrorBody(w, status, e.Code, e.Message)
}

func WriteErrorBody(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, ErrorBody{Error: ErrorDetail{Code: code, Message: message}})
}

// HandlerFunc is the one handler style of the bridge's HTTP surface: it
// writes its answer when it succeeds and returns an error, having written
// nothing, when it does not.
type HandlerFunc func(http.ResponseWriter, *http.Request) error

// Handle adapts h to http.Handler, answering its errors with WriteError.
func Handle(log logr.Logger, h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			WriteError(w, log, err)
		}
	})
}

var ErrNoEndpoint = bridge.Errorf(bridge.KindNotFound, bridge.CodeNotFound, "no such endpoint")

// NewMux returns a gorilla/mux router that answers unknown paths (404) and
// wrong methods (405) in the error shape; the API and the dashboard both
// route with one.
func NewMux(log logr.Logger) *mux.Router {
	r := mux.NewRouter()
	r.NotFoundHandler = Handle(log, func(http.ResponseWriter, *http.Request) error { return ErrNoEndpoint })
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		// 405 is the router's alone: no application error has that kind.
		WriteErrorBody(w, http.StatusMethodNotAllowed, bridge.CodeMethodNotAllowed, "method not allowed on this endpoint")
	})
	return r
}

// WriteJSON answers v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	writeJSON(w, status, v)
	return nil
}

// writeJSON encodes v and writes it. An encoding failure can only be a
// programming error (every value is a plain struct), so it is not reported.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(v)
	WriteBody(w, status, buf.Bytes())
}

// WriteBody writes a JSON body already encoded (a stored idempotent
// response, or one that is stored as it is sent).
func WriteBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
