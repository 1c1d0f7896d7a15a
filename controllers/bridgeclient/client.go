// Package bridgeclient is the operator's client of a bridge's admin API: the
// session state it mirrors into the MessagingBridge status, the event
// subscriptions it renders from the spec, and the logout it sends when a
// MessagingBridge with logoutOnDelete is deleted.
package bridgeclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
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
	if err := c.call(ctx, http.MethodGet, baseURL+contract.AdminStatePath, adminToken, nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Logout unlinks the bridge's WhatsApp account (POST /session/logout).
func (c *Client) Logout(ctx context.Context, baseURL, adminToken string) error {
	return c.call(ctx, http.MethodPost, baseURL+"/session/logout", adminToken, struct{}{}, nil)
}

// Subscriptions lists the bridge's event subscriptions with their health.
func (c *Client) Subscriptions(ctx context.Context, baseURL, adminToken string) ([]contract.SubscriptionView, error) {
	var out []contract.SubscriptionView
	if err := c.call(ctx, http.MethodGet, baseURL+contract.AdminSubscriptionsPath, adminToken, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// PutSubscription creates or replaces the subscription s.ID.
func (c *Client) PutSubscription(ctx context.Context, baseURL, adminToken string, s contract.Subscription) error {
	return c.call(ctx, http.MethodPut, subscriptionURL(baseURL, s.ID), adminToken, s, nil)
}

// DeleteSubscription deletes the subscription id; one already gone is no
// error.
func (c *Client) DeleteSubscription(ctx context.Context, baseURL, adminToken, id string) error {
	err := c.call(ctx, http.MethodDelete, subscriptionURL(baseURL, id), adminToken, nil, nil)
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return nil
	}
	return err
}

func subscriptionURL(baseURL, id string) string {
	return baseURL + contract.AdminSubscriptionsPath + "/" + url.PathEscape(id)
}

// call sends one request, with in as its JSON body when non-nil, and decodes
// a 2xx JSON answer into out (when non-nil). Errors never quote the token.
func (c *Client) call(ctx context.Context, method, url, adminToken string, in, out any) error {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
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
	// A bridge answers in a few kilobytes; a larger body is not one.
	limited := io.LimitReader(resp.Body, 256<<10)
	if resp.StatusCode/100 != 2 {
		return statusError(method, resp.StatusCode, limited)
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
	// ErrorCode and Message are the bridge's JSON error, when it sent one:
	// what a refused subscription reports in the resource's status.
	ErrorCode, Message string
}

func (e *StatusError) Error() string {
	if e.ErrorCode == "" {
		return fmt.Sprintf("bridge answered %s with HTTP %d", e.Method, e.Code)
	}
	return fmt.Sprintf("bridge answered %s with HTTP %d %s: %s", e.Method, e.Code, e.ErrorCode, e.Message)
}

// statusError reads the bridge's JSON error, {"error":{"code","message"}},
// from a non-2xx answer; a body of another shape leaves them empty.
func statusError(method string, code int, body io.Reader) *StatusError {
	var answer struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.NewDecoder(io.LimitReader(body, 4<<10)).Decode(&answer)
	return &StatusError{Method: method, Code: code, ErrorCode: answer.Error.Code, Message: answer.Error.Message}
}

// IsRefused reports an answer that the same request would meet again: the
// bridge found it invalid (400, 422).
func IsRefused(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && (se.Code == http.StatusBadRequest || se.Code == http.StatusUnprocessableEntity)
}

// IsUnauthorized reports whether the bridge rejected the admin token: the
// operator holds a different token from the pod's, typically during a
// rotation before the pod restarted.
func IsUnauthorized(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusUnauthorized
}
