package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
)

// requestIDHeader carries a tools/call's JSON-RPC id from the HTTP body to
// the tool, which the SDK shows the request's headers but not its id. A
// client's own header of this name is dropped first.
const requestIDHeader = "X-Msgbridge-Mcp-Request-Id"

// maxPeekBytes bounds the body read to find the id; a larger body (a
// message to send is at most a few KiB of JSON) is passed on unread and its
// call gets no derived key.
const maxPeekBytes = 1 << 20

// withRequestID sets requestIDHeader on a POST whose body is one
// tools/call request.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(requestIDHeader)
		if r.Method == http.MethodPost && r.Body != nil {
			head, err := io.ReadAll(io.LimitReader(r.Body, maxPeekBytes+1))
			r.Body = readCloser{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
			if err == nil && len(head) <= maxPeekBytes {
				if id, ok := toolCallID(head); ok {
					r.Header.Set(requestIDHeader, id)
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

type readCloser struct {
	io.Reader
	io.Closer
}

// toolCallID is the id of body when it is one JSON-RPC tools/call request,
// as its canonical JSON (a number or a quoted string), so 7 and "7" differ
// as JSON-RPC says they do.
func toolCallID(body []byte) (string, bool) {
	var msg struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.Method != "tools/call" || len(msg.ID) == 0 {
		return "", false
	}
	var id any
	if err := json.Unmarshal(msg.ID, &id); err != nil {
		return "", false
	}
	switch id.(type) {
	case string, float64:
	default:
		return "", false // null, or not an id at all
	}
	canonical, err := json.Marshal(id)
	if err != nil {
		return "", false
	}
	return string(canonical), true
}

// callKey is the idempotency key of a tool call: the assistant's own
// idempotency_key when it gave one, else one derived from the MCP session
// and the JSON-RPC request id, so a client that retries the same request
// (same session, same id) never sends twice. Empty when neither is known.
func callKey(own, session, requestID string) string {
	if own != "" {
		return "mcp:" + own
	}
	if session == "" || requestID == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(session + "\x00" + requestID))
	return "mcp-call:" + hex.EncodeToString(sum[:16])
}
