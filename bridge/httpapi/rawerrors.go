package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"strconv"

	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// JSONErrorListener wraps ln so that the answers net/http writes itself,
// before any handler runs (400 for a malformed request, 431 for headers
// too large, 501 for an unknown Transfer-Encoding), carry the error shape
// too. net/http writes each of them to the connection in one Write, as
//
//	"HTTP/1.1 " + status + fixedErrorHeaders + body
//
// then closes the connection. A handler's answer never looks like it:
// net/http writes a handler's headers sorted, Connection before
// Content-Type, and the bridge answers JSON.
func JSONErrorListener(ln net.Listener) net.Listener { return jsonErrorListener{ln} }

// fixedErrorHeaders are net/http's headers of those answers (server.go).
const fixedErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

type jsonErrorListener struct{ net.Listener }

func (l jsonErrorListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return jsonErrorConn{c}, nil
}

type jsonErrorConn struct{ net.Conn }

func (c jsonErrorConn) Write(p []byte) (int, error) {
	if out, ok := rewriteFixedError(p); ok {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// CloseWrite keeps net/http's half-close before it hangs up (after 431).
func (c jsonErrorConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// codeOfFixedError names net/http's own answers by status.
var codeOfFixedError = map[int]string{
	400: "bad_request",
	431: "headers_too_large",
	501: "unsupported_transfer_encoding",
}

// rewriteFixedError returns p in the error shape when p is one of net/http's
// own answers.
func rewriteFixedError(p []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(p, []byte("HTTP/1.1 "))
	if !ok {
		return nil, false
	}
	statusLine, body, ok := bytes.Cut(rest, []byte(fixedErrorHeaders))
	if !ok || len(statusLine) < 4 || statusLine[3] != ' ' {
		return nil, false
	}
	status, err := strconv.Atoi(string(statusLine[:3]))
	code, known := codeOfFixedError[status]
	if err != nil || !known || bytes.ContainsAny(statusLine, "\r\n") {
		return nil, false
	}
	js, _ := json.Marshal(httpkit.ErrorBody{Error: httpkit.ErrorDetail{Code: code, Message: string(body)}})
	js = append(js, '\n')
	head := fmt.Sprintf("HTTP/1.1 %s\r\nContent-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n"+
		"Connection: close\r\nContent-Length: %d\r\n\r\n", statusLine, len(js))
	return append([]byte(head), js...), true
}
