package cloudapi

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
)

// Graph's error codes the door answers with
// (developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes).
const (
	CodeInvalidParameter = 100    // a bad or missing parameter, an unknown object
	CodeAccessToken      = 190    // a missing or wrong access token
	CodePermission       = 10     // the token may not do this (a key's scope or chats)
	CodeRateLimit        = 130429 // too many requests
	CodeServiceDown      = 131016 // the service is unavailable (no linked session)
	CodeNotOnWhatsApp    = 131026 // message undeliverable: the number is not on WhatsApp
	CodeGeneric          = 131000 // something went wrong
	CodeMediaUpload      = 131053 // the media could not be uploaded
	CodeMediaDownload    = 131052 // a linked media could not be downloaded
	CodeParamMissing     = 131008 // a required parameter is missing
	CodeParamInvalid     = 131009 // a parameter's value is not valid
	CodeUnsupportedType  = 131051 // the message type is not supported
	CodeTemplateMissing  = 132001 // the template does not exist in the language
	CodeTemplateParams   = 132000 // the template's parameters do not match
	// subcodeNoObject is Graph's "object with ID does not exist".
	subcodeNoObject = 33
)

// GraphError is one error in Graph's shape. BridgeCode (an extension) is
// the bridge's own code of the fault, so that its documentation applies.
type GraphError struct {
	Message      string     `json:"message"`
	Type         string     `json:"type"`
	Code         int        `json:"code"`
	ErrorSubcode int        `json:"error_subcode,omitempty"`
	ErrorData    *errorData `json:"error_data,omitempty"`
	FBTraceID    string     `json:"fbtrace_id"`
	BridgeCode   string     `json:"msgbridge_code,omitempty"`
	status       int
	retryAfter   string
}

type errorData struct {
	MessagingProduct string `json:"messaging_product"`
	Details          string `json:"details"`
}

func (e *GraphError) Error() string { return e.Message }

// graphErr is a Graph error with status and the detail people read.
func graphErr(status, code int, message, details, bridgeCode string) *GraphError {
	return &GraphError{Message: message, Type: "OAuthException", Code: code, status: status, BridgeCode: bridgeCode,
		ErrorData: &errorData{MessagingProduct: "whatsapp", Details: details}}
}

// invalidParam is Graph's (#100) for a bad parameter.
func invalidParam(bridgeCode, details string) *GraphError {
	return graphErr(http.StatusBadRequest, CodeInvalidParameter, "(#100) Invalid parameter", details, bridgeCode)
}

// missingParam is Graph's (#131008) for a required parameter left out.
func missingParam(bridgeCode, details string) *GraphError {
	return graphErr(http.StatusBadRequest, CodeParamMissing, "(#131008) Required parameter is missing", details, bridgeCode)
}

// invalidValue is Graph's (#131009) for a parameter's value out of its
// bounds.
func invalidValue(bridgeCode, details string) *GraphError {
	return graphErr(http.StatusBadRequest, CodeParamInvalid, "(#131009) Parameter value is not valid", details, bridgeCode)
}

// unsupportedType is Graph's (#131051) for a kind of message the bridge
// does not send.
func unsupportedType(bridgeCode, details string) *GraphError {
	return graphErr(http.StatusBadRequest, CodeUnsupportedType, "(#131051) Unsupported message type", details, bridgeCode)
}

// unknownPath is the answer to a path or method the door does not serve:
// 404 in Graph's shape, naming the request's method.
func unknownPath(r *http.Request) *GraphError {
	e := graphErr(http.StatusNotFound, CodeInvalidParameter,
		"Unsupported "+methodWord+" request. The path "+r.URL.Path+" is not served by this bridge",
		"see docs/user/cloud-api-compatibility.md: the Graph calls the door answers", "no_endpoint")
	e.Type, e.ErrorSubcode = typeGraphMethod, subcodeNoObject
	return e
}

// methodWord stands for the request's method in a message; writeGraphError
// puts it in ("get", "post", "delete"), as Graph names it.
const methodWord = "{method}"

// typeGraphMethod is Graph's error type of a request for an object or an
// edge that does not exist.
const typeGraphMethod = "GraphMethodException"

// noObject is Graph's answer to an id that names nothing.
func noObject(id string) *GraphError {
	e := graphErr(http.StatusBadRequest, CodeInvalidParameter,
		"Unsupported "+methodWord+" request. Object with ID '"+id+"' does not exist, cannot be loaded due to missing permissions, or does not support this operation",
		"no such object on this bridge", "not_found")
	e.Type, e.ErrorSubcode = typeGraphMethod, subcodeNoObject
	return e
}

