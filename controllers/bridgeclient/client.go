// Package bridgeapi is the operator's client of a bridge's admin API: the
// session state it mirrors into the MessagingBridge status, and the logout it
// sends when a MessagingBridge with logoutOnDelete is deleted.
package bridgeclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/msgbridge/msgbridge/contract"
)

// AdminTokenHeader carries the bridge's ADMIN_TOKEN.
const AdminTokenHeader = contract.AdminTokenHeader

// DefaultTimeout bounds one call: a bridge that does not answer in 5 s is
// reported unreachable rather than holding a reconcile worker.
const DefaultTimeout = 5 * time.Second

// State is the body of GET /api/admin/state, defined once with the server.
type State = contract.AdminState

// Client calls bridges. The zero value uses http.DefaultTransport and
// DefaultTimeout.
type Client struct {
	// HTTP sends the requests; nil means a client on http.DefaultTransport.
	HTTP *http.Client
	// Timeout bounds each call; 0 means DefaultTimeout.
	Timeout time.Duration
}

// State reads the session state of the bridge at baseURL.
func (c *Client) State(ctx context.Context, baseURL, adminToken string) (*State, error) {
	var s State
	if err := c.call(ctx, http.MethodGet, baseURL+"/api/admin/state", adminToken, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Logout unlinks the bridge's WhatsApp account (POST /session/logout).
func (c *Client) Logout(ctx context.Context, baseURL, adminToken string) error {
	return c.call(ctx, http.MethodPost, baseURL+"/session/logout", adminToken, nil)
}

// call sends one request and decodes a 2xx JSON answer into out (when
// non-nil). Errors never quote the token.
func (c *Client) call(ctx context.Context, method, url, adminToken string, out any) error {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if method == http.MethodPost {
		body = bytes.NewReader([]byte("{}"))
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	req.Header.Set(AdminTokenHeader, adminToken)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	httpClient := c.HTTP
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	// A bridge answers in a few hundred bytes; a larger body is not one.
	limited := io.LimitReader(resp.Body, 64<<10)
	if resp.StatusCode/100 != 2 {
		return &StatusError{Method: method, Code: resp.StatusCode}
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, limited)
		return nil
	}
	if err := json.NewDecoder(limited).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, req.URL.Path, err)
	}
	return nil
}

// StatusError is a bridge's non-2xx answer.
type StatusError struct {
	Method string
	Code   int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("bridge answered %s with HTTP %d", e.Method, e.Code)
}

// IsUnauthorized reports whether the bridge rejected the admin token: the
// operator holds a different token from the pod's, typically during a
// rotation before the pod restarted.
func IsUnauthorized(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusUnauthorized
}
