package bridgeclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/contract"
)

// The subscription calls send the admin token and the JSON body the bridge
// reads, decode its list, take a 404 on delete for done, and carry the
// bridge's error code and message of a refusal.
func TestSubscriptionCalls(t *testing.T) {
	var put contract.Subscription
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(AdminTokenHeader) != "token-0123456789abcdef" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.Method + " " + r.URL.EscapedPath() {
		case "GET /api/admin/subscriptions":
			_, _ = w.Write([]byte(`[{"id":"k8s-crm","target":"https://crm.example/h","events":["message.upsert"],"format":"standard","enabled":true,
				"health":{"state":"failing","pending":4,"dead_letters":2,"last_success_at":null,"last_failure_at":"2026-11-25T10:00:00Z","last_error":"HTTP 503"}}]`))
		case "PUT /api/admin/subscriptions/k8s-crm":
			_ = json.NewDecoder(r.Body).Decode(&put)
			w.WriteHeader(http.StatusOK)
		case "PUT /api/admin/subscriptions/k8s-bad":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"code":"invalid_target","message":"scheme ftp"}}`))
		case "DELETE /api/admin/subscriptions/k8s-gone":
			http.NotFound(w, r)
		case "DELETE /api/admin/subscriptions/k8s-down":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL.EscapedPath())
			w.WriteHeader(http.StatusTeapot)
		}
	}))
	defer srv.Close()
	c, ctx, token := &Client{}, context.Background(), "token-0123456789abcdef"

	list, err := c.Subscriptions(ctx, srv.URL, token)
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v, %+v", err, list)
	}
	if h := list[0].Health; list[0].ID != "k8s-crm" || h.State != "failing" || h.DeadLetters != 2 || h.LastError != "HTTP 503" || h.LastFailureAt == nil {
		t.Errorf("listed %+v", list[0])
	}

	want := contract.Subscription{ID: "k8s-crm", Target: "https://crm.example/h", Events: []string{}, Format: "standard", Secret: "whsec_a2V5", Enabled: true}
	if err := c.PutSubscription(ctx, srv.URL, token, want); err != nil {
		t.Fatal(err)
	}
	if put.Secret != "whsec_a2V5" || put.ID != "k8s-crm" || put.Events == nil {
		t.Errorf("the bridge read %+v", put)
	}

	err = c.PutSubscription(ctx, srv.URL, token, contract.Subscription{ID: "k8s-bad"})
	if !IsRefused(err) || !strings.Contains(err.Error(), "invalid_target: scheme ftp") {
		t.Errorf("refused put: %v", err)
	}
	if err := c.DeleteSubscription(ctx, srv.URL, token, "k8s-gone"); err != nil {
		t.Errorf("deleting one already gone: %v", err)
	}
	if err := c.DeleteSubscription(ctx, srv.URL, token, "k8s-down"); err == nil || IsRefused(err) {
		t.Errorf("a 503 on delete: %v, want an error that retries", err)
	}
	if _, err := c.Subscriptions(ctx, srv.URL, "wrong"); !IsUnauthorized(err) {
		t.Errorf("wrong token: %v", err)
	}
}

// A bridge's error body is untrusted: any bytes give a StatusError with at
// most what the JSON said, never a panic.
func FuzzStatusError(f *testing.F) {
	f.Add([]byte(`{"error":{"code":"invalid_target","message":"scheme ftp"}}`))
	f.Add([]byte(`{"error":"plain"}`))
	f.Add([]byte(`<html>bad gateway</html>`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		e := statusError(http.MethodPut, http.StatusBadRequest, strings.NewReader(string(body)))
		if e.Code != http.StatusBadRequest || e.Error() == "" {
			t.Fatalf("statusError: %+v", e)
		}
		if len(e.ErrorCode)+len(e.Message) > len(body) {
			t.Fatalf("decoded more than the body held: %+v", e)
		}
	})
}