// bridgeStatusToGraph maps a bridge error, by the status the bridge's own
// API answers it with (Kind.HTTPStatus) and its code, to Graph's status and
// code.
func bridgeStatusToGraph(status int, code string) (int, int, string) {
	switch {
	case code == bridge.ErrNotOnWhatsApp.Code:
		return http.StatusBadRequest, CodeNotOnWhatsApp, "Message Undeliverable"
	case code == bridge.CodeTooManyFailures:
		// An auth error, not a throughput limit (130429 makes clients
		// slow down and retry the same wrong token).
		return http.StatusTooManyRequests, CodeAccessToken,
			"(#190) Too many wrong access tokens from this address - wait for Retry-After seconds before trying again"
	case code == bridge.CodeScopeMissing || code == bridge.CodeChatNotAllowed:
		return http.StatusForbidden, CodePermission, "(#10) Application does not have permission for this action"
	case status == http.StatusUnauthorized:
		return http.StatusUnauthorized, CodeAccessToken, "Invalid OAuth access token - Cannot parse access token"
	case status == http.StatusTooManyRequests:
		return http.StatusTooManyRequests, CodeRateLimit, "(#130429) Rate limit hit"
	case status == http.StatusNotFound:
		return http.StatusBadRequest, CodeInvalidParameter, "(#100) Invalid parameter"
	case status == http.StatusRequestEntityTooLarge || status == http.StatusUnsupportedMediaType:
		return http.StatusBadRequest, CodeMediaUpload, "(#131053) Media upload error"
	case status == http.StatusServiceUnavailable:
		return http.StatusServiceUnavailable, CodeServiceDown, "(#131016) Service unavailable"
	case status >= 400 && status < 500:
		return http.StatusBadRequest, CodeInvalidParameter, "(#100) Invalid parameter"
	}
	return http.StatusInternalServerError, CodeGeneric, "(#131000) Something went wrong"
}

// fromBridge is an error of the door or of a use case as a Graph error: a
// bridge.Error by its kind and code, an id that names nothing with Graph's
// subcode for it, a paced refusal with its Retry-After.
func fromBridge(err error) *GraphError {
	var g *GraphError
	if errors.As(err, &g) {
		return g
	}
	e := bridge.ErrorOf(err)
	status := e.Kind.HTTPStatus()
	st, code, msg := bridgeStatusToGraph(status, e.Code)
	g = graphErr(st, code, msg, e.Message, e.Code)
	if status == http.StatusNotFound {
		g.ErrorSubcode = subcodeNoObject
	}
	if wait, ok := bridge.RetryAfterOf(err); ok {
		g.retryAfter = strconv.Itoa(int((wait + time.Second - 1) / time.Second))
	}
	return g
}

// sessionFailed is an error of the session (a read mark) as the bridge's
// own API answers it: WhatsApp's refusal or silence, unless the session
// named the fault itself (not linked).
func sessionFailed(err error) error {
	if _, ok := errors.AsType[*bridge.Error](err); ok {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &bridge.Error{Kind: bridge.KindTimeout, Code: bridge.CodeTimeout, Message: "WhatsApp did not answer in time", Err: err}
	}
	return &bridge.Error{Kind: bridge.KindUpstream, Code: bridge.CodeWhatsAppError,
		Message: "WhatsApp refused or failed the request: " + err.Error(), Err: err}
}

// writeGraphError answers err, an error of request r, in Graph's shape.
func writeGraphError(w http.ResponseWriter, r *http.Request, log logr.Logger, err error) {
	g := *fromBridge(err) // a copy: the message is the request's own
	g.Message = strings.ReplaceAll(g.Message, methodWord, strings.ToLower(r.Method))
	if g.status >= http.StatusInternalServerError {
		log.Error(err, "cloud request failed", "code", g.BridgeCode)
	}
	g.FBTraceID = traceID()
	if g.retryAfter != "" {
		w.Header().Set("Retry-After", g.retryAfter)
	}
	if g.Code == CodeAccessToken {
		w.Header().Set("WWW-Authenticate", `OAuth "Facebook Platform" "invalid_token" "Invalid OAuth access token"`)
	}
	writeJSON(w, g.status, struct {
		Error *GraphError `json:"error"`
	}{&g})
}

// traceID is a fresh fbtrace_id: it ties a client's report to nothing on
// the bridge, but clients log it.
func traceID() string {
	var b [9]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // plain structs: cannot fail
}
