package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/fakes"
)

// While WhatsApp restricts sending, /health's whatsapp field says
// restricted with the end, and the admin state carries reason restricted
// and restricted_until for the operator.
func TestRestrictionShown(t *testing.T) {
	until := time.Date(2026, 11, 21, 12, 30, 0, 0, time.UTC)
	srv := newTestServer(t, testDeps{Session: &fakes.Session{Link: bridge.SessionStatus{
		State: contract.StateConnected, Reason: contract.ReasonRestricted, Account: "4915100000002", RestrictedUntil: until,
	}}})
	var health map[string]any
	if status, _ := getJSON(t, srv.URL+"/health", &health); status != http.StatusOK ||
		health["whatsapp"] != "restricted" || health["restricted_until"] != "2026-11-21T12:30:00Z" {
		t.Errorf("health %d %v", status, health)
	}
	status, body := call(t, "GET", srv.URL+contract.AdminStatePath, nil, adminHeader)
	var st contract.AdminState
	if err := json.Unmarshal([]byte(body), &st); err != nil || status != http.StatusOK {
		t.Fatalf("%d %s: %v", status, body, err)
	}
	if st.Reason != contract.ReasonRestricted || st.RestrictedUntil == nil || !st.RestrictedUntil.Equal(until) || !st.Connected {
		t.Errorf("admin state %s", body)
	}
}

// Not restricted: /health keeps the state and has no restricted_until.
func TestHealthWithoutRestriction(t *testing.T) {
	srv := newTestServer(t, testDeps{Session: &fakes.Session{Link: bridge.SessionStatus{State: contract.StateConnected}}})
	var health map[string]any
	getJSON(t, srv.URL+"/health", &health)
	if _, has := health["restricted_until"]; has || health["whatsapp"] != "connected" {
		t.Errorf("health %v", health)
	}
}
