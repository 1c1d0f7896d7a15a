package bridgeclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestState(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/api/admin/state" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get(AdminTokenHeader) != "token-0123456789abcdef" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"state":"connected","connected":true,"account":"4917012345678","push_name":"Sales",
			"last_heartbeat":"2026-11-21T10:00:00Z","connected_since":"2026-11-21T09:00:00Z","reason":"","version":"1.0.0"}`))
	}))
	defer srv.Close()
	c := &Client{}

	s, err := c.State(context.Background(), srv.URL, "token-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	if s.State != "connected" || !s.Connected || s.Account != "4917012345678" || s.PushName != "Sales" ||
		s.LastHeartbeat == nil || !s.LastHeartbeat.Equal(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("state %+v", s)
	}

	_, err = c.State(context.Background(), srv.URL, "wrong")
	if !IsUnauthorized(err) {
		t.Errorf("wrong token: %v", err)
	}
}

func TestStateNullHeartbeat(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"state":"unpaired","connected":false,"last_heartbeat":null}`))
	}))
	defer srv.Close()
	s, err := (&Client{}).State(context.Background(), srv.URL, "t")
	if err != nil || s.LastHeartbeat != nil || s.State != "unpaired" {
		t.Errorf("state %+v, %v", s, err)
	}
}

// A bridge that hangs is given up on after the timeout.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	_, err := (&Client{Timeout: 100 * time.Millisecond}).State(context.Background(), srv.URL, "t")
	if err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("after %s: %v", time.Since(start), err)
	}
}

func TestLogout(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Method + " " + r.URL.Path + " " + r.Header.Get(AdminTokenHeader)
		_, _ = w.Write([]byte(`{"status":"success","message":"logged out"}`))
	}))
	defer srv.Close()
	if err := (&Client{}).Logout(context.Background(), srv.URL, "tok"); err != nil {
		t.Fatal(err)
	}
	if got != "POST /session/logout tok" {
		t.Errorf("request %q", got)
	}
}
