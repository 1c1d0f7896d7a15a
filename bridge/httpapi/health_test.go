package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// fixedSession reports one state; the health tests check how /health
// presents it, and the session itself is tested against the simulator.
type fixedSession struct {
	Session
	state bridge.SessionState
}

func (f fixedSession) Status() bridge.SessionStatus { return bridge.SessionStatus{State: f.state} }

func newTestServer(t *testing.T, d Deps) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(NewRouter(d))
	t.Cleanup(srv.Close)
	return srv
}

// getJSON decodes the body of GET url into into and returns the status and
// the headers.
func getJSON(t *testing.T, url string, into any) (int, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatalf("GET %s: body is not JSON: %v", url, err)
	}
	return resp.StatusCode, resp.Header
}

func TestHealth(t *testing.T) {
	started := time.Date(2026, 11, 21, 9, 59, 0, 0, time.UTC)
	now := time.Date(2026, 11, 21, 11, 0, 0, 123_456_789, time.FixedZone("CET", 3600))
	srv := newTestServer(t, Deps{
		Version: "1.2.3",
		Started: started,
		Now:     func() time.Time { return now },
		Session: fixedSession{state: contract.StateDisconnected},
	})
	var got map[string]any
	status, header := getJSON(t, srv.URL+"/health", &got)
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	if ct := header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("content type %q", ct)
	}
	want := map[string]any{
		"status":    "online",
		"whatsapp":  "disconnected",
		"uptime":    60.123,
		"version":   "1.2.3",
		"timestamp": "2026-11-21T10:00:00.123Z",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("unexpected fields: %v", got)
	}
}

func TestUnknownRouteAndMethod(t *testing.T) {
	srv := newTestServer(t, Deps{Started: time.Now(), Session: fixedSession{state: contract.StateUnpaired}})
	var body errorBody
	if status, _ := getJSON(t, srv.URL+"/nope", &body); status != http.StatusNotFound || body.Error.Code != "not_found" {
		t.Errorf("unknown route: %d %+v", status, body)
	}
	resp, err := http.Post(srv.URL+"/health", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body = errorBody{}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusMethodNotAllowed || body.Error.Code != "method_not_allowed" || body.Error.Message == "" {
		t.Errorf("wrong method: %d %+v", resp.StatusCode, body)
	}
}
