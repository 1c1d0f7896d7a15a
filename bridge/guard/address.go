package guard

import (
	"net"
	"net/http"
)

// ClientAddress is the IP address a request came from: the host of
// r.RemoteAddr. X-Forwarded-For is ignored on purpose: any client can set
// it, and an audit record must not say what the actor chose it to say.
func ClientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr // not host:port (a test, a unix socket): keep it whole
	}
	return host
}
